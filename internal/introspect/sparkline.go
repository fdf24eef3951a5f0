package introspect

import (
	"math"
	"strings"
)

// sparkline is Redis's sparkline.c sequence: samples with optional labels,
// rendered as rows of characters (LATENCY GRAPH).
type sparkline struct {
	values   []float64
	labels   []string
	nlabels  int
	min, max float64
}

const (
	sparkChars     = "_-`"
	sparkCharsFill = "_o#"
	labelMarginTop = 1
)

func (q *sparkline) add(v float64, label string) {
	if len(q.values) == 0 {
		q.min, q.max = v, v
	} else if v < q.min {
		q.min = v
	} else if v > q.max {
		q.max = v
	}
	q.values = append(q.values, v)
	q.labels = append(q.labels, label)
	if label != "" {
		q.nlabels++
	}
}

// render is sparklineRender: the sequence in slices of columns samples.
func (q *sparkline) render(b *strings.Builder, columns, rows int, fill bool) {
	for j := 0; j < len(q.values); j += columns {
		if j != 0 {
			b.WriteByte('\n')
		}
		q.renderRange(b, rows, j, min(len(q.values)-j, columns), fill)
	}
}

// renderRange is sparklineRenderRange (without the log scale, which
// LATENCY GRAPH does not use).
func (q *sparkline) renderRange(b *strings.Builder, rows, offset, n int, fill bool) {
	relmax := q.max - q.min
	if relmax == 0 {
		relmax = 1
	}
	charsetLen := len(sparkChars)
	steps := charsetLen * rows
	chars := make([]byte, n)
	for row := 0; ; row++ {
		loop := false
		for j := range chars {
			chars[j] = ' '
		}
		for j := 0; j < n; j++ {
			relval := q.values[j+offset] - q.min
			// C: step = (int) (relval*steps)/relmax, the division in double
			step := int(float64(int(relval*float64(steps))) / relmax)
			if math.IsNaN(relval) {
				step = 0
			}
			step = max(min(step, steps-1), 0)
			if row < rows {
				loop = true
				charidx := step - (rows-row-1)*charsetLen
				switch {
				case charidx >= 0 && charidx < charsetLen:
					if fill {
						chars[j] = sparkCharsFill[charidx]
					} else {
						chars[j] = sparkChars[charidx]
					}
				case fill && charidx >= charsetLen:
					chars[j] = '|'
				}
				continue
			}
			if q.nlabels > 0 && row-rows < labelMarginTop {
				loop = true
				break
			}
			if label := q.labels[j+offset]; label != "" {
				if labelChar := row - rows - labelMarginTop; len(label) > labelChar {
					loop = true
					chars[j] = label[labelChar]
				}
			}
		}
		if !loop {
			return
		}
		b.Write(chars)
		b.WriteByte('\n')
	}
}
