package plots

import (
	"fmt"
	"image/color"
	"math"
	"sort"
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
// axes. Points are joined in order of x; a missing value (NaN) breaks the
// line, so that nothing is drawn across a failed point. A numeric x axis
// reaches xRoom of its range beyond the first and last points.
//
// Categorical x values (positions 0, 1, ...) use ticks as their names and
// are not joined: a line between two topologies would suggest values
// between them. Their points are larger, and each series' are shifted a
// little to its own side of the category (dodged), so that series with
// equal values side by side all show.
func Lines(title, xlabel, ylabel string, series []Series, logX bool, ticks []string) (*plot.Plot, error) {
	p, _, err := lines(title, xlabel, ylabel, series, logX, ticks)
	return p, err
}

// lines is Lines, also returning what it added to the plot, in order, for
// tests to read.
func lines(title, xlabel, ylabel string, series []Series, logX bool, ticks []string) (*plot.Plot, []plot.Plotter, error) {
	p := newPlot(title, xlabel, ylabel)
	var parts []plot.Plotter
	add := func(x plot.Plotter) {
		p.Add(x)
		parts = append(parts, x)
	}
	categorical := ticks != nil
	if categorical {
		var ts []plot.Tick
		for i, t := range ticks {
			ts = append(ts, plot.Tick{Value: float64(i), Label: t})
		}
		p.X.Tick.Marker = plot.ConstantTicks(ts)
		p.X.Min, p.X.Max = -0.5, float64(len(ticks))-0.5
	}
	p.Y.Min = 0
	lo, hi := math.Inf(1), math.Inf(-1)
	for i, s := range series {
		type xy struct{ x, y float64 }
		var pts []xy
		for k := range s.X {
			if finite(s.X[k]) && (!logX || s.X[k] > 0) {
				pts = append(pts, xy{s.X[k], s.Y[k]})
			}
		}
		sort.SliceStable(pts, func(a, b int) bool { return pts[a].x < pts[b].x })
		var all plotter.XYs
		var run plotter.XYs
		style := func(l *plotter.Line) {
			l.Color = SeriesColor(i)
			l.Width = vg.Points(1.5)
		}
		flush := func() error {
			if len(run) > 1 && !categorical {
				l, err := plotter.NewLine(run)
				if err != nil {
					return err
				}
				style(l)
				add(l)
			}
			run = nil
			return nil
		}
		dodge := 0.0
		if categorical {
			dodge = dodgeOffset(i, len(series))
		}
		for _, q := range pts {
			if !finite(q.y) {
				if err := flush(); err != nil {
					return nil, nil, err
				}
				continue
			}
			run = append(run, plotter.XY{X: q.x, Y: q.y})
			all = append(all, plotter.XY{X: q.x + dodge, Y: q.y})
			lo, hi = math.Min(lo, q.x), math.Max(hi, q.x)
		}
		if err := flush(); err != nil {
			return nil, nil, err
		}
		if len(all) == 0 {
			continue
		}
		sc, err := plotter.NewScatter(all)
		if err != nil {
			return nil, nil, err
		}
		sc.Color = SeriesColor(i)
		sc.Shape = plotutil.Shape(i)
		if categorical {
			sc.Radius = vg.Points(4)
		}
		add(sc)
		if len(series) > 1 {
			if categorical {
				p.Legend.Add(s.Name, sc)
				continue
			}
			thumb, _ := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}})
			style(thumb)
			p.Legend.Add(s.Name, thumb, sc)
		}
	}
	if logX {
		// A log axis needs a positive range that is not a single point.
		if !finite(lo) {
			lo, hi = 1, 10
		}
		if hi <= lo {
			lo, hi = lo/2, hi*2
		}
		p.X.Scale = plot.LogScale{}
		p.X.Tick.Marker = plot.LogTicks{Prec: -1}
		p.X.Min, p.X.Max = lo/math.Pow(hi/lo, xRoom), hi*math.Pow(hi/lo, xRoom)
	} else if !categorical && finite(lo) && hi > lo {
		p.X.Min, p.X.Max = lo-xRoom*(hi-lo), hi+xRoom*(hi-lo)
	}
	// A little room above the highest point, so that its marker is not
	// cut by the frame.
	if p.Y.Max > p.Y.Min {
		p.Y.Max += 0.04 * (p.Y.Max - p.Y.Min)
	}
	p.Legend.Top = true
	return p, parts, nil
}

// dodgeOffset is how far from its category's position the points of the
// i-th of n series are drawn: evenly spread, centred on the category, at
// most 0.1 apart and all within 0.25 of it, so that categories stay apart.
func dodgeOffset(i, n int) float64 {
	if n < 2 {
		return 0
	}
	step := math.Min(0.1, 0.5/float64(n-1))
	return (float64(i) - float64(n-1)/2) * step
}

// xRoom is the share of the x range Lines leaves free beyond the first
// and the last point: their markers and tick labels then sit inside the
// frame, off the y axis and off the picture's edge.
const xRoom = 0.03

// LogY puts p's y axis, as Lines drew it, on a log scale when every value
// of series is positive and the largest is at least span times the
// smallest, and reports whether it did. A span of 100 (two decades) keeps
// the small points of a sweep of sizes from 1 MiB to 1 GiB off the zero
// a linear axis flattens them onto; over a log x axis a smaller span
// draws a power law (throughput growing with the GPUs) as a straight
// line, as a log-log plot does.
func LogY(p *plot.Plot, series []Series, span float64) bool {
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, s := range series {
		for _, y := range s.Y {
			if math.IsNaN(y) {
				continue
			}
			if !(y > 0) || math.IsInf(y, 0) {
				return false
			}
			lo, hi = math.Min(lo, y), math.Max(hi, y)
		}
	}
	if !(hi >= span*lo) {
		return false
	}
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = logTicks{}
	// Room on both sides of the extremes, as on a linear axis above.
	p.Y.Min, p.Y.Max = lo/math.Pow(hi/lo, 0.04), hi*math.Pow(hi/lo, 0.04)
	return true
}

// seriesColors tell up to 20 series apart (Tableau 20: its 10 colors, then
// their light variants).
var seriesColors = []color.RGBA{
	{31, 119, 180, 255}, {255, 127, 14, 255}, {44, 160, 44, 255}, {214, 39, 40, 255}, {148, 103, 189, 255},
	{140, 86, 75, 255}, {227, 119, 194, 255}, {127, 127, 127, 255}, {188, 189, 34, 255}, {23, 190, 207, 255},
	{174, 199, 232, 255}, {255, 187, 120, 255}, {152, 223, 138, 255}, {255, 152, 150, 255}, {197, 176, 213, 255},
	{196, 156, 148, 255}, {247, 182, 210, 255}, {199, 199, 199, 255}, {219, 219, 141, 255}, {158, 218, 229, 255},
}

// SeriesColor is the color of the i-th series (GPU, link, curve).
func SeriesColor(i int) color.Color { return seriesColors[i%len(seriesColors)] }

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
// columns labelled, empty cells (NaN) left blank but for their note.
//
// It draws no color scale: every cell prints its value, and the color,
// from white at zero to blue at the matrix's largest value, only ranks
// the cells of this matrix. A scale would repeat the printed numbers less
// precisely and, on a sheet of matrices (WriteSheet), invite comparing
// colors across matrices whose scales differ.
//
// WriteSheet reads the matrix's shape from the x axis's ticker
// (matrixTicks), to give every matrix of a sheet cells of one size and to
// leave out those with no value at all.
func Heatmap(title, xlabel, ylabel string, rows, cols []string, v [][]float64, notes [][]string, unit string) (*plot.Plot, error) {
	if len(rows) == 0 || len(cols) == 0 {
		return nil, fmt.Errorf("an empty matrix")
	}
	p := newPlot(title, xlabel, ylabel)
	// Room under a title of two lines, whose second (a key) otherwise
	// sits on the top row of cells.
	p.Title.Padding = vg.Points(10)
	lo, hi := math.Inf(1), math.Inf(-1)
	for _, row := range v {
		for _, x := range row {
			if finite(x) {
				lo, hi = math.Min(lo, x), math.Max(hi, x)
			}
		}
	}
	lo0 := lo // +Inf when no cell has a value
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
			note := ""
			if notes != nil {
				note = notes[r][c]
			}
			var text string
			switch {
			case finite(x) && note != "":
				text = strconv.FormatFloat(x, 'f', digits(x), 64) + "\n" + note
			case finite(x):
				text = strconv.FormatFloat(x, 'f', digits(x), 64)
			case note != "":
				text = note // an empty cell that says why
			default:
				continue
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
	name, _, _ := strings.Cut(title, "\n")
	p.X.Tick.Marker = matrixTicks{ConstantTicks: xt, name: name, rows: len(rows), cols: len(cols), empty: !finite(lo0)}
	p.Y.Tick.Marker = plot.ConstantTicks(yt)
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

// matrixTicks labels a heatmap's columns, and tells WriteSheet the
// matrix's name (the title's first line), shape and whether it has no
// value at all.
type matrixTicks struct {
	plot.ConstantTicks
	name       string
	rows, cols int
	empty      bool
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
