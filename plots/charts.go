package plots

import (
	"fmt"
	"image/color"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// Series is one named curve.
type Series struct {
	Name string
	X, Y []float64
}

// Lines draws series against a shared x axis (logarithmic when logX) with
// points marked, a legend when there is more than one series, and labelled
// axes. Categorical x values use Ticks names.
func Lines(title, xlabel, ylabel string, series []Series, logX bool, ticks []string) (*plot.Plot, error) {
	p := newPlot(title, xlabel, ylabel)
	if logX {
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
	}
	if ticks != nil {
		var ts []plot.Tick
		for i, t := range ticks {
			ts = append(ts, plot.Tick{Value: float64(i), Label: t})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ts)
		p.X.Min, p.X.Max = -0.5, float64(len(ticks))-0.5
	}
	p.Y.Min = 0
	for i, s := range series {
		pts := make(plotter.XYs, 0, len(s.X))
		for k := range s.X {
			if finite(s.X[k]) && finite(s.Y[k]) && (!logX || s.X[k] > 0) {
				pts = append(pts, plotter.XY{X: s.X[k], Y: s.Y[k]})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, sc, err := plotter.NewLinePoints(pts)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.Color(i)
		l.Width = vg.Points(1.5)
		sc.Color = plotutil.Color(i)
		sc.Shape = plotutil.Shape(i)
		p.Add(l, sc)
		if len(series) > 1 {
			p.Legend.Add(s.Name, l, sc)
		}
	}
	p.Legend.Top = true
	return p, nil
}

// heatPalette runs from white to a mid blue, dark enough to tell values
// apart and light enough for black text.
var heatPalette = func() palette.Palette {
	const n = 64
	cs := make([]color.Color, n)
	for i := range cs {
		f := float64(i) / (n - 1)
		mix := func(a, b float64) uint8 { return uint8(math.Round(a + (b-a)*f)) }
		cs[i] = color.RGBA{mix(255, 80), mix(255, 150), mix(255, 205), 255}
	}
	return palette.Palette(simplePalette(cs))
}()

type simplePalette []color.Color

func (p simplePalette) Colors() []color.Color { return p }

// grid is a matrix for plotter.HeatMap.
type grid struct {
	v [][]float64 // rows top to bottom
}

func (g grid) Dims() (c, r int)   { return len(g.v[0]), len(g.v) }
func (g grid) Z(c, r int) float64 { return g.v[len(g.v)-1-r][c] }
func (g grid) X(c int) float64    { return float64(c) }
func (g grid) Y(r int) float64    { return float64(r) }

// Heatmap draws a matrix with a value (and a note) in each cell: rows and
// columns labelled, empty cells (NaN) left blank.
func Heatmap(title, xlabel, ylabel string, rows, cols []string, v [][]float64, notes [][]string, unit string) (*plot.Plot, error) {
	if len(rows) == 0 || len(cols) == 0 {
		return nil, fmt.Errorf("an empty matrix")
	}
	p := newPlot(title, xlabel, ylabel)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range v {
		for _, x := range row {
			if finite(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	if !finite(lo) {
		lo, hi = 0, 1
	}
	if hi == lo {
		hi = lo + 1
	}
	// Color is proportional to the value from zero (or from the lowest,
	// for a matrix with negative values): 21.6 and 21.7 look alike.
	if lo > 0 {
		lo = 0
	}
	h := plotter.NewHeatMap(grid{v: fill(v, lo)}, heatPalette)
	h.Min, h.Max = lo, hi
	h.NaN = color.White
	p.Add(h)
	var labels plotter.XYLabels
	for r := range rows {
		for c := range cols {
			x := v[r][c]
			if !finite(x) {
				continue
			}
			text := strconv.FormatFloat(x, 'f', digits(x), 64)
			if notes != nil && notes[r][c] != "" {
				text += "\n" + notes[r][c]
			}
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(c), Y: float64(len(rows) - 1 - r)})
			labels.Labels = append(labels.Labels, text)
		}
	}
	if len(labels.Labels) > 0 {
		l, err := plotter.NewLabels(labels)
		if err != nil {
			return nil, err
		}
		for i := range l.TextStyle {
			l.TextStyle[i].XAlign = draw.XCenter
			l.TextStyle[i].YAlign = draw.YCenter
		}
		p.Add(l)
	}
	xt := make([]plot.Tick, len(cols))
	for i, c := range cols {
		xt[i] = plot.Tick{Value: float64(i), Label: c}
	}
	yt := make([]plot.Tick, len(rows))
	for i, r := range rows {
		yt[i] = plot.Tick{Value: float64(len(rows) - 1 - i), Label: r}
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	p.X.Min, p.X.Max = -0.5, float64(len(cols))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(rows))-0.5
	if unit != "" {
		first, rest, more := strings.Cut(p.Title.Text, "\n")
		p.Title.Text = first + " (" + unit + ")"
		if more {
			p.Title.Text += "\n" + rest
		}
	}
	return p, nil
}

func fill(v [][]float64, lo float64) [][]float64 {
	out := make([][]float64, len(v))
	for i, row := range v {
		out[i] = make([]float64, len(row))
		for j, x := range row {
			if finite(x) {
				out[i][j] = x
			} else {
				out[i][j] = math.NaN()
			}
		}
	}
	return out
}

func digits(x float64) int {
	switch a := math.Abs(x); {
	case a >= 100:
		return 0
	case a >= 10:
		return 1
	}
	return 2
}

// SizeTicks marks a logarithmic axis of byte counts at powers of 4 (or of
// 16 over a wide range) with labels in binary units: "1 KiB", "4 MiB".
type SizeTicks struct{}

// Ticks implements plot.Ticker.
func (SizeTicks) Ticks(lo, hi float64) []plot.Tick {
	if lo <= 0 {
		lo = 1
	}
	if hi < lo {
		return nil
	}
	step := 2.0 // exponent of 2 between labels
	for math.Log2(hi/lo)/step > 10 {
		step *= 2
	}
	var ts []plot.Tick
	for e := math.Ceil(math.Log2(lo)); e <= math.Log2(hi)+1e-9; e++ {
		v := math.Exp2(e)
		if math.Mod(e, step) == 0 {
			ts = append(ts, plot.Tick{Value: v, Label: SizeLabel(v)})
		} else {
			ts = append(ts, plot.Tick{Value: v})
		}
	}
	return ts
}

// SizeLabel writes a byte count in binary units.
func SizeLabel(v float64) string {
	for _, u := range []struct {
		s string
		b float64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if v >= u.b {
			return strconv.FormatFloat(v/u.b, 'g', 4, 64) + " " + u.s
		}
	}
	return strconv.FormatFloat(v, 'g', 4, 64) + " B"
}
