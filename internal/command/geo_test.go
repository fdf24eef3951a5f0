package command

import (
	"math"
	"strconv"
	"testing"

	"github.com/hotkv/hotkv/internal/resp"
)

// Distances are printed as Redis 7.2+'s fixedpoint_d2string(…, 4) does: the
// product d*10000 rounded half to even (llrint), not printf("%.4f") of d.
func TestGeoAppendDistance(t *testing.T) {
	cases := []struct {
		d    float64
		want string
	}{
		// util.c's test_fixedpoint_d2string
		{0, "0.0000"},
		{math.Copysign(0, -1), "0.0000"},
		{0.0001, "0.0001"},
		{6.0642951598391699e-05, "0.0001"},
		{0.01, "0.0100"},
		{-0.01, "-0.0100"},
		{10.01, "10.0100"},
		// where "%.4f" (Redis 7.0) rounds the other way: d*10000 is exactly a half
		{0.00005, "0.0000"},     // %.4f: 0.0001
		{0.12345, "0.1234"},     // %.4f: 0.1235
		{123.45675, "123.4568"}, // %.4f: 123.4567
		{1e-9, "0.0000"},
		{-1e-9, "0.0000"},
		{166274.15156960032, "166274.1516"},
		// llrint of NaN is LLONG_MIN on x86-64
		{math.NaN(), "-922337203685477.5808"},
	}
	for _, c := range cases {
		if got := string(geoAppendDistance(nil, c.d)); got != c.want {
			t.Errorf("geoAppendDistance(%v) = %q, want %q", c.d, got, c.want)
		}
	}
}

// Coordinates are Redis 8's addReplyDouble: the shortest round-trip text
// (GEOPOS Sicily Palermo Catania on redis-server 8.6.3).
func TestGeoCoordText(t *testing.T) {
	cases := []struct {
		f    float64
		want string
	}{
		{13.361389338970184, "13.361389338970184"},
		{38.115556395496299, "38.1155563954963"},
		{15.087267458438873, "15.087267458438873"},
		{37.50266842333162, "37.50266842333162"},
		{180, "180"},
		{0.5, "0.5"},
	}
	for _, c := range cases {
		var w resp.Writer
		geoReplyCoord(&Ctx{W: &w}, c.f)
		if got, want := string(w.Buf), "$"+strconv.Itoa(len(c.want))+"\r\n"+c.want+"\r\n"; got != want {
			t.Errorf("coordinate %v = %q, want %q", c.f, got, want)
		}
	}
}

// The scores, positions and distances Redis computes (geo.tcl's "Check geoset
// values", the GEOADD/GEOPOS/GEODIST examples of redis.io).
func TestGeohashEncodeDecode(t *testing.T) {
	scores := []struct {
		lon, lat float64
		score    uint64
	}{
		{-74.0131604, 40.7126674, 1791873972053020},
		{-73.9903085, 40.7362513, 1791875485187452},
		{-73.9733487, 40.7648057, 1791875761332224},
		{-73.9564142, 40.7480973, 1791875796750882},
		{-73.9454966, 40.747533, 1791875804419201},
		{-73.9375699, 40.7498929, 1791875830079666},
		{-73.7858139, 40.6428986, 1791895905559723},
		{13.361389, 38.115556, 3479099956230698},
		{15.087269, 37.502669, 3479447370796909},
	}
	for _, c := range scores {
		h, ok := geohashEncodeWGS84(c.lon, c.lat, geoStepMax)
		if !ok || geohashAlign52Bits(h) != c.score {
			t.Errorf("encode(%v, %v) = %d %v, want %d", c.lon, c.lat, geohashAlign52Bits(h), ok, c.score)
		}
	}
	xy, ok := decodeGeohash(3479099956230698)
	if !ok || xy[0] != 13.361389338970184 || xy[1] != 38.1155563954963 {
		t.Errorf("decode Palermo = %v %v", xy, ok)
	}
	p, _ := decodeGeohash(3479099956230698)
	q, _ := decodeGeohash(3479447370796909)
	if got := string(geoAppendDistance(nil, geohashGetDistance(p[0], p[1], q[0], q[1]))); got != "166274.1516" {
		t.Errorf("Palermo-Catania = %s m", got)
	}
	if _, ok := geohashEncodeWGS84(0, 85.06, geoStepMax); ok {
		t.Error("latitude 85.06 encoded")
	}
}

// geoScoreBits is GCC's x86-64 double -> uint64_t conversion.
func TestGeoScoreBits(t *testing.T) {
	cases := []struct {
		s    float64
		want uint64
	}{
		{0, 0},
		{0.9, 0},
		{4503599627370496, 1 << 52},
		{-1, math.MaxUint64},
		{-1.5, math.MaxUint64},
		{9223372036854775808.0, 1 << 63},
		{1e19, 10000000000000000000},
		{1e30, 0},
		{math.Inf(1), 0},
		{math.Inf(-1), 1 << 63},
		{-1e30, 1 << 63},
	}
	for _, c := range cases {
		if got := geoScoreBits(c.s); got != c.want {
			t.Errorf("geoScoreBits(%v) = %d, want %d", c.s, got, c.want)
		}
	}
}

// The search steps and the cells kept for a radius query (geohash_helper.c).
func TestGeohashAreas(t *testing.T) {
	if s := geohashEstimateStepsByRadius(0, 0); s != 26 {
		t.Errorf("steps(0) = %d", s)
	}
	if s := geohashEstimateStepsByRadius(math.Inf(1), 0); s != 1 {
		t.Errorf("steps(inf) = %d", s)
	}
	if a, b := geohashEstimateStepsByRadius(100000, 0), geohashEstimateStepsByRadius(100000, 81); a != b+2 {
		t.Errorf("steps near the pole: %d vs %d", b, a)
	}
	// a 200 km circle around (15, 37): every kept cell lies within the box
	s := geoShape{xy: [2]float64{15, 37}, conversion: 1000, radius: 200}
	r := geohashCalculateAreasByShape(&s)
	if r.hash.step == 0 || r.hash.isZero() {
		t.Fatalf("no center cell: %+v", r)
	}
	n := r.neighbors
	for _, cell := range []ghBits{n.north, n.south, n.east, n.west, n.northEast, n.northWest, n.southEast, n.southWest} {
		if cell.isZero() {
			continue
		}
		if cell.step != r.hash.step {
			t.Errorf("neighbor step %d, center %d", cell.step, r.hash.step)
		}
	}
}
