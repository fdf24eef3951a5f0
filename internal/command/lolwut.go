package command

import (
	"math"
	"strconv"
	"strings"
)

// LOLWUT [VERSION version] [version-specific arguments] (Redis's
// lolwutCommand): computer art and the version, as a verbatim "txt" string.
//
//   - VERSION 5 (and 4.9): Georg Nees's "Schotter" in Braille dots, arguments
//     columns (66), squares per row (8) and per column (12);
//   - VERSION 6 (and 5.9): a skyline of 8-bit-game skyscrapers in the four
//     grays of a colour terminal, arguments columns (80) and rows (20);
//   - any other version but 8 (and 7.9): "Redis ver. <version>" alone, as
//     Redis's unstable branch replies.
//
// The default is the current version, 8.6, whose LOLWUT in Redis prints
// verses of Nanni Balestrini's TAPE MARK I: text that is Redis's and the
// poets', not HotKV's to copy. HotKV draws the Schotter instead (a deviation,
// docs/decisions/0003). Every size is clamped as Redis clamps it, so the
// command stays cheap whatever the arguments; the pictures are HotKV's own
// drawing of the same subjects, random as Redis's are.
func lolwutCmd(c *Ctx) {
	args := c.Argv[1:]
	ver := Version
	if len(args) >= 2 && eqFold(args[0], "version") {
		v, ok := parseLong(args[1])
		if !ok {
			c.Err(ErrNotInt)
			return
		}
		ver = strconv.FormatUint(uint64(uint32(v)), 10) + ".0.0" // %u of a long, as Redis
		args = args[2:]
	}
	var art string
	ed := lolwutEdition(ver)
	if ed == 8 {
		args = nil // LOLWUT 8's only argument is its verses' language
	}
	switch ed {
	case 5, 8:
		cols, perRow, perCol, ok := lolwutInts(c, args, 66, 8, 12)
		if !ok {
			return
		}
		art = renderBraille(drawSchotter(int(clampInt(cols, 1, 1000)), int(clampInt(perRow, 1, 200)), int(clampInt(perCol, 1, 200)), c.Rand)) +
			"\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. " + Version + "\n"
	case 6:
		cols, rows, _, ok := lolwutInts(c, args, 80, 20, 0)
		if !ok {
			return
		}
		art = renderGrays(drawSkyline(int(clampInt(cols, 1, 1000)), int(clampInt(rows, 1, 1000)), c.Rand)) +
			"\nDedicated to the 8 bit game developers of past and present.\n" +
			"Original 8 bit image from Plaguemon by hikikomori. Redis ver. " + Version + "\n"
	default:
		art = "Redis ver. " + Version + "\n"
	}
	c.W.Verbatim("txt", art)
}

// lolwutEdition maps a version string on the edition whose art it shows, as
// lolwutCommand compares its first characters: 5.x and 4.9 are 5, 6.x and
// 5.9 are 6, 8.x and 7.9 are 8, anything else 0.
func lolwutEdition(v string) int {
	if len(v) < 3 || v[1] != '.' {
		return 0
	}
	major, nine := v[0], v[2] == '9'
	switch {
	case (major == '5' && !nine) || (major == '4' && nine):
		return 5
	case (major == '6' && !nine) || (major == '5' && nine):
		return 6
	case (major == '8' && !nine) || (major == '7' && nine):
		return 8
	}
	return 0
}

// lolwutInts parses up to three integer arguments over their defaults,
// replying Redis's error for one that is not an integer.
func lolwutInts(c *Ctx, args [][]byte, a, b, d int64) (int64, int64, int64, bool) {
	out := [3]int64{a, b, d}
	for i := 0; i < len(args) && i < 3; i++ {
		v, ok := parseLong(args[i])
		if !ok {
			c.Err(ErrNotInt)
			return 0, 0, 0, false
		}
		out[i] = v
	}
	return out[0], out[1], out[2], true
}

func clampInt(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// canvas is a grid of pixels of a few colours, 0 the background; drawing
// outside it is a no-op.
type canvas struct {
	w, h int
	px   []byte
}

func newCanvas(w, h int, bg byte) *canvas {
	c := &canvas{w: w, h: h, px: make([]byte, w*h)}
	if bg != 0 {
		for i := range c.px {
			c.px[i] = bg
		}
	}
	return c
}

func (c *canvas) set(x, y int, col byte) {
	if x >= 0 && y >= 0 && x < c.w && y < c.h {
		c.px[y*c.w+x] = col
	}
}

func (c *canvas) get(x, y int) byte {
	if x >= 0 && y >= 0 && x < c.w && y < c.h {
		return c.px[y*c.w+x]
	}
	return 0
}

// line draws from (x0,y0) to (x1,y1) inclusive (Bresenham).
func (c *canvas) line(x0, y0, x1, y1 int, col byte) {
	dx, dy := absInt(x1-x0), -absInt(y1-y0)
	sx, sy := 1, 1
	if x1 < x0 {
		sx = -1
	}
	if y1 < y0 {
		sy = -1
	}
	e := dx + dy
	for {
		c.set(x0, y0, col)
		if x0 == x1 && y0 == y1 {
			return
		}
		if e2 := 2 * e; e2 >= dy {
			e += dy
			x0 += sx
		} else {
			e += dx
			y0 += sy
		}
	}
}

func absInt(v int) int {
	if v < 0 {
		return -v
	}
	return v
}

// drawSchotter lays out perRow x perCol squares on a canvas cols*2 dots wide
// (a Braille character is 2x4 dots) with a 2-dot margin, each square turned
// and shifted by a random amount that grows row by row: order at the top,
// disorder at the bottom, as in Nees's plot.
func drawSchotter(cols, perRow, perCol int, rnd func() uint64) *canvas {
	w := cols * 2
	pad := 0
	if w > 4 {
		pad = 2
	}
	side := float64(w-2*pad) / float64(perRow)
	// at most schotterMaxDots rows of dots: Redis draws every row asked for,
	// and 1000 columns with 1 square per row and 200 per column made a
	// 800 MB canvas and a 300 MB reply (a deviation for such arguments only)
	for perCol > 1 && side*float64(perCol)+float64(2*pad) > schotterMaxDots {
		perCol--
	}
	cv := newCanvas(w, int(side*float64(perCol))+2*pad, 0)
	unit := func() float64 { return float64(rnd()>>11) / (1 << 53) } // [0,1)
	signed := func(scale float64) float64 {
		v := unit() * scale
		if rnd()&1 == 1 {
			v = -v
		}
		return v
	}
	for row := range perCol {
		for col := range perRow {
			cx := float64(col)*side + side/2 + float64(pad)
			cy := float64(row)*side + side/2 + float64(pad)
			angle := 0.0
			if row > 1 {
				chaos := float64(row) / float64(perCol)
				angle = signed(chaos)
				cx += signed(chaos) * side / 3
				cy += signed(chaos) * side / 3
			}
			cv.square(int(cx), int(cy), side, angle)
		}
	}
	return cv
}

// schotterMaxDots bounds the Schotter's height: 1000 lines of Braille, as
// many as the skyline's rows may be.
const schotterMaxDots = 4000

// square draws the outline of a square of the given side centred on (x,y)
// and turned by angle radians: its corners are on the circle through them,
// a quarter turn apart.
func (c *canvas) square(x, y int, side, angle float64) {
	r := math.Round(side / math.Sqrt2)
	var px, py [4]int
	for i := range 4 {
		a := math.Pi/4 + angle + float64(i)*math.Pi/2
		px[i] = int(math.Round(math.Sin(a)*r + float64(x)))
		py[i] = int(math.Round(math.Cos(a)*r + float64(y)))
	}
	for i := range 4 {
		c.line(px[i], py[i], px[(i+1)%4], py[(i+1)%4], 1)
	}
}

// renderBraille prints the canvas in Unicode Braille patterns (U+2800 plus
// the dots' bits: 1 2 3 down the left column, 4 5 6 down the right, 7 and 8
// below them), one line per 4 rows of dots.
func renderBraille(cv *canvas) string {
	var b strings.Builder
	for y := 0; y < cv.h; y += 4 {
		if y > 0 && y-4 != cv.h-1 {
			b.WriteByte('\n') // after each line but one ending on the last row: Redis's
		}
		for x := 0; x < cv.w; x += 2 {
			var bitsOn rune
			for i, d := range [8][2]int{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}, {0, 3}, {1, 3}} {
				if cv.get(x+d[0], y+d[1]) != 0 {
					bitsOn |= 1 << i
				}
			}
			b.WriteRune(0x2800 + bitsOn)
		}
	}
	if last := (cv.h - 1) / 4 * 4; cv.h > 0 && last != cv.h-1 {
		b.WriteByte('\n')
	}
	return b.String()
}

// drawSkyline draws a city of skyscrapers on a cols x rows canvas of four
// grays (0 black, 1 and 2 grays, 3 white: the sky): two rows of plain
// buildings in the grays behind, the lighter farther, then black buildings
// with lit windows in front.
func drawSkyline(cols, rows int, rnd func() uint64) *canvas {
	cv := newCanvas(cols, rows, 3)
	intn := func(n int) int {
		if n <= 0 {
			return 0
		}
		return int(rnd() % uint64(n))
	}
	for _, col := range []byte{2, 1} {
		for x := -10; x < cols; {
			x += intn(8)
			w := 10 + intn(9)
			h := rows/2 + intn(rows/2)
			if col == 1 {
				h = rows/2 + intn(rows/3)
			}
			cv.building(x, w, h, col, false, intn)
			if col == 2 {
				x += w / 2
			} else {
				x += w + 1
			}
		}
	}
	for x := -10; x < cols; {
		x += intn(8)
		w := 5 + intn(14)
		if w%4 != 0 {
			w += w % 3
		}
		h := rows/3 + intn(rows/2)
		cv.building(x, w, h, 0, true, intn)
		x += w + 5
	}
	return cv
}

// building draws one skyscraper standing on the bottom row, x..x+w-1 wide
// and h tall, its roof two pixels narrower on each side; with windows, the
// inner part has two-pixel-wide lit windows on every other row, each in one
// of the grays.
func (c *canvas) building(x, w, h int, col byte, windows bool, intn func(int) int) {
	bottom := c.h - 1
	top := bottom - h + 1
	for y := bottom; y >= top; y-- {
		for px := x; px < x+w; px++ {
			if y == top && (px <= x+1 || px >= x+w-2) {
				continue
			}
			cc := col
			if windows && px > x+1 && px < x+w-2 && y > top+1 && y < bottom-1 {
				rx, ry := px-(x+1), y-(top+1)
				if (rx/2)%2 == 1 && ry%2 == 1 {
					if rx%2 == 1 {
						cc = c.get(px-1, y) // the window's second pixel: its first's colour
					} else {
						cc = byte(1 + intn(2))
					}
				}
			}
			c.set(px, y, cc)
		}
	}
}

// renderGrays prints the canvas one character per pixel, a space with
// foreground and background set to the pixel's gray (ANSI: black, bright
// black, white, bright white).
func renderGrays(cv *canvas) string {
	codes := [4]string{"0;30;40m", "0;90;100m", "0;37;47m", "0;97;107m"}
	var b strings.Builder
	for y := range cv.h {
		if y > 0 {
			b.WriteByte('\n')
		}
		for x := range cv.w {
			col := cv.get(x, y)
			if col > 3 {
				col = 0
			}
			b.WriteString("\x1b[")
			b.WriteString(codes[col])
			b.WriteString(" \x1b[0m")
		}
	}
	return b.String()
}
