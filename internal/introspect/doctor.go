package introspect

import (
	"fmt"
	"strings"
)

// DoctorInput is the server state LATENCY DOCTOR's advice depends on.
type DoctorInput struct {
	NowSec        int64
	ThresholdMs   int64   // latency-monitor-threshold
	SlowerThanUs  int64   // slowlog-log-slower-than
	SlowlogMaxLen int64   // slowlog-max-len
	ForkRateGBs   float64 // INFO's latest fork rate (Redis's stat_fork_rate)
	FsyncAlways   bool    // appendfsync always
	Hz            int64
	AnonHugePages int64 // bytes of transparent huge pages the process uses
}

// Doctor is LATENCY DOCTOR's report (Redis's createLatencyReport), word for
// word.
func (l *Latency) Doctor(in DoctorInput) string {
	series := l.All()
	var r strings.Builder
	if len(series) == 0 && in.ThresholdMs == 0 {
		r.WriteString("I'm sorry, Dave, I can't do that. Latency monitoring is disabled in this Redis instance. You may use \"CONFIG SET latency-monitor-threshold <milliseconds>.\" in order to enable it. If we weren't in a deep space mission I'd suggest to take a look at https://redis.io/docs/latest/operate/oss_and_stack/management/optimization/latency-monitor.\n")
		return r.String()
	}
	var betterVM, slowlogEnabled, slowlogTuning, slowlogInspect, diskContention, scheduler,
		dataWriteback, noAppendfsync, localDisk, ssd, writeLoadInfo, hz, largeObjects,
		massEviction, relaxFsync, disableTHP bool
	advices := 0
	for i, s := range series {
		if i == 0 {
			r.WriteString("Dave, I have observed latency spikes in this Redis instance. You don't mind talking about it, do you Dave?\n\n")
		}
		st := s.analyze(in.NowSec)
		per := 0.0
		if st.samples > 0 {
			per = float64(st.period) / float64(st.samples)
		}
		fmt.Fprintf(&r, "%d. %s: %d latency spikes (average %dms, mean deviation %dms, period %.2f sec). Worst all time event %dms.",
			i+1, s.Event, st.samples, st.avg, st.mad, per, s.Max)
		ev := strings.ToLower(s.Event)
		switch ev {
		case "fork":
			quality := "excellent"
			switch {
			case in.ForkRateGBs < 10:
				quality, betterVM = "terrible", true
				advices++
			case in.ForkRateGBs < 25:
				quality, betterVM = "poor", true
				advices++
			case in.ForkRateGBs < 100:
				quality = "good"
			}
			fmt.Fprintf(&r, " Fork rate is %.2f GB/sec (%s).", in.ForkRateGBs, quality)
		case "command":
			if in.SlowerThanUs < 0 || in.SlowlogMaxLen == 0 {
				slowlogEnabled = true
				advices++
			} else if in.SlowerThanUs/1000 > in.ThresholdMs {
				slowlogTuning = true
				advices++
			}
			slowlogInspect, largeObjects = true, true
			advices += 2
		case "fast-command":
			scheduler = true
			advices++
		case "aof-write-pending-fsync":
			localDisk, diskContention, ssd, dataWriteback = true, true, true, true
			advices += 4
		case "aof-write-active-child":
			noAppendfsync, dataWriteback, ssd = true, true, true
			advices += 3
		case "aof-write-alone":
			localDisk, dataWriteback, ssd = true, true, true
			advices += 3
		case "aof-fsync-always":
			relaxFsync = true
			advices++
		case "aof-fstat", "rdb-unlink-temp-file":
			diskContention, localDisk = true, true
			advices += 2
		case "aof-rewrite-diff-write", "aof-rename":
			writeLoadInfo, dataWriteback, ssd, localDisk = true, true, true, true
			advices += 4
		case "expire-cycle":
			hz, largeObjects = true, true
			advices += 2
		case "eviction-del":
			largeObjects = true
			advices++
		case "eviction-cycle":
			massEviction = true
			advices++
		}
		r.WriteByte('\n')
	}
	if in.AnonHugePages > 0 {
		disableTHP = true
		advices++
	}
	switch {
	case len(series) == 0 && advices == 0:
		r.WriteString("Dave, no latency spike was observed during the lifetime of this Redis instance, not in the slightest bit. I honestly think you ought to sit down calmly, take a stress pill, and think things over.\n")
		return r.String()
	case len(series) > 0 && advices == 0:
		r.WriteString("\nWhile there are latency events logged, I'm not able to suggest any easy fix. Please use the Redis community to get some help, providing this report in your help request.\n")
		return r.String()
	}
	r.WriteString("\nI have a few advices for you:\n\n")
	if betterVM {
		r.WriteString("- If you are using a virtual machine, consider upgrading it with a faster one using a hypervisior that provides less latency during fork() calls. Xen is known to have poor fork() performance. Even in the context of the same VM provider, certain kinds of instances can execute fork faster than others.\n")
	}
	if slowlogEnabled {
		fmt.Fprintf(&r, "- There are latency issues with potentially slow commands you are using. Try to enable the Slow Log Redis feature using the command 'CONFIG SET slowlog-log-slower-than %d'. If the Slow log is disabled Redis is not able to log slow commands execution for you.\n", uint64(in.ThresholdMs)*1000)
	}
	if slowlogTuning {
		fmt.Fprintf(&r, "- Your current Slow Log configuration only logs events that are slower than your configured latency monitor threshold. Please use 'CONFIG SET slowlog-log-slower-than %d'.\n", uint64(in.ThresholdMs)*1000)
	}
	if slowlogInspect {
		r.WriteString("- Check your Slow Log to understand what are the commands you are running which are too slow to execute. Please check https://redis.io/commands/slowlog for more information.\n")
	}
	if scheduler {
		r.WriteString("- The system is slow to execute Redis code paths not containing system calls. This usually means the system does not provide Redis CPU time to run for long periods. You should try to:\n" +
			"  1) Lower the system load.\n" +
			"  2) Use a computer / VM just for Redis if you are running other software in the same system.\n" +
			"  3) Check if you have a \"noisy neighbour\" problem.\n" +
			"  4) Check with 'redis-cli --intrinsic-latency 100' what is the intrinsic latency in your system.\n" +
			"  5) Check if the problem is allocator-related by recompiling Redis with MALLOC=libc, if you are using Jemalloc. However this may create fragmentation problems.\n")
	}
	if localDisk {
		r.WriteString("- It is strongly advised to use local disks for persistence, especially if you are using AOF. Remote disks provided by platform-as-a-service providers are known to be slow.\n")
	}
	if ssd {
		r.WriteString("- SSD disks are able to reduce fsync latency, and total time needed for snapshotting and AOF log rewriting (resulting in smaller memory usage). With extremely high write load SSD disks can be a good option. However Redis should perform reasonably with high load using normal disks. Use this advice as a last resort.\n")
	}
	if dataWriteback {
		r.WriteString("- Mounting ext3/4 filesystems with data=writeback can provide a performance boost compared to data=ordered, however this mode of operation provides less guarantees, and sometimes it can happen that after a hard crash the AOF file will have a half-written command at the end and will require to be repaired before Redis restarts.\n")
	}
	if diskContention {
		r.WriteString("- Try to lower the disk contention. This is often caused by other disk intensive processes running in the same computer (including other Redis instances).\n")
	}
	if noAppendfsync {
		r.WriteString("- Assuming from the point of view of data safety this is viable in your environment, you could try to enable the 'no-appendfsync-on-rewrite' option, so that fsync will not be performed while there is a child rewriting the AOF file or producing an RDB file (the moment where there is high disk contention).\n")
	}
	if relaxFsync && in.FsyncAlways {
		r.WriteString("- Your fsync policy is set to 'always'. It is very hard to get good performances with such a setup, if possible try to relax the fsync policy to 'onesec'.\n")
	}
	if writeLoadInfo {
		r.WriteString("- Latency during the AOF atomic rename operation or when the final difference is flushed to the AOF file at the end of the rewrite, sometimes is caused by very high write load, causing the AOF buffer to get very large. If possible try to send less commands to accomplish the same work, or use Lua scripts to group multiple operations into a single EVALSHA call.\n")
	}
	if hz && in.Hz < 100 {
		r.WriteString("- In order to make the Redis keys expiring process more incremental, try to set the 'hz' configuration parameter to 100 using 'CONFIG SET hz 100'.\n")
	}
	if largeObjects {
		r.WriteString("- Deleting, expiring or evicting (because of maxmemory policy) large objects is a blocking operation. If you have very large objects that are often deleted, expired, or evicted, try to fragment those objects into multiple smaller objects.\n")
	}
	if massEviction {
		r.WriteString("- Sudden changes to the 'maxmemory' setting via 'CONFIG SET', or allocation of large objects via sets or sorted sets intersections, STORE option of SORT, Redis Cluster large keys migrations (RESTORE command), may create sudden memory pressure forcing the server to block trying to evict keys. \n")
	}
	if disableTHP {
		r.WriteString("- I detected a non zero amount of anonymous huge pages used by your process. This creates very serious latency events in different conditions, especially when Redis is persisting on disk. To disable THP support use the command 'echo never > /sys/kernel/mm/transparent_hugepage/enabled', make sure to also add it into /etc/rc.local so that the command will be executed again after a reboot. Note that even if you have already disabled THP, you still need to restart the Redis process to get rid of the huge pages already created.\n")
	}
	return r.String()
}
