#!/usr/bin/env python3
"""bench/stallcorr.py - do a probe's long waits coincide with a kernel thread's bursts?

On a small VM a kernel thread can take a vCPU for tens of milliseconds (on
the machine of BENCHMARKS.md, DAMON's kdamond.0: 8-55 ms every 0.54 s), and
any thread it displaces (an event loop) stalls meanwhile. This samples the
thread's run time (/proc/PID/schedstat, every millisecond) and then matches
the waits bench/snapprobe printed with SNAPPROBE_TRACE=1 against its bursts.

  bench/stallcorr.py sample PID SECONDS > bursts.txt     (start, end, cpu ms)
  SNAPPROBE_TRACE=1 snapprobe ... > trace.txt             (at the same time)
  bench/stallcorr.py corr bursts.txt trace.txt

corr prints how many waits over 5 and 10 ms overlap a burst (5 ms either
side), the waits that do not, and the share of the time the bursts cover.
"""
import re
import sys
import time


def sample(pid, seconds):
    f = open(f"/proc/{pid}/schedstat")

    def ran():
        f.seek(0)
        return int(f.read().split()[0])  # ns on a processor

    runs, prev, t0 = [], ran(), time.time()
    while time.time() - t0 < seconds:
        time.sleep(0.001)
        v = ran()
        if v != prev:
            runs.append((int(time.time() * 1000), (v - prev) / 1e6))
            prev = v
    bursts = []  # runs less than 20 ms apart are one burst
    for t, ms in runs:
        if bursts and t - bursts[-1][1] < 20:
            bursts[-1][1] = t
            bursts[-1][2] += ms
        else:
            bursts.append([t, t, ms])
    for s, e, ms in bursts:
        print(s, e, round(ms, 2))


def corr(bursts_file, trace_file):
    bursts = [tuple(map(float, l.split())) for l in open(bursts_file) if l.strip()]
    waits = []
    for l in open(trace_file):
        m = re.search(r"unix ms (\d+)\) waited ([\d.]+)(ms|µs)", l)
        if m:
            w = float(m.group(2)) / (1000 if m.group(3) == "µs" else 1)
            waits.append((int(m.group(1)), w))

    def near(t, w):
        return any(b[0] - 5 <= t + w and t <= b[1] + 5 for b in bursts)

    for lim in (5, 10):
        ws = [x for x in waits if x[1] > lim]
        print(f"waits over {lim} ms: {len(ws)}, during a burst: {sum(1 for t, w in ws if near(t, w))}")
    print("waits over 5 ms outside the bursts:", [(t, w) for t, w in waits if w > 5 and not near(t, w)])
    if bursts:
        span = bursts[-1][1] - bursts[0][0]
        cpu = sorted(b[2] for b in bursts)
        cover = sum(b[1] - b[0] + 10 for b in bursts) / span if span else 0
        print(f"bursts {len(bursts)}, cpu ms median {cpu[len(cpu) // 2]:.1f} max {cpu[-1]:.1f}, "
              f"share of the time within 5 ms of one {cover:.3f}")


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "sample":
        sample(int(sys.argv[2]), float(sys.argv[3]))
    elif len(sys.argv) == 4 and sys.argv[1] == "corr":
        corr(sys.argv[2], sys.argv[3])
    else:
        sys.exit(__doc__)
