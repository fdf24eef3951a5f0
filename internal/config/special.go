package config

import (
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// This file holds the parameters with a format of their own (Redis's
// createSpecialConfig): save, client-output-buffer-limit, bind,
// notify-keyspace-events, latency-tracking-info-percentiles,
// oom-score-adj-values, replicaof and dir. Each set function is a port of the
// matching setConfigXxxOption in config.c, error texts included.

// SavePoint is one "save <seconds> <changes>" rule: snapshot after Seconds if
// at least Changes writes happened.
type SavePoint struct {
	Seconds int64
	Changes int32 // an int in Redis: larger values wrap as they do there
}

const errSave = "Invalid save parameters"

var saveSpecial = &special{
	def: func() *value { return saveValue(nil) },
	set: func(cur *value, args []string, ctx *setCtx) (*value, bool, string) {
		// A single "" stands for no arguments and clears the rules, even in a
		// file after other save lines: save "" disables snapshots.
		cleared := false
		if len(args) == 1 && cstr(args[0]) == "" {
			args, cleared = nil, true
		}
		if len(args)%2 != 0 {
			return nil, false, errSave
		}
		pts := make([]SavePoint, 0, len(args)/2)
		for j := 0; j < len(args); j += 2 {
			secs, ok1 := saveNumber(args[j], 1)
			changes, ok2 := saveNumber(args[j+1], 0)
			if !ok1 || !ok2 {
				return nil, false, errSave
			}
			pts = append(pts, SavePoint{Seconds: secs, Changes: int32(changes)}) // C int
		}
		// CONFIG SET replaces the rules. A file's save lines accumulate,
		// the first one replacing the defaults.
		if ctx.loading && *ctx.saveLoaded && !cleared {
			pts = append(append([]SavePoint(nil), cur.x.([]SavePoint)...), pts...)
		}
		if ctx.loading {
			*ctx.saveLoaded = true
		}
		return saveValue(pts), true, ""
	},
	rewrite: func(name string, v *value, st *rewriteState) {
		pts := v.x.([]SavePoint)
		if len(pts) == 0 {
			// An explicit save "" keeps Redis's default rules from coming back.
			st.rewriteLine(name, `save ""`, true)
		}
		for _, p := range pts {
			st.rewriteLine(name, "save "+strconv.FormatInt(p.Seconds, 10)+" "+
				strconv.FormatInt(int64(p.Changes), 10), true)
		}
		st.markProcessed(name)
	},
}

// saveNumber is setConfigSaveOption's check of one word: strtoll must consume
// it all and the result must be at least min.
func saveNumber(s string, min int64) (int64, bool) {
	s = cstr(s)
	v, end, _ := cStrtoll(s, 10)
	return v, end == len(s) && v >= min
}

func saveValue(pts []SavePoint) *value {
	var b strings.Builder
	for i, p := range pts {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(strconv.FormatInt(p.Seconds, 10))
		b.WriteByte(' ')
		b.WriteString(strconv.FormatInt(int64(p.Changes), 10))
	}
	return &value{s: b.String(), x: pts}
}

// OBufLimit is one client class's client-output-buffer-limit.
type OBufLimit struct {
	Hard, Soft  uint64 // bytes; 0 means no limit
	SoftSeconds int64
}

// obufClasses are Redis's client classes for output buffer limits, in its
// order and with the names CONFIG GET prints.
var obufClasses = [3]string{"normal", "slave", "pubsub"}

var obufDefaults = [3]OBufLimit{
	{0, 0, 0},
	{256 << 20, 64 << 20, 60},
	{32 << 20, 8 << 20, 60},
}

var obufSpecial = &special{
	def: func() *value { return obufValue(obufDefaults) },
	set: func(cur *value, args []string, _ *setCtx) (*value, bool, string) {
		if len(args)%4 != 0 {
			return nil, false, "Wrong number of arguments in buffer limit configuration."
		}
		limits := cur.x.([3]OBufLimit)
		for j := 0; j < len(args); j += 4 {
			class := obufClass(cstr(args[j]))
			if class < 0 {
				return nil, false, "Invalid client class specified in buffer limit configuration."
			}
			hard, ok1 := memtoull(args[j+1])
			soft, ok2 := memtoull(args[j+2])
			secsArg := cstr(args[j+3])
			secs64, end, _ := cStrtoll(secsArg, 10)
			secs := int64(int32(secs64)) // stored through a C int
			if !ok1 || !ok2 || secs < 0 || end != len(secsArg) {
				return nil, false, "Error in hard, soft or soft_seconds setting in buffer limit configuration."
			}
			limits[class] = OBufLimit{Hard: hard, Soft: soft, SoftSeconds: secs}
		}
		return obufValue(limits), true, ""
	},
	rewrite: func(name string, v *value, st *rewriteState) {
		limits := v.x.([3]OBufLimit)
		for j, l := range limits {
			class := obufClasses[j]
			if class == "slave" {
				class = "replica"
			}
			st.rewriteLine(name, name+" "+class+" "+formatMemory(l.Hard)+" "+
				formatMemory(l.Soft)+" "+strconv.FormatInt(l.SoftSeconds, 10), l != obufDefaults[j])
		}
	},
}

// obufClass is getClientTypeByName restricted to the classes that have
// limits: -1 for an unknown name and for master.
func obufClass(name string) int {
	switch {
	case equalFoldASCII(name, "normal"):
		return 0
	case equalFoldASCII(name, "slave"), equalFoldASCII(name, "replica"):
		return 1
	case equalFoldASCII(name, "pubsub"):
		return 2
	}
	return -1
}

func obufValue(limits [3]OBufLimit) *value {
	parts := make([]string, 0, 3)
	for j, l := range limits {
		parts = append(parts, obufClasses[j]+" "+strconv.FormatUint(l.Hard, 10)+" "+
			strconv.FormatUint(l.Soft, 10)+" "+strconv.FormatInt(l.SoftSeconds, 10))
	}
	return &value{s: strings.Join(parts, " "), x: limits}
}

// maxBindAddrs is CONFIG_BINDADDR_MAX.
const maxBindAddrs = 16

// bindSpecial is bind. HotKV's default is 127.0.0.1 (Redis's is "* -::*").
func bindSpecial(def []string) *special {
	return &special{
		def: func() *value { return bindValue(def) },
		set: func(_ *value, args []string, _ *setCtx) (*value, bool, string) {
			if len(args) > maxBindAddrs {
				return nil, false, "Too many bind addresses specified."
			}
			if len(args) == 1 && cstr(args[0]) == "" {
				args = nil
			}
			addrs := make([]string, len(args))
			for i, a := range args {
				addrs[i] = cstr(a)
			}
			return bindValue(addrs), true, ""
		},
		rewrite: func(name string, v *value, st *rewriteState) {
			addrs := v.x.([]string)
			if slices.Equal(addrs, def) {
				st.markProcessed(name) // the default is left out of the file
				return
			}
			list := strings.Join(addrs, " ")
			if len(addrs) == 0 {
				list = `""`
			}
			st.rewriteLine(name, name+" "+list, true)
		},
	}
}

func bindValue(addrs []string) *value {
	return &value{s: strings.Join(addrs, " "), x: addrs}
}

var notifySpecial = &special{
	def: func() *value { return &value{x: NotifyFlags(0)} },
	set: func(_ *value, args []string, _ *setCtx) (*value, bool, string) {
		if len(args) != 1 {
			return nil, false, "wrong number of arguments"
		}
		f, ok := ParseNotifyFlags(args[0])
		if !ok {
			return nil, false, errNotifyClass
		}
		return &value{s: f.String(), x: f}, true, ""
	},
	rewrite: func(name string, v *value, st *rewriteState) {
		st.rewriteLine(name, name+" "+repr(v.s), v.x.(NotifyFlags) != 0)
	},
}

var percentilesSpecial = &special{
	def: func() *value { return percentilesValue([]float64{50, 99, 99.9}) },
	set: func(_ *value, args []string, _ *setCtx) (*value, bool, string) {
		if len(args) == 1 && args[0] == "" {
			args = nil
		}
		ps := make([]float64, len(args))
		for i, a := range args {
			f, ok := string2d(a)
			if !ok {
				return nil, false, "Invalid latency-tracking-info-percentiles parameters"
			}
			if f > 100 || f < 0 {
				return nil, false, "latency-tracking-info-percentiles parameters should sit between [0.0,100.0]"
			}
			ps[i] = f
		}
		return percentilesValue(ps), true, ""
	},
	rewrite: func(name string, v *value, st *rewriteState) {
		line := name + " " + v.s
		if v.s == "" {
			line = name + ` ""`
		}
		st.rewriteLine(name, line, true)
	},
}

func percentilesValue(ps []float64) *value {
	parts := make([]string, len(ps))
	for i, p := range ps {
		parts[i] = formatPercentile(p)
	}
	return &value{s: strings.Join(parts, " "), x: ps}
}

var oomDefaults = [3]int64{0, 200, 800}

var oomValuesSpecial = &special{
	def: func() *value { return oomValue(oomDefaults) },
	set: func(cur *value, args []string, _ *setCtx) (*value, bool, string) {
		if len(args) != 3 {
			return nil, false, "wrong number of arguments"
		}
		var vals [3]int64
		for i, a := range args {
			a = cstr(a)
			v, end, _ := cStrtoll(a, 10)
			if end != len(a) || v < -2000 || v > 2000 {
				return nil, false, "Invalid oom-score-adj-values, elements must be between -2000 and 2000."
			}
			vals[i] = v
		}
		return oomValue(vals), vals != cur.x.([3]int64), ""
	},
	rewrite: func(name string, v *value, st *rewriteState) {
		st.rewriteLine(name, name+" "+v.s, v.x.([3]int64) != oomDefaults)
	},
}

func oomValue(v [3]int64) *value {
	return &value{s: strconv.FormatInt(v[0], 10) + " " + strconv.FormatInt(v[1], 10) + " " +
		strconv.FormatInt(v[2], 10), x: v}
}

// replicaOf is replicaof's value; Host is "" when this is a master.
type replicaOf struct {
	Host string
	Port int64
}

var replicaofSpecial = &special{
	def: func() *value { return &value{x: replicaOf{}} },
	set: func(_ *value, args []string, _ *setCtx) (*value, bool, string) {
		if len(args) != 2 {
			return nil, false, "wrong number of arguments"
		}
		host, port := cstr(args[0]), cstr(args[1])
		if equalFoldASCII(host, "no") && equalFoldASCII(port, "one") {
			return &value{x: replicaOf{}}, true, ""
		}
		p, end, overflow := cStrtoll(port, 10)
		if overflow || p < 0 || p > 65535 || end != len(port) {
			return nil, false, "Invalid master port"
		}
		return &value{s: host + " " + strconv.FormatInt(p, 10), x: replicaOf{host, p}}, true, ""
	},
	rewrite: func(name string, v *value, st *rewriteState) {
		if v.s == "" {
			st.markProcessed(name) // a master has no replicaof line
			return
		}
		st.rewriteLine(name, name+" "+v.s, true)
	},
}

// dirSpecial is dir. Redis chdir()s to the directory and CONFIG GET prints
// getcwd(); HotKV does not change its working directory (the server may do it
// from a hook) but checks the directory the same way and stores its absolute
// path. A relative path is taken from the current dir, as chdir would.
var dirSpecial = &special{
	def: func() *value {
		wd, err := os.Getwd()
		if err != nil {
			wd = "" // getcwd failing makes Redis print ""
		}
		return &value{s: wd}
	},
	set: func(cur *value, args []string, _ *setCtx) (*value, bool, string) {
		if len(args) != 1 {
			return nil, false, "wrong number of arguments"
		}
		dir := cstr(args[0])
		if !filepath.IsAbs(dir) && cur.s != "" {
			dir = filepath.Join(cur.s, dir)
		}
		fi, err := os.Stat(dir)
		if err != nil {
			return nil, false, strerror(err)
		}
		if !fi.IsDir() {
			return nil, false, "Not a directory"
		}
		abs, err := filepath.Abs(dir)
		if err != nil {
			return nil, false, strerror(err)
		}
		if real, err := filepath.EvalSymlinks(abs); err == nil {
			abs = real // getcwd reports the physical directory
		}
		return &value{s: abs}, true, ""
	},
	rewrite: func(name string, v *value, st *rewriteState) {
		if v.s == "" {
			st.markProcessed(name)
			return
		}
		st.rewriteLine(name, name+" "+repr(v.s), true)
	},
}
