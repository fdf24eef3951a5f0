package command

import "math"

// Geohash arithmetic for the GEO commands: a port of Redis's geohash.c and
// geohash_helper.c (Redis 8.4), step for step, so that scores, search boxes and
// distances come out bit for bit as Redis computes them. Products that Redis
// rounds one at a time are wrapped in float64() so that no Go compiler fuses
// them into a multiply-add; sin, cos and asin are correctly rounded
// (geomath.go), as the C library's almost always are.

// Coordinate limits (EPSG:900913 / EPSG:3785 / OSGEO:41001) and precision.
const (
	geoStepMax = 26 // 26*2 = 52 bits: a sorted-set score holds them exactly
	geoLatMin  = -85.05112878
	geoLatMax  = 85.05112878
	geoLongMin = -180.0
	geoLongMax = 180.0

	earthRadiusMeters = 6372797.560856 // quadratic mean radius for WGS-84
	mercatorMax       = 20037726.37
)

// degToRadD is Redis's D_R, M_PI / 180.0 evaluated in double precision.
var degToRadD = float64(math.Pi) / 180.0

func degRad(ang float64) float64 { return float64(ang * degToRadD) }
func radDeg(ang float64) float64 { return ang / degToRadD }

// ghBits is GeoHashBits: an interleaved hash of step*2 bits.
type ghBits struct {
	bits uint64
	step uint8
}

func (h ghBits) isZero() bool { return h.bits == 0 && h.step == 0 }

// ghRange is GeoHashRange.
type ghRange struct{ min, max float64 }

func (r ghRange) isZero() bool { return r.max == 0 && r.min == 0 }

// ghArea is GeoHashArea: the cell a hash stands for.
type ghArea struct {
	hash     ghBits
	lon, lat ghRange
}

// ghNeighbors is GeoHashNeighbors.
type ghNeighbors struct {
	north, east, west, south                   ghBits
	northEast, southEast, northWest, southWest ghBits
}

// ghRadius is GeoHashRadius: the center cell and its eight neighbors.
type ghRadius struct {
	hash      ghBits
	area      ghArea
	neighbors ghNeighbors
}

// geoShape is GeoShape: the search area of GEORADIUS and GEOSEARCH. Radius,
// width and height are in the unit of conversion (meters per unit).
type geoShape struct {
	box           bool // RECTANGLE_TYPE (BYBOX); otherwise CIRCULAR_TYPE
	xy            [2]float64
	conversion    float64
	radius        float64
	width, height float64
	bounds        [4]float64
}

func geoCoordRanges() (lon, lat ghRange) {
	return ghRange{geoLongMin, geoLongMax}, ghRange{geoLatMin, geoLatMax}
}

// interleave64 puts the bits of x in the even positions and those of y in the odd.
func interleave64(xlo, ylo uint32) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
		0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF}
	s := [...]uint{1, 2, 4, 8, 16}
	x, y := uint64(xlo), uint64(ylo)
	for i := 4; i >= 0; i-- {
		x = (x | x<<s[i]) & b[i]
		y = (y | y<<s[i]) & b[i]
	}
	return x | y<<1
}

// deinterleave64 reverses interleave64: x in the low 32 bits, y in the high.
func deinterleave64(interleaved uint64) uint64 {
	b := [...]uint64{0x5555555555555555, 0x3333333333333333, 0x0F0F0F0F0F0F0F0F,
		0x00FF00FF00FF00FF, 0x0000FFFF0000FFFF, 0x00000000FFFFFFFF}
	s := [...]uint{0, 1, 2, 4, 8, 16}
	x := interleaved
	y := interleaved >> 1
	for i := 0; i < 6; i++ {
		x = (x | x>>s[i]) & b[i]
		y = (y | y>>s[i]) & b[i]
	}
	return x | y<<32
}

// geohashEncode is geohashEncode: the hash of (lon, lat) at step, or false.
func geohashEncode(lonR, latR ghRange, lon, lat float64, step uint8) (ghBits, bool) {
	if step > 32 || step == 0 || latR.isZero() || lonR.isZero() {
		return ghBits{}, false
	}
	if lon > geoLongMax || lon < geoLongMin || lat > geoLatMax || lat < geoLatMin {
		return ghBits{}, false
	}
	h := ghBits{step: step}
	if lat < latR.min || lat > latR.max || lon < lonR.min || lon > lonR.max {
		return h, false
	}
	latOffset := (lat - latR.min) / (latR.max - latR.min)
	lonOffset := (lon - lonR.min) / (lonR.max - lonR.min)
	latOffset = float64(latOffset * float64(uint64(1)<<step))
	lonOffset = float64(lonOffset * float64(uint64(1)<<step))
	h.bits = interleave64(uint32(latOffset), uint32(lonOffset))
	return h, true
}

// geohashEncodeWGS84 encodes with the coordinate limits of the index.
func geohashEncodeWGS84(lon, lat float64, step uint8) (ghBits, bool) {
	lonR, latR := geoCoordRanges()
	return geohashEncode(lonR, latR, lon, lat, step)
}

// geohashDecode is geohashDecode: the cell of hash.
func geohashDecode(lonR, latR ghRange, h ghBits) (ghArea, bool) {
	if h.isZero() || latR.isZero() || lonR.isZero() {
		return ghArea{}, false
	}
	sep := deinterleave64(h.bits) // [LAT][LONG]
	latScale := latR.max - latR.min
	lonScale := lonR.max - lonR.min
	ilato := uint32(sep)
	ilono := uint32(sep >> 32)
	div := float64(uint64(1) << h.step)
	a := ghArea{hash: h}
	a.lat.min = latR.min + float64(float64(ilato)/div*latScale)
	a.lat.max = latR.min + float64(float64(ilato+1)/div*latScale)
	a.lon.min = lonR.min + float64(float64(ilono)/div*lonScale)
	a.lon.max = lonR.min + float64(float64(ilono+1)/div*lonScale)
	return a, true
}

// geohashDecodeToLongLat decodes hash to the center of its cell, clamped to the
// index's limits.
func geohashDecodeToLongLat(h ghBits) (xy [2]float64, ok bool) {
	lonR, latR := geoCoordRanges()
	a, ok := geohashDecode(lonR, latR, h)
	if !ok {
		return xy, false
	}
	xy[0] = (a.lon.min + a.lon.max) / 2
	xy[0] = min(max(xy[0], geoLongMin), geoLongMax)
	xy[1] = (a.lat.min + a.lat.max) / 2
	xy[1] = min(max(xy[1], geoLatMin), geoLatMax)
	return xy, true
}

// geoScoreBits is C's (uint64_t) cast of a score, as x86-64 code compiled by GCC
// performs it (cvttsd2si, with the 2^63 adjustment for large values): scores
// written by ZADD rather than GEOADD decode to what they decode to in Redis.
func geoScoreBits(s float64) uint64 {
	const two63 = 9223372036854775808.0
	indefinite := uint64(1) << 63
	trunc := func(f float64) uint64 {
		if f != f || f >= two63 || f < -two63 {
			return indefinite
		}
		return uint64(int64(f))
	}
	if s >= two63 {
		return trunc(s-two63) ^ indefinite
	}
	return trunc(s)
}

// decodeGeohash is geo.c's decodeGeohash: a score to its point.
func decodeGeohash(score float64) ([2]float64, bool) {
	return geohashDecodeToLongLat(ghBits{bits: geoScoreBits(score), step: geoStepMax})
}

func geohashMoveX(h *ghBits, d int) {
	if d == 0 {
		return
	}
	x := h.bits & 0xaaaaaaaaaaaaaaaa
	y := h.bits & 0x5555555555555555
	zz := uint64(0x5555555555555555) >> (64 - uint(h.step)*2)
	if d > 0 {
		x = x + (zz + 1)
	} else {
		x = x | zz
		x = x - (zz + 1)
	}
	x &= uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.step)*2)
	h.bits = x | y
}

func geohashMoveY(h *ghBits, d int) {
	if d == 0 {
		return
	}
	x := h.bits & 0xaaaaaaaaaaaaaaaa
	y := h.bits & 0x5555555555555555
	zz := uint64(0xaaaaaaaaaaaaaaaa) >> (64 - uint(h.step)*2)
	if d > 0 {
		y = y + (zz + 1)
	} else {
		y = y | zz
		y = y - (zz + 1)
	}
	y &= uint64(0x5555555555555555) >> (64 - uint(h.step)*2)
	h.bits = x | y
}

func geohashNeighbors(h ghBits) ghNeighbors {
	move := func(dx, dy int) ghBits {
		n := h
		geohashMoveX(&n, dx)
		geohashMoveY(&n, dy)
		return n
	}
	return ghNeighbors{
		east: move(1, 0), west: move(-1, 0), south: move(0, -1), north: move(0, 1),
		northWest: move(-1, 1), northEast: move(1, 1),
		southEast: move(1, -1), southWest: move(-1, -1),
	}
}

// geohashEstimateStepsByRadius is the step (bits of precision) of the nine
// search boxes of a query of rangeMeters around latitude lat.
func geohashEstimateStepsByRadius(rangeMeters, lat float64) uint8 {
	if rangeMeters == 0 {
		return 26
	}
	step := 1
	for rangeMeters < mercatorMax {
		rangeMeters *= 2
		step++
	}
	step -= 2 // make sure range is included in most of the base cases
	// wider range towards the poles
	if lat > 66 || lat < -66 {
		step--
		if lat > 80 || lat < -80 {
			step--
		}
	}
	step = min(max(step, 1), 26)
	return uint8(step)
}

// geohashBoundingBox fills shape.bounds: min lon, min lat, max lon, max lat.
func geohashBoundingBox(s *geoShape) {
	lon, lat := s.xy[0], s.xy[1]
	var height, width float64
	if s.box {
		height = float64(s.conversion * (s.height / 2))
		width = float64(s.conversion * (s.width / 2))
	} else {
		height = float64(s.conversion * s.radius)
		width = float64(s.conversion * s.radius)
	}
	latDelta := radDeg(height / earthRadiusMeters)
	lonDeltaTop := radDeg(width / earthRadiusMeters / geoCos(degRad(lat+latDelta)))
	lonDeltaBottom := radDeg(width / earthRadiusMeters / geoCos(degRad(lat-latDelta)))
	// the hemispheres bend the box the opposite way
	if lat < 0 {
		s.bounds[0] = lon - lonDeltaBottom
		s.bounds[2] = lon + lonDeltaBottom
	} else {
		s.bounds[0] = lon - lonDeltaTop
		s.bounds[2] = lon + lonDeltaTop
	}
	s.bounds[1] = lat - latDelta
	s.bounds[3] = lat + latDelta
}

// geohashCalculateAreasByShape is geohashCalculateAreasByShapeWGS84: the nine
// cells (center + 8, the useless ones zeroed) covering the search shape.
func geohashCalculateAreasByShape(s *geoShape) ghRadius {
	geohashBoundingBox(s)
	minLon, minLat, maxLon, maxLat := s.bounds[0], s.bounds[1], s.bounds[2], s.bounds[3]
	lon, lat := s.xy[0], s.xy[1]
	// a box is searched as the circle through its corners
	var radiusMeters float64
	if s.box {
		hw, hh := s.width/2, s.height/2
		radiusMeters = math.Sqrt(float64(hw*hw) + float64(hh*hh))
	} else {
		radiusMeters = s.radius
	}
	radiusMeters = float64(radiusMeters * s.conversion)

	steps := geohashEstimateStepsByRadius(radiusMeters, lat)
	lonR, latR := geoCoordRanges()
	hash, _ := geohashEncode(lonR, latR, lon, lat, steps)
	neighbors := geohashNeighbors(hash)
	area, _ := geohashDecode(lonR, latR, hash)

	// Is the step small enough at the limits of the covered area? Near an edge
	// of the cell one of the N/S/E/W cells may be too near to cover everything.
	decrease := false
	{
		north, _ := geohashDecode(lonR, latR, neighbors.north)
		south, _ := geohashDecode(lonR, latR, neighbors.south)
		east, _ := geohashDecode(lonR, latR, neighbors.east)
		west, _ := geohashDecode(lonR, latR, neighbors.west)
		if north.lat.max < maxLat {
			decrease = true
		}
		if south.lat.min > minLat {
			decrease = true
		}
		if east.lon.max < maxLon {
			decrease = true
		}
		if west.lon.min > minLon {
			decrease = true
		}
	}
	if steps > 1 && decrease {
		steps--
		hash, _ = geohashEncode(lonR, latR, lon, lat, steps)
		neighbors = geohashNeighbors(hash)
		area, _ = geohashDecode(lonR, latR, hash)
	}

	// exclude the search areas that are useless
	if steps >= 2 {
		if area.lat.min < minLat {
			neighbors.south, neighbors.southWest, neighbors.southEast = ghBits{}, ghBits{}, ghBits{}
		}
		if area.lat.max > maxLat {
			neighbors.north, neighbors.northEast, neighbors.northWest = ghBits{}, ghBits{}, ghBits{}
		}
		if area.lon.min < minLon {
			neighbors.west, neighbors.southWest, neighbors.northWest = ghBits{}, ghBits{}, ghBits{}
		}
		if area.lon.max > maxLon {
			neighbors.east, neighbors.southEast, neighbors.northEast = ghBits{}, ghBits{}, ghBits{}
		}
	}
	return ghRadius{hash: hash, area: area, neighbors: neighbors}
}

// geohashAlign52Bits is the score of the first point of hash's cell.
func geohashAlign52Bits(h ghBits) uint64 {
	return h.bits << (52 - uint(h.step)*2)
}

// geohashGetLatDistance is the distance between two latitudes on a meridian.
func geohashGetLatDistance(lat1d, lat2d float64) float64 {
	return float64(earthRadiusMeters * math.Abs(degRad(lat2d)-degRad(lat1d)))
}

// geohashGetDistance is the haversine great-circle distance in meters.
func geohashGetDistance(lon1d, lat1d, lon2d, lat2d float64) float64 {
	lon1r := degRad(lon1d)
	lon2r := degRad(lon2d)
	v := geoSin((lon2r - lon1r) / 2)
	// same longitude: skip the expensive math
	if v == 0.0 {
		return geohashGetLatDistance(lat1d, lat2d)
	}
	lat1r := degRad(lat1d)
	lat2r := degRad(lat2d)
	u := geoSin((lat2r - lat1r) / 2)
	a := float64(u*u) + float64(float64(float64(geoCos(lat1r)*geoCos(lat2r))*v)*v)
	return float64(2.0*earthRadiusMeters) * geoAsin(math.Sqrt(a))
}

// geohashGetDistanceIfInRectangle reports whether (x2, y2) is in the
// width x height box centered on (x1, y1), and its distance from the center.
func geohashGetDistanceIfInRectangle(widthM, heightM, x1, y1, x2, y2 float64) (float64, bool) {
	// latitude distance is cheaper: check it first
	if geohashGetLatDistance(y2, y1) > heightM/2 {
		return 0, false
	}
	if geohashGetDistance(x2, y2, x1, y2) > widthM/2 {
		return 0, false
	}
	return geohashGetDistance(x1, y1, x2, y2), true
}

// geoWithinShape decodes score and reports whether the point is in the shape,
// with its distance from the shape's center in meters.
func geoWithinShape(s *geoShape, score float64) (xy [2]float64, dist float64, ok bool) {
	xy, ok = decodeGeohash(score)
	if !ok {
		return xy, 0, false
	}
	if s.box {
		dist, ok = geohashGetDistanceIfInRectangle(float64(s.width*s.conversion), float64(s.height*s.conversion),
			s.xy[0], s.xy[1], xy[0], xy[1])
		return xy, dist, ok
	}
	dist = geohashGetDistance(s.xy[0], s.xy[1], xy[0], xy[1])
	return xy, dist, !(dist > float64(s.radius*s.conversion)) // NaN is "in", as in Redis
}
