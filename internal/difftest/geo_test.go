package difftest

import (
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"

	"github.com/hotkv/hotkv/internal/hotkvtest"
)

// TestDiffGeoRandom sends a seeded random stream of GEO commands to both servers:
// points clustered around a few centers (Sicily, New York, the antimeridian, near
// both poles), exact duplicates (equal distances), now and then an invalid
// coordinate; radius and box searches in every unit, from members and from
// coordinates, with random WITH..., ASC/DESC, COUNT [ANY], STORE and STOREDIST;
// many members on three points (equal distances cut by COUNT);
// both sorted-set encodings (zset-max-listpack-entries 128 and 3), RESP2 and RESP3.
//
// Replies are compared byte for byte, except where Redis 7.0 is not the
// reference (shared/reference/redis8-vs-redis7.md): 7.0 prints the doubles of a
// STOREDIST result with 17 significant digits (8.x: shortest round trip), so those
// are compared as numbers; and 8.x prints distances with fixedpoint_d2string
// (llrint(d*10000)) where 7.0 used "%.4f", which round a product that falls
// exactly on a half differently, so a distance may differ by 0.0001. HotKV's
// sin, cos and asin are correctly rounded where glibc's are off by an ulp for
// about 0.1% of arguments, so a STOREDIST score may differ in its last bit. Both
// kinds of difference are counted and must stay rare.
func TestDiffGeoRandom(t *testing.T) {
	p := newPair(t)
	p.same("FLUSHALL")
	rng := rand.New(rand.NewPCG(3210, 17))
	centers := [][2]float64{{15, 37}, {-73.98, 40.75}, {179.9, 10}, {-179.9, -10}, {0, 84.9}, {0, -84.9}, {2.35, 48.85}}
	spreads := []float64{0.001, 0.05, 0.5, 3, 30}
	num := func(f float64) string {
		switch rng.IntN(3) {
		case 0:
			return strconv.FormatFloat(f, 'f', 6, 64)
		case 1:
			return strconv.FormatFloat(f, 'g', -1, 64)
		}
		return strconv.FormatFloat(f, 'f', 2, 64)
	}
	var last [2]float64
	point := func() (string, string) {
		if rng.IntN(8) == 0 {
			return num(last[0]), num(last[1]) // an exact duplicate
		}
		if rng.IntN(60) == 0 {
			return num(rng.Float64()*10 - 5), "85.1" // out of range
		}
		c := centers[rng.IntN(len(centers))]
		s := spreads[rng.IntN(len(spreads))]
		lon := c[0] + (rng.Float64()*2-1)*s
		lat := c[1] + (rng.Float64()*2-1)*s
		if lon > 180 {
			lon -= 360
		} else if lon < -180 {
			lon += 360
		}
		lat = math.Max(math.Min(lat, 85.05), -85.05)
		last = [2]float64{lon, lat}
		return num(lon), num(lat)
	}
	keys := []string{"g1", "g2", "str", "nokey"}
	key := func() string {
		if rng.IntN(10) == 0 {
			return keys[2+rng.IntN(2)]
		}
		return keys[rng.IntN(2)]
	}
	member := func() string {
		if rng.IntN(50) == 0 {
			return "m" + strings.Repeat("L", 70) // beyond zset-max-listpack-value
		}
		return "m" + strconv.Itoa(rng.IntN(40))
	}
	units := []struct {
		name string
		perM float64
	}{{"m", 1}, {"km", 1000}, {"ft", 0.3048}, {"mi", 1609.34}, {"KM", 1000}, {"Mi", 1609.34}}
	// dist returns a distance of about km kilometers in a random unit
	dist := func() (string, string) {
		u := units[rng.IntN(len(units))]
		km := []float64{0, 0.05, 1, 10, 100, 300, 1000, 5000, 25000}[rng.IntN(9)]
		km *= 0.5 + rng.Float64()
		if rng.IntN(40) == 0 {
			return "-1", u.name
		}
		return num(km * 1000 / u.perM), u.name
	}
	options := func(store bool) []string {
		var opts [][]string
		if !store {
			for _, o := range []string{"WITHDIST", "WITHHASH", "WITHCOORD"} {
				if rng.IntN(3) == 0 {
					opts = append(opts, []string{o})
				}
			}
		}
		switch rng.IntN(4) {
		case 0:
			opts = append(opts, []string{"ASC"})
		case 1:
			opts = append(opts, []string{"DESC"})
		}
		if rng.IntN(3) == 0 {
			c := []string{"COUNT", strconv.Itoa(1 + rng.IntN(12))}
			if rng.IntN(3) == 0 {
				c = append(c, "ANY")
			}
			opts = append(opts, c)
		}
		if rng.IntN(60) == 0 {
			opts = append(opts, []string{[]string{"ANY", "COUNT", "BOGUS"}[rng.IntN(3)]})
		}
		rng.Shuffle(len(opts), func(i, j int) { opts[i], opts[j] = opts[j], opts[i] })
		var out []string
		for _, o := range opts {
			out = append(out, o...)
		}
		return out
	}
	var gens []func() []string
	geoadd := func() []string {
		a := []string{"GEOADD", key()}
		for _, o := range []string{"NX", "XX", "CH"} {
			if rng.IntN(8) == 0 {
				a = append(a, o)
			}
		}
		for n := 1 + rng.IntN(6); n > 0; n-- {
			lon, lat := point()
			a = append(a, lon, lat, member())
		}
		return a
	}
	gens = []func() []string{
		geoadd, geoadd, geoadd,
		func() []string { return []string{"GEOPOS", key(), member(), member()} },
		func() []string { return []string{"GEOHASH", key(), member(), member(), member()} },
		func() []string {
			a := []string{"GEODIST", key(), member(), member()}
			if rng.IntN(2) == 0 {
				a = append(a, units[rng.IntN(len(units))].name)
			}
			return a
		},
		func() []string {
			cmd := []string{"GEORADIUS", "GEORADIUS_RO"}[rng.IntN(2)]
			lon, lat := point()
			r, u := dist()
			a := append([]string{cmd, key(), lon, lat, r, u}, options(false)...)
			return a
		},
		func() []string {
			cmd := []string{"GEORADIUSBYMEMBER", "GEORADIUSBYMEMBER_RO"}[rng.IntN(2)]
			r, u := dist()
			return append([]string{cmd, key(), member(), r, u}, options(false)...)
		},
		func() []string {
			cmd := []string{"GEORADIUS", "GEORADIUSBYMEMBER"}[rng.IntN(2)]
			a := []string{cmd, key()}
			if cmd == "GEORADIUS" {
				lon, lat := point()
				a = append(a, lon, lat)
			} else {
				a = append(a, member())
			}
			r, u := dist()
			a = append(append(a, r, u), options(true)...)
			return append(a, []string{"STORE", "STOREDIST"}[rng.IntN(2)], "dst")
		},
		func() []string {
			store := rng.IntN(3) == 0
			a := []string{"GEOSEARCH", key()}
			if store {
				a = []string{"GEOSEARCHSTORE", "dst", key()}
			}
			if rng.IntN(2) == 0 {
				a = append(a, "FROMMEMBER", member())
			} else {
				lon, lat := point()
				a = append(a, "FROMLONLAT", lon, lat)
			}
			if rng.IntN(2) == 0 {
				r, u := dist()
				a = append(a, "BYRADIUS", r, u)
			} else {
				w, u := dist()
				h, _ := dist()
				a = append(a, "BYBOX", w, h, u)
			}
			a = append(a, options(store)...)
			if store && rng.IntN(2) == 0 {
				a = append(a, "STOREDIST")
			}
			return a
		},
		// "gt": many members on three points, so that COUNT cuts through equal
		// distances (Redis's partial quicksort decides their order)
		func() []string {
			spot := [][2]string{{"10", "10"}, {"10.01", "10"}, {"10", "10.02"}}[rng.IntN(3)]
			return []string{"GEOADD", "gt", spot[0], spot[1], member()}
		},
		func() []string {
			a := []string{"GEORADIUS", "gt", "10", "10", "10", "km", "COUNT", strconv.Itoa(1 + rng.IntN(20))}
			if rng.IntN(2) == 0 {
				a = append(a, "DESC")
			}
			if rng.IntN(2) == 0 {
				a = append(a, "WITHDIST")
			}
			return a
		},
		func() []string { return []string{"ZREM", key(), member(), member()} },
		func() []string { return []string{"ZCARD", key()} },
		func() []string { return []string{"DEL", keys[rng.IntN(2)]} },
		func() []string { return []string{"SET", "str", "x"} },
		func() []string { return []string{"OBJECT", "ENCODING", "dst"} },
		func() []string {
			return []string{"CONFIG", "SET", "zset-max-listpack-entries", []string{"128", "3"}[rng.IntN(2)]}
		},
	}
	distDiffs := 0
	proto := 2
	for i := 0; i < 4000 && !t.Failed(); i++ {
		if rng.IntN(100) == 0 {
			proto = 5 - proto
			p.do("HELLO", strconv.Itoa(proto)) // replies differ (version, id)
			continue
		}
		args := gens[rng.IntN(len(gens))]()
		hk, rd := p.do(args...)
		if hk != rd {
			n, ok := geoSameNumbers(hk, rd)
			if !ok {
				t.Errorf("%s\n hotkv %s\n redis %s", strings.Join(args, " "), hotkvtest.Escape(hk), hotkvtest.Escape(rd))
			}
			distDiffs += n
		}
		// the destination of a STORE, its scores compared as numbers
		if strings.HasSuffix(args[0], "STORE") || slicesContain(args, "STORE") || slicesContain(args, "STOREDIST") {
			hk, rd := p.do("ZRANGE", "dst", "0", "-1", "WITHSCORES")
			if n, ok := geoSameNumbers(hk, rd); !ok {
				t.Errorf("ZRANGE dst after %s\n hotkv %s\n redis %s", strings.Join(args, " "), hotkvtest.Escape(hk), hotkvtest.Escape(rd))
			} else {
				distDiffs += n
			}
		}
	}
	if distDiffs > 10 {
		t.Errorf("%d distances differ in their last digit or bit (should be rare)", distDiffs)
	}
	t.Logf("distances that differ in their last digit or bit: %d", distDiffs)
	p.do("HELLO", "2")
	p.same("CONFIG", "SET", "zset-max-listpack-entries", "128")
}

func slicesContain(a []string, s string) bool {
	for _, x := range a {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// geoSameNumbers compares two replies item by item, ignoring bulk lengths:
// items must be equal, or both numbers that are equal as doubles, or both
// four-decimal distances 0.0001 apart, or doubles at most 2 ulps apart (those
// two counted in n).
func geoSameNumbers(a, b string) (n int, ok bool) {
	ta, tb := geoItems(a), geoItems(b)
	if len(ta) != len(tb) {
		return 0, false
	}
	for i := range ta {
		if ta[i] == tb[i] {
			continue
		}
		if ta[i][0] != tb[i][0] {
			return 0, false
		}
		x, err1 := strconv.ParseFloat(ta[i][1:], 64)
		y, err2 := strconv.ParseFloat(tb[i][1:], 64)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		if x == y {
			continue
		}
		if geoFourDecimals(ta[i][1:]) && geoFourDecimals(tb[i][1:]) && math.Abs(x-y) < 0.00011 {
			n++
			continue
		}
		if d := int64(math.Float64bits(x)) - int64(math.Float64bits(y)); x*y > 0 && d >= -2 && d <= 2 {
			n++ // the last bits of a STOREDIST distance
			continue
		}
		return 0, false
	}
	return n, true
}

func geoFourDecimals(s string) bool {
	i := strings.IndexByte(s, '.')
	return i >= 0 && len(s)-i-1 == 4
}

// geoItems flattens a reply into its items: "$value" for bulk strings, the line
// for anything else.
func geoItems(r string) []string {
	lines := strings.Split(r, "\r\n")
	var out []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "$") && l != "$-1" && i+1 < len(lines) {
			out = append(out, "$"+lines[i+1])
			i++
			continue
		}
		out = append(out, l)
	}
	return out
}
