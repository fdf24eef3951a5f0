package command

import (
	"bytes"
	"math"
	"slices"
	"strconv"

	"github.com/hotkv/hotkv/internal/keyspace"
	"github.com/hotkv/hotkv/internal/resp"
)

// geoCommands is redis.io's "geo" group (geo.c). A geospatial index is a sorted
// set whose scores are 52-bit interleaved geohashes (geohash.go): GEOADD is ZADD
// with computed scores, and a radius or box search reads the score ranges of the
// nine geohash cells that cover the area, then filters by distance.
func geoCommands() []*Spec {
	const w, r, d = Write, ReadOnly, DenyOOM
	// GEORADIUS's destination keys are found by keyword (STORE / STOREDIST)
	radiusKeys := func(startFrom int) []KeySpec {
		return []KeySpec{
			{Flags: "RO access", Begin: 1, Step: 1},
			{Flags: "OW update", Begin: startFrom, Step: 1, Keyword: "STORE"},
			{Flags: "OW update", Begin: startFrom, Step: 1, Keyword: "STOREDIST"},
		}
	}
	return []*Spec{
		{Name: "geoadd", Arity: -5, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RW update", Run: geoaddCmd},
		{Name: "geodist", Arity: -4, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: geodistCmd},
		{Name: "geohash", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: geohashCmd},
		{Name: "geopos", Arity: -2, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: geoposCmd},
		{Name: "georadius", Arity: -6, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, Keys: radiusKeys(6), KeysFn: georadiusKeys(6), Run: georadiusCmd},
		{Name: "georadiusbymember", Arity: -5, Flags: w | d, FirstKey: 1, LastKey: 1, Step: 1, Keys: radiusKeys(5), KeysFn: georadiusKeys(5), Run: georadiusbymemberCmd},
		{Name: "georadiusbymember_ro", Arity: -5, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: georadiusbymemberROCmd},
		{Name: "georadius_ro", Arity: -6, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: georadiusROCmd},
		{Name: "geosearch", Arity: -7, Flags: r, FirstKey: 1, LastKey: 1, Step: 1, KeyFlags: "RO access", Run: geosearchCmd},
		{Name: "geosearchstore", Arity: -8, Flags: w | d, FirstKey: 1, LastKey: 2, Step: 1, Keys: []KeySpec{{Flags: "OW update", Begin: 1, Step: 1}, {Flags: "RO access", Begin: 2, Step: 1}}, Run: geosearchstoreCmd},
	}
}

// georadiusKeys extracts GEORADIUS's keys as Redis's key specs locate them
// (COMMAND GETKEYS prefers the specs to georadiusGetKeys): the source, then the
// key after the first STORE and the one after the first STOREDIST searched from
// argument startFrom on (the last argument is not searched).
func georadiusKeys(startFrom int) func(argv [][]byte) []int {
	return func(argv [][]byte) []int {
		out := []int{1}
		for _, kw := range []string{"store", "storedist"} {
			for i := startFrom; i < len(argv)-1; i++ {
				if geoArgIs(argv[i], kw) {
					out = append(out, i+1)
					break
				}
			}
		}
		return out
	}
}

// geoArgIs is strcasecmp(arg, s) == 0 on Redis's NUL-terminated argument: what
// follows a NUL byte does not count. s is lower case.
func geoArgIs(arg []byte, s string) bool {
	if i := bytes.IndexByte(arg, 0); i >= 0 {
		arg = arg[:i]
	}
	return eqFold(arg, s)
}

// --- argument helpers ------------------------------------------------------------

// geoAppendCFloat appends f as printf("%f") does.
func geoAppendCFloat(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'f', 6, 64)
}

// geoExtractLongLat is extractLongLatOrReply: longitude and latitude from two
// arguments, within the limits of the index.
func geoExtractLongLat(c *Ctx, argv [][]byte) (xy [2]float64, ok bool) {
	for i := 0; i < 2; i++ {
		if xy[i], ok = resp.ParseFloat(argv[i]); !ok {
			c.Err(ErrNotFloat)
			return xy, false
		}
	}
	if xy[0] < geoLongMin || xy[0] > geoLongMax || xy[1] < geoLatMin || xy[1] > geoLatMax {
		msg := []byte("ERR invalid longitude,latitude pair ")
		msg = geoAppendCFloat(msg, xy[0])
		msg = append(msg, ',')
		msg = geoAppendCFloat(msg, xy[1])
		c.Error(string(msg))
		return xy, false
	}
	return xy, true
}

// geoExtractUnit is extractUnitOrReply: meters per unit.
func geoExtractUnit(c *Ctx, unit []byte) (float64, bool) {
	switch {
	case geoArgIs(unit, "m"):
		return 1, true
	case geoArgIs(unit, "km"):
		return 1000, true
	case geoArgIs(unit, "ft"):
		return 0.3048, true
	case geoArgIs(unit, "mi"):
		return 1609.34, true
	}
	c.Error("ERR unsupported unit provided. please use M, KM, FT, MI")
	return 0, false
}

// geoExtractDistance is extractDistanceOrReply: "<radius> <unit>" into shape.
func geoExtractDistance(c *Ctx, argv [][]byte, s *geoShape) bool {
	dist, ok := resp.ParseFloat(argv[0])
	if !ok {
		c.Error("ERR need numeric radius")
		return false
	}
	if dist < 0 {
		c.Error("ERR radius cannot be negative")
		return false
	}
	s.radius = dist
	conv, ok := geoExtractUnit(c, argv[1])
	if !ok {
		return false
	}
	s.conversion = conv
	return true
}

// geoExtractBox is extractBoxOrReply: "<width> <height> <unit>" into shape.
func geoExtractBox(c *Ctx, argv [][]byte, s *geoShape) bool {
	w, ok := resp.ParseFloat(argv[0])
	if !ok {
		c.Error("ERR need numeric width")
		return false
	}
	h, ok := resp.ParseFloat(argv[1])
	if !ok {
		c.Error("ERR need numeric height")
		return false
	}
	if h < 0 || w < 0 {
		c.Error("ERR height or width cannot be negative")
		return false
	}
	s.width, s.height = w, h
	conv, ok := geoExtractUnit(c, argv[2])
	if !ok {
		return false
	}
	s.conversion = conv
	return true
}

// geoMemberPos is longLatFromMember: the point of a member of z.
func geoMemberPos(z *keyspace.ZSet, member []byte) ([2]float64, bool) {
	score, ok := z.Score(member)
	if !ok {
		return [2]float64{}, false
	}
	return decodeGeohash(score)
}

// --- reply formatting ------------------------------------------------------------

// geoLLRint is llrint as x86-64 computes it: round half to even, and
// LLONG_MIN for NaN and values out of range.
func geoLLRint(x float64) int64 {
	r := math.RoundToEven(x)
	if r != r || r >= 9223372036854775808.0 || r < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(r)
}

// geoAppendDistance is addReplyDoubleDistance's text: fixedpoint_d2string with
// four decimals, that is llrint(d*10000) printed with a point before its last
// four digits ("%.4f" but for the rounding of the product).
func geoAppendDistance(dst []byte, d float64) []byte {
	if d == 0 {
		return append(dst, "0.0000"...)
	}
	sv := geoLLRint(float64(d * 10000))
	var v uint64
	if sv < 0 {
		dst = append(dst, '-')
		v = uint64(-sv) // LLONG_MIN gives 1<<63, as in Redis
	} else {
		v = uint64(sv)
	}
	dst = strconv.AppendUint(dst, v/10000, 10)
	frac := v % 10000
	return append(dst, '.', byte('0'+frac/1000), byte('0'+frac/100%10), byte('0'+frac/10%10), byte('0'+frac%10))
}

// geoReplyCoord is Redis 8's addReplyDouble of a coordinate: the shortest
// text that reads back as the same double (a RESP3 double, a RESP2 bulk
// string). Redis 7 printed "%.17Lf" (addReplyHumanLongDouble).
func geoReplyCoord(c *Ctx, f float64) { c.W.Double(f) }

// geoReplyDistance is addReplyDoubleDistance: always a bulk string.
func geoReplyDistance(c *Ctx, d float64) {
	var tmp [32]byte
	c.W.Bulk(geoAppendDistance(tmp[:0], d))
}

// geoScoreInt is the (long long) cast of a score for WITHHASH (x86-64: the
// "integer indefinite" LLONG_MIN when out of range).
func geoScoreInt(s float64) int64 {
	if s != s || s >= 9223372036854775808.0 || s < -9223372036854775808.0 {
		return math.MinInt64
	}
	return int64(s)
}

// --- GEOADD, GEODIST, GEOHASH, GEOPOS --------------------------------------------

// geoaddCmd: GEOADD key [NX|XX] [CH] longitude latitude member [...]. Like
// Redis, it checks every coordinate, then runs ZADD with the geohashes as scores
// (replies, errors and the "zadd" event are ZADD's).
func geoaddCmd(c *Ctx) {
	xx, nx := false, false
	longIdx := 2
opts:
	for ; longIdx < len(c.Argv); longIdx++ {
		opt := c.Argv[longIdx]
		switch {
		case geoArgIs(opt, "nx"):
			nx = true
		case geoArgIs(opt, "xx"):
			xx = true
		case geoArgIs(opt, "ch"): // ZADD handles it
		default:
			break opts
		}
	}
	if (len(c.Argv)-longIdx)%3 != 0 || (xx && nx) {
		c.Err(ErrSyntax)
		return
	}
	elements := (len(c.Argv) - longIdx) / 3
	argv := make([][]byte, 0, longIdx+elements*2)
	argv = append(argv, []byte("zadd"))
	argv = append(argv, c.Argv[1:longIdx]...)
	scores := make([]byte, 0, elements*16)
	offs := make([]int, 0, elements+1)
	for i := 0; i < elements; i++ {
		xy, ok := geoExtractLongLat(c, c.Argv[longIdx+i*3:])
		if !ok {
			return
		}
		hash, _ := geohashEncodeWGS84(xy[0], xy[1], geoStepMax)
		offs = append(offs, len(scores))
		scores = strconv.AppendUint(scores, geohashAlign52Bits(hash), 10)
	}
	offs = append(offs, len(scores))
	for i := 0; i < elements; i++ {
		argv = append(argv, scores[offs[i]:offs[i+1]], c.Argv[longIdx+i*3+2])
	}
	orig := c.Argv
	c.Argv = argv
	zaddGeneric(c, 0)
	c.Argv = orig
}

// geodistCmd: GEODIST key member1 member2 [M|KM|FT|MI].
func geodistCmd(c *Ctx) {
	toMeter := 1.0
	if len(c.Argv) == 5 {
		var ok bool
		if toMeter, ok = geoExtractUnit(c, c.Argv[4]); !ok {
			return
		}
	} else if len(c.Argv) > 5 {
		c.Err(ErrSyntax)
		return
	}
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	if z == nil {
		c.W.Null()
		return
	}
	s1, ok1 := z.Score(c.Argv[2])
	s2, ok2 := z.Score(c.Argv[3])
	if !ok1 || !ok2 {
		c.W.Null()
		return
	}
	p1, ok1 := decodeGeohash(s1)
	p2, ok2 := decodeGeohash(s2)
	if !ok1 || !ok2 {
		c.W.Null()
		return
	}
	geoReplyDistance(c, geohashGetDistance(p1[0], p1[1], p2[0], p2[1])/toMeter)
}

// geohashCmd: GEOHASH key [member ...]: 11-character standard geohashes (the
// position decoded, then encoded again with latitudes -90..90; the 11th
// character stands for bits the index does not have and is always '0').
func geohashCmd(c *Ctx) {
	const alphabet = "0123456789bcdefghjkmnpqrstuvwxyz"
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	c.W.ArrayLen(len(c.Argv) - 2)
	for _, m := range c.Argv[2:] {
		if z == nil {
			c.W.Null()
			continue
		}
		xy, ok := geoMemberPos(z, m)
		if !ok {
			c.W.Null()
			continue
		}
		hash, _ := geohashEncode(ghRange{-180, 180}, ghRange{-90, 90}, xy[0], xy[1], 26)
		var buf [11]byte
		for i := range buf {
			idx := 0
			if i < 10 {
				idx = int(hash.bits>>(52-uint((i+1)*5))) & 0x1f
			}
			buf[i] = alphabet[idx]
		}
		c.W.Bulk(buf[:])
	}
}

// geoposCmd: GEOPOS key [member ...].
func geoposCmd(c *Ctx) {
	z, ok := lookupZSet(c, c.Argv[1], false)
	if !ok {
		return
	}
	c.W.ArrayLen(len(c.Argv) - 2)
	for _, m := range c.Argv[2:] {
		if z == nil {
			c.W.NullArray()
			continue
		}
		xy, ok := geoMemberPos(z, m)
		if !ok {
			c.W.NullArray()
			continue
		}
		c.W.ArrayLen(2)
		geoReplyCoord(c, xy[0])
		geoReplyCoord(c, xy[1])
	}
}

// --- GEORADIUS and GEOSEARCH -----------------------------------------------------

// Variants of georadiusGeneric (geo.c's flags).
const (
	geoRadiusCoords = 1 << iota // search around coordinates
	geoRadiusMember             // search around a member
	geoNoStore                  // the _RO variants: no STORE/STOREDIST
	geoSearch                   // GEOSEARCH's argument grammar
	geoSearchStore              // GEOSEARCHSTORE: STOREDIST only
)

func georadiusCmd(c *Ctx)           { georadiusGeneric(c, 1, geoRadiusCoords) }
func georadiusbymemberCmd(c *Ctx)   { georadiusGeneric(c, 1, geoRadiusMember) }
func georadiusROCmd(c *Ctx)         { georadiusGeneric(c, 1, geoRadiusCoords|geoNoStore) }
func georadiusbymemberROCmd(c *Ctx) { georadiusGeneric(c, 1, geoRadiusMember|geoNoStore) }
func geosearchCmd(c *Ctx)           { georadiusGeneric(c, 1, geoSearch) }
func geosearchstoreCmd(c *Ctx)      { georadiusGeneric(c, 2, geoSearch|geoSearchStore) }

// geoPoint is one match: its member is arena[start:end] of the search.
type geoPoint struct {
	lon, lat, dist, score float64
	start, end            int
}

// geoSearchResult collects the matches of a search (geoArray).
type geoSearchResult struct {
	points []geoPoint
	arena  []byte // member bytes, copied out of the set
}

func (g *geoSearchResult) member(p *geoPoint) []byte { return g.arena[p.start:p.end] }

// pointsInRange is geoGetPointsInRange: the members of z with scores in
// [lo, hi) that lie in the shape, until limit (0: no limit) matches in all.
func (g *geoSearchResult) pointsInRange(z *keyspace.ZSet, lo, hi float64, s *geoShape, limit int) {
	rng := keyspace.ScoreRange{Min: lo, Max: hi, MaxEx: true}
	z.RangeByScore(&rng, 0, -1, false, func(m []byte, score float64) {
		if limit > 0 && len(g.points) >= limit {
			return // Redis stops the walk here
		}
		xy, dist, ok := geoWithinShape(s, score)
		if !ok {
			return
		}
		start := len(g.arena)
		g.arena = append(g.arena, m...)
		g.points = append(g.points, geoPoint{lon: xy[0], lat: xy[1], dist: dist, score: score, start: start, end: len(g.arena)})
	})
}

// membersOfAllNeighbors searches the center cell and its eight neighbors, in
// Redis's order, skipping zeroed cells and a cell equal to the one searched last
// (huge radiuses make neighbors coincide).
func (g *geoSearchResult) membersOfAllNeighbors(z *keyspace.ZSet, r *ghRadius, s *geoShape, limit int) {
	n := &r.neighbors
	cells := [9]ghBits{r.hash, n.north, n.south, n.east, n.west, n.northEast, n.northWest, n.southEast, n.southWest}
	last := 0
	for i, cell := range cells {
		if cell.isZero() {
			continue
		}
		if last != 0 && cell == cells[last] {
			continue
		}
		if limit > 0 && len(g.points) >= limit {
			break
		}
		// scoresOfGeoHashBox: every 52-bit score with the cell's prefix
		lo := geohashAlign52Bits(cell)
		cell.bits++
		hi := geohashAlign52Bits(cell)
		g.pointsInRange(z, float64(lo), float64(hi), s, limit)
		last = i
	}
}

// geoCmpAsc is sort_gp_asc.
func geoCmpAsc(a, b float64) int {
	switch {
	case a > b:
		return 1
	case a == b:
		return 0
	}
	return -1
}

const (
	geoSortNone = iota
	geoSortAsc
	geoSortDesc
)

// georadiusGeneric is geo.c's georadiusGeneric:
//
//	GEORADIUS key lon lat radius unit [WITHDIST] [WITHHASH] [WITHCOORD] [ASC|DESC]
//	          [COUNT count [ANY]] [STORE key|STOREDIST key]
//	GEORADIUSBYMEMBER key member radius unit ... the same options ...
//	GEOSEARCH key FROMMEMBER member|FROMLONLAT lon lat BYRADIUS radius unit|
//	          BYBOX width height unit [ASC|DESC] [COUNT count [ANY]] [WITH...]
//	GEOSEARCHSTORE dst src ... GEOSEARCH's options but WITH... ... [STOREDIST]
//
// The checks come in Redis's order: the source key's type, then the arguments
// left to right (a missing source skips BYMEMBER's radius and FROMMEMBER's
// member), then the combinations.
func georadiusGeneric(c *Ctx, srcKeyIndex, flags int) {
	var storeKey []byte
	storeDist := false

	z, ok := lookupZSet(c, c.Argv[srcKeyIndex], false)
	if !ok {
		return
	}
	var shape geoShape
	var baseArgs int
	switch {
	case flags&geoRadiusCoords != 0:
		baseArgs = 6
		if shape.xy, ok = geoExtractLongLat(c, c.Argv[2:4]); !ok {
			return
		}
		if !geoExtractDistance(c, c.Argv[4:6], &shape) {
			return
		}
	case flags&geoRadiusMember != 0 && z == nil:
		// no source: parse the options anyway, to know which empty reply to give
		baseArgs = 5
	case flags&geoRadiusMember != 0:
		baseArgs = 5
		if shape.xy, ok = geoMemberPos(z, c.Argv[2]); !ok {
			c.Error("ERR could not decode requested zset member")
			return
		}
		if !geoExtractDistance(c, c.Argv[3:5], &shape) {
			return
		}
	default: // GEOSEARCH, GEOSEARCHSTORE
		baseArgs = 2
		if flags&geoSearchStore != 0 {
			baseArgs = 3
			storeKey = c.Argv[1]
		}
	}

	withDist, withHash, withCoords := false, false, false
	fromMember, fromLoc, byRadius, byBox := false, false, false, false
	sort := geoSortNone
	anyOpt := false // stop as soon as enough results are found
	var count int64 // 0: unlimited
	search := flags&geoSearch != 0
	storeOK := flags&geoNoStore == 0 && !search
	args := c.Argv[baseArgs:]
	remaining := len(args)
	for i := 0; i < remaining; i++ {
		arg := args[i]
		switch {
		case geoArgIs(arg, "withdist"):
			withDist = true
		case geoArgIs(arg, "withhash"):
			withHash = true
		case geoArgIs(arg, "withcoord"):
			withCoords = true
		case geoArgIs(arg, "any"):
			anyOpt = true
		case geoArgIs(arg, "asc"):
			sort = geoSortAsc
		case geoArgIs(arg, "desc"):
			sort = geoSortDesc
		case geoArgIs(arg, "count") && i+1 < remaining:
			if count, ok = resp.ParseInt(args[i+1]); !ok {
				c.Err(ErrNotInt)
				return
			}
			if count <= 0 {
				c.Error("ERR COUNT must be > 0")
				return
			}
			i++
		case geoArgIs(arg, "store") && i+1 < remaining && storeOK:
			storeKey = args[i+1]
			storeDist = false
			i++
		case geoArgIs(arg, "storedist") && i+1 < remaining && storeOK:
			storeKey = args[i+1]
			storeDist = true
			i++
		case geoArgIs(arg, "storedist") && search && flags&geoSearchStore != 0:
			storeDist = true
		case geoArgIs(arg, "frommember") && i+1 < remaining && search && !fromLoc:
			// no source: go on parsing, the reply is empty anyway
			if z != nil {
				if shape.xy, ok = geoMemberPos(z, args[i+1]); !ok {
					c.Error("ERR could not decode requested zset member")
					return
				}
			}
			fromMember = true
			i++
		case geoArgIs(arg, "fromlonlat") && i+2 < remaining && search && !fromMember:
			if shape.xy, ok = geoExtractLongLat(c, args[i+1:i+3]); !ok {
				return
			}
			fromLoc = true
			i += 2
		case geoArgIs(arg, "byradius") && i+2 < remaining && search && !byBox:
			if !geoExtractDistance(c, args[i+1:i+3], &shape) {
				return
			}
			shape.box = false
			byRadius = true
			i += 2
		case geoArgIs(arg, "bybox") && i+3 < remaining && search && !byRadius:
			if !geoExtractBox(c, args[i+1:i+4], &shape) {
				return
			}
			shape.box = true
			byBox = true
			i += 3
		default:
			c.Err(ErrSyntax)
			return
		}
	}

	// options STORE and STOREDIST cannot take
	if storeKey != nil && (withDist || withHash || withCoords) {
		if flags&geoSearchStore != 0 {
			c.Error("ERR GEOSEARCHSTORE is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		} else {
			c.Error("ERR STORE option in GEORADIUS is not compatible with WITHDIST, WITHHASH and WITHCOORD options")
		}
		return
	}
	if search && !(fromMember || fromLoc) {
		c.Error("ERR exactly one of FROMMEMBER or FROMLONLAT can be specified for " + geoCName(c.Argv[0]))
		return
	}
	if search && !(byRadius || byBox) {
		c.Error("ERR exactly one of BYRADIUS and BYBOX can be specified for " + geoCName(c.Argv[0]))
		return
	}
	if anyOpt && count == 0 {
		c.Error("ERR the ANY argument requires COUNT argument")
		return
	}

	// no source: delete the destination, or reply an empty array
	if z == nil {
		if storeKey != nil {
			if c.DB.Delete(storeKey) {
				c.Notify('g', "del", storeKey)
				c.Dirty++
			}
			c.W.Int(0)
		} else {
			c.W.ArrayLen(0)
		}
		return
	}

	// COUNT without an order means the closest ones, except with ANY
	if count != 0 && sort == geoSortNone && !anyOpt {
		sort = geoSortAsc
	}

	areas := geohashCalculateAreasByShape(&shape)
	var res geoSearchResult
	limit := 0
	if anyOpt {
		limit = int(min(count, math.MaxInt32))
	}
	res.membersOfAllNeighbors(z, &areas, &shape, limit)

	if len(res.points) == 0 && storeKey == nil {
		c.W.ArrayLen(0)
		return
	}
	resultLength := len(res.points)
	returned := resultLength
	if count != 0 && int64(resultLength) > count {
		returned = int(count)
	}
	if sort != geoSortNone {
		pts := res.points
		cmp := func(a, b *geoPoint) int { return geoCmpAsc(a.dist, b.dist) }
		if sort == geoSortDesc {
			cmp = func(a, b *geoPoint) int { return -geoCmpAsc(a.dist, b.dist) }
		}
		if returned == resultLength {
			// qsort: glibc's is a (stable) merge sort
			slices.SortStableFunc(pts, func(a, b geoPoint) int { return cmp(&a, &b) })
		} else {
			pqsortRange(0, len(pts), func(i, j int) int { return cmp(&pts[i], &pts[j]) },
				func(i, j int) { pts[i], pts[j] = pts[j], pts[i] }, 0, returned-1)
		}
	}

	if storeKey == nil {
		geoReplyResults(c, &res, returned, shape.conversion, withDist, withHash, withCoords)
		return
	}
	geoStoreResults(c, &res, returned, shape.conversion, storeKey, storeDist, search)
}

// geoCName is a command name as a C string (addReplyErrorFormat's %s).
func geoCName(b []byte) string {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		b = b[:i]
	}
	return string(b)
}

// geoReplyResults replies the first n matches: members, or arrays of the member
// and the WITH... fields in Redis's order (distance, hash, coordinates).
func geoReplyResults(c *Ctx, res *geoSearchResult, n int, conversion float64, withDist, withHash, withCoords bool) {
	opts := 0
	for _, on := range []bool{withDist, withHash, withCoords} {
		if on {
			opts++
		}
	}
	c.W.ArrayLen(n)
	for i := 0; i < n; i++ {
		p := &res.points[i]
		p.dist /= conversion
		if opts > 0 {
			c.W.ArrayLen(opts + 1)
		}
		c.W.Bulk(res.member(p))
		if withDist {
			geoReplyDistance(c, p.dist)
		}
		if withHash {
			c.W.Int(geoScoreInt(p.score))
		}
		if withCoords {
			c.W.ArrayLen(2)
			geoReplyCoord(c, p.lon)
			geoReplyCoord(c, p.lat)
		}
	}
}

// geoStoreResults stores the first n matches in key as a sorted set, scored by
// geohash or, with STOREDIST, by distance in the query's unit; no match deletes
// key. The reply is n.
func geoStoreResults(c *Ctx, res *geoSearchResult, n int, conversion float64, key []byte, storeDist, search bool) {
	if n == 0 {
		if c.DB.Delete(key) {
			c.Notify('g', "del", key)
			c.Dirty++
		}
		c.W.Int(0)
		return
	}
	entries := make([]keyspace.ZEntry, 0, n)
	for i := 0; i < n; i++ {
		p := &res.points[i]
		p.dist /= conversion
		score := p.score
		if storeDist {
			score = p.dist
		}
		entries = append(entries, keyspace.ZEntry{Member: res.member(p), Score: score})
	}
	slices.SortFunc(entries, func(a, b keyspace.ZEntry) int {
		if a.Score != b.Score {
			if a.Score < b.Score {
				return -1
			}
			return 1
		}
		return bytes.Compare(a.Member, b.Member)
	})
	// a member is found once; keep the set well formed whatever happens
	entries = slices.CompactFunc(entries, func(a, b keyspace.ZEntry) bool { return bytes.Equal(a.Member, b.Member) })
	c.DB.SetObject(key, keyspace.KindZSet, c.KS.NewZSetSorted(entries, c.KS.ZLimits()))
	event := "georadiusstore"
	if search {
		event = "geosearchstore"
	}
	c.Notify('z', event, key)
	c.Dirty += n
	c.W.Int(int64(n))
}
