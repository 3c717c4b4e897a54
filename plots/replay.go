package plots

import (
	"fmt"
	"image/color"
	"math"
	"slices"
	"strconv"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
)

// ScatterPoint is one op of a replay: its predicted and measured durations
// in seconds, and its kind ("kernel", "copy", "host"...), which sets its
// color, marker and legend entry. An empty kind is drawn as "other".
type ScatterPoint struct {
	Predicted, Measured float64
	Kind                string
}

// scatterTolerance is the relative error the dashed lines mark: ±5%.
const scatterTolerance = 0.05

// Scatter draws each op's measured duration (x) against its predicted one
// (y) on log-log axes sharing one range, over the line y = x (a perfect
// prediction) and dashed lines at ±5% of it: a point above the band was
// predicted too slow, one below it too fast. Ops are colored and marked by
// kind, kinds in order of first appearance, with a legend (Write draws it
// beside the data). Both axes are in one time unit chosen from the data:
// us, ms or s, whichever puts the middle of the range (on the log scale)
// between 1 and 1000.
//
// An op whose durations are not both positive and finite cannot be placed
// on a log axis: it is skipped, and the count is added to the title.
// Scatter fails if there are no ops, or none that can be drawn. Square
// output (Write with w = h) makes y = x the diagonal.
func Scatter(title string, pts []ScatterPoint) (*plot.Plot, error) {
	p, _, err := scatter(title, pts)
	return p, err
}

// scatter is Scatter, also returning what it added to the plot (the
// guide lines +5%, -5% and y = x, then a scatter per kind) for tests to
// read.
func scatter(title string, pts []ScatterPoint) (*plot.Plot, []plot.Plotter, error) {
	if len(pts) == 0 {
		return nil, nil, fmt.Errorf("no ops to draw")
	}
	// Kinds in order of first appearance: a slice and an index, so that
	// no map order reaches the picture.
	var kinds []string
	var byKind []plotter.XYs
	index := map[string]int{}
	lo, hi := math.Inf(1), math.Inf(-1)
	skipped, nonFinite := 0, false
	for _, q := range pts {
		if !(q.Predicted > 0 && q.Measured > 0 && finite(q.Predicted) && finite(q.Measured)) {
			skipped++
			if !finite(q.Predicted) || !finite(q.Measured) {
				nonFinite = true
			}
			continue
		}
		k := q.Kind
		if k == "" {
			k = "other"
		}
		i, ok := index[k]
		if !ok {
			i = len(kinds)
			index[k] = i
			kinds = append(kinds, k)
			byKind = append(byKind, nil)
		}
		byKind[i] = append(byKind[i], plotter.XY{X: q.Measured, Y: q.Predicted})
		lo = math.Min(lo, math.Min(q.Measured, q.Predicted))
		hi = math.Max(hi, math.Max(q.Measured, q.Predicted))
	}
	if len(kinds) == 0 {
		return nil, nil, fmt.Errorf("none of the %d ops has a positive, finite predicted and measured duration", len(pts))
	}

	unit, scale := scatterUnit(lo, hi)
	// A margin of a tenth of a decade keeps the extreme markers inside the
	// frame; a single duration still gets a range to draw.
	pad := math.Pow(10, 0.1)
	lo, hi = lo*1e12/scale/pad, hi*1e12/scale*pad
	if hi/lo < 10 {
		mid := math.Sqrt(lo * hi)
		lo, hi = mid/math.Sqrt(10), mid*math.Sqrt(10)
	}

	if skipped > 0 {
		why := "zero or negative duration"
		if nonFinite {
			why = "zero, negative or non-finite duration"
		}
		ops := "ops"
		if skipped == 1 {
			ops = "op"
		}
		note := fmt.Sprintf("(%d %s not drawn: %s)", skipped, ops, why)
		if title == "" {
			title = note
		} else {
			title += "\n" + note
		}
	}
	p := newPlot(title, "measured ("+unit+")", "predicted ("+unit+")")

	var parts []plot.Plotter
	// The guides first, under the points: ±5% dashed, then y = x solid
	// over them (over 4 decades the three are a few pixels apart).
	guide := func(f float64, dashed bool) (*plotter.Line, error) {
		l, err := plotter.NewLine(plotter.XYs{{X: lo, Y: lo * f}, {X: hi, Y: hi * f}})
		if err != nil {
			return nil, err
		}
		l.Width = vg.Points(1)
		l.Color = color.RGBA{90, 90, 90, 255}
		if dashed {
			l.Color = color.RGBA{150, 150, 150, 255}
			l.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		return l, nil
	}
	exact, err := guide(1, false)
	if err != nil {
		return nil, nil, err
	}
	over, err := guide(1+scatterTolerance, true)
	if err != nil {
		return nil, nil, err
	}
	under, err := guide(1-scatterTolerance, true)
	if err != nil {
		return nil, nil, err
	}
	parts = append(parts, over, under, exact)

	var scatters []*plotter.Scatter
	for i, xys := range byKind {
		for j := range xys {
			xys[j].X *= 1e12 / scale
			xys[j].Y *= 1e12 / scale
		}
		sc, err := plotter.NewScatter(xys)
		if err != nil {
			return nil, nil, err
		}
		sc.Color = SeriesColor(i)
		sc.Shape = plotutil.Shape(i)
		sc.Radius = vg.Points(3)
		parts = append(parts, sc)
		scatters = append(scatters, sc)
	}
	p.Add(parts...)
	for i, k := range kinds {
		p.Legend.Add(k, scatters[i])
	}
	p.Legend.Add("y = x", exact)
	p.Legend.Add(fmt.Sprintf("±%g%%", scatterTolerance*100), over)
	p.Legend.Top = true

	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		a.Scale = plot.LogScale{}
		a.Tick.Marker = logTicks{}
		a.Min, a.Max = lo, hi
	}
	return p, parts, nil
}

// scatterUnit picks the time unit of a log axis over lo..hi seconds (both
// positive): us, ms or s, the first in which the middle of the range on
// the log scale, sqrt(lo*hi), is under 1000, so that neither end needs
// many digits. It returns the unit and its length in picoseconds, as
// timeUnit does.
func scatterUnit(lo, hi float64) (string, float64) {
	mid := math.Sqrt(lo*hi) * 1e12 // ps
	unit, scale := "us", 1e6
	for mid/scale >= 1000 && unit != "s" {
		unit, scale = largerUnit(unit, scale)
	}
	return unit, scale
}

// logTicks marks a logarithmic axis with labels that read as plain
// numbers ("0.01", "2", "500", never "1e+03"): every power of ten over 3
// to 7 decades, 1, 2 and 5 times each over 1 to 3, each of 1 to 9 times
// each over less than a decade (evenly spaced values, NiceTicks, where that
// gives fewer than 3), and every second or third power of
// ten beyond 7 decades; unlabelled ticks mark the values between.
type logTicks struct{}

// Ticks implements plot.Ticker.
func (logTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(lo > 0) || !(hi > lo) || !finite(lo) || !finite(hi) {
		return nil
	}
	decades := math.Log10(hi / lo)
	var labelled, minor []int // mantissas 1..9 of each power of ten
	every := 1                // label every n-th power of ten
	switch {
	case decades < 1:
		// Each mantissa, so that the low end, which a log axis stretches,
		// has its labels too (evenly spaced values left the lowest 40% of
		// 85 to 614 unlabelled); too few of them in a narrow range: evenly
		// spaced values.
		labelled = []int{1, 2, 3, 4, 5, 6, 7, 8, 9}
	case decades < 3:
		labelled, minor = []int{1, 2, 5}, []int{3, 4, 6, 7, 8, 9}
	case decades <= 7:
		labelled, minor = []int{1}, []int{2, 3, 4, 5, 6, 7, 8, 9}
	default:
		labelled = []int{1}
		every = int(math.Ceil(decades / 7))
	}
	var ts []plot.Tick
	for e := int(math.Floor(math.Log10(lo))); e <= int(math.Ceil(math.Log10(hi))); e++ {
		add := func(m int, label bool) {
			// Parse the decimal form: 5e-3 is the float nearest 0.005,
			// which 5*math.Pow10(-3) need not be.
			v, _ := strconv.ParseFloat(strconv.Itoa(m)+"e"+strconv.Itoa(e), 64)
			if v < lo*(1-1e-9) || v > hi*(1+1e-9) {
				return
			}
			t := plot.Tick{Value: v}
			if label {
				t.Label = shortNumber(v)
			}
			ts = append(ts, t)
		}
		for m := 1; m <= 9; m++ {
			switch {
			case slices.Contains(labelled, m):
				add(m, e%every == 0)
			case slices.Contains(minor, m):
				add(m, false)
			}
		}
	}
	if decades < 1 && len(ts) < 3 {
		return NiceTicks{N: 5}.Ticks(lo, hi)
	}
	return ts
}
