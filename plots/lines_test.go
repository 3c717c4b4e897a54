package plots

import (
	"math"
	"testing"

	"gonum.org/v1/plot/plotter"
)

// TestLinesDoesNotJoinCategories: a sweep over topology names draws
// points, not lines (a line from dgx-h100 to pcie-8x-4090 would suggest
// machines between them), and series with the same value at a category
// stand side by side, each within its category; numeric x is joined.
func TestLinesDoesNotJoinCategories(t *testing.T) {
	series := []Series{
		{Name: "overlap", X: []float64{0, 1}, Y: []float64{70, 420}},
		{Name: "no overlap, 25 MiB", X: []float64{0, 1}, Y: []float64{78, 545}},
		{Name: "no overlap, 200 MiB", X: []float64{0, 1}, Y: []float64{78, 545}},
	}
	_, parts, err := lines("t", "topo", "ms", series, false, []string{"dgx-h100", "pcie-8x-4090"})
	if err != nil {
		t.Fatal(err)
	}
	var xs [][]float64 // per scatter, the x of its points
	for _, p := range parts {
		switch p := p.(type) {
		case *plotter.Line:
			t.Errorf("a line through %v: categories are not joined", p.XYs)
		case *plotter.Scatter:
			var x []float64
			for _, q := range p.XYs {
				x = append(x, q.X)
			}
			xs = append(xs, x)
		}
	}
	if len(xs) != len(series) {
		t.Fatalf("%d scatters, want one per series (%d)", len(xs), len(series))
	}
	for c := 0; c < 2; c++ {
		for i := range xs {
			if d := xs[i][c] - float64(c); math.Abs(d) > 0.25 {
				t.Errorf("series %d at category %d: x = %g, want within 0.25 of %d", i, c, xs[i][c], c)
			}
			if i > 0 && !(xs[i][c] > xs[i-1][c]) {
				t.Errorf("category %d: series %d at x = %g, not right of series %d at %g: equal values would hide each other", c, i, xs[i][c], i-1, xs[i-1][c])
			}
		}
	}
	// The same values on a numeric axis are joined, and not shifted.
	_, parts, err = lines("t", "workers", "ms", series, false, nil)
	if err != nil {
		t.Fatal(err)
	}
	nlines := 0
	for _, p := range parts {
		switch p := p.(type) {
		case *plotter.Line:
			nlines++
		case *plotter.Scatter:
			if p.XYs[0].X != 0 || p.XYs[1].X != 1 {
				t.Errorf("numeric x shifted: %v", p.XYs)
			}
		}
	}
	if nlines != len(series) {
		t.Errorf("%d lines on a numeric axis, want %d", nlines, len(series))
	}
}
