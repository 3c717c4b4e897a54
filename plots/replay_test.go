package plots

import (
	"bytes"
	"math"
	"reflect"
	"strings"
	"testing"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
)

// replayPoints is a replay of 30 ops of three kinds, 2 us to 50 ms, most
// within a few percent of their measurement and every seventh 20% off.
func replayPoints() []ScatterPoint {
	kinds := []string{"kernel", "copy", "host"}
	var pts []ScatterPoint
	for i := 0; i < 30; i++ {
		m := 2e-6 * math.Pow(25000, float64(i)/29)
		rel := 0.03 * math.Sin(float64(i))
		if i%7 == 3 {
			rel = 0.2
		}
		pts = append(pts, ScatterPoint{Measured: m, Predicted: m * (1 + rel), Kind: kinds[(i*5)%3]})
	}
	return pts
}

func TestScatterStructure(t *testing.T) {
	pts := replayPoints()
	p, parts, err := scatter("replay", pts)
	if err != nil {
		t.Fatal(err)
	}
	// The guides, then one scatter per kind in order of first appearance.
	var lines []*plotter.Line
	var scatters []*plotter.Scatter
	for _, x := range parts {
		switch x := x.(type) {
		case *plotter.Line:
			lines = append(lines, x)
		case *plotter.Scatter:
			scatters = append(scatters, x)
		default:
			t.Errorf("unexpected plotter %T", x)
		}
	}
	if len(lines) != 3 || len(scatters) != 3 {
		t.Fatalf("%d lines and %d scatters, want y = x, ±5%% and one per kind (3)", len(lines), len(scatters))
	}
	// Kinds appear as kernel (i=0), host (i=1: 5%3 = 2), copy (i=2: 10%3 = 1).
	want := map[int]int{} // scatter index -> points
	order := map[string]int{"kernel": 0, "host": 1, "copy": 2}
	for _, q := range pts {
		want[order[q.Kind]]++
	}
	for i, sc := range scatters {
		if sc.Len() != want[i] {
			t.Errorf("scatter %d has %d points, want %d", i, sc.Len(), want[i])
		}
		if sc.Color != SeriesColor(i) {
			t.Errorf("scatter %d colored %v, want series color %v", i, sc.Color, SeriesColor(i))
		}
	}
	// +5% and -5% dashed, then y = x solid over them, each a straight
	// line of slope 1 across the whole range (parallel on log axes).
	for i, f := range []float64{1.05, 0.95, 1} {
		l := lines[i]
		if got := len(l.Dashes) > 0; got != (f != 1) {
			t.Errorf("line %d (y = %gx) dashed: %v", i, f, got)
		}
		for _, q := range l.XYs {
			if math.Abs(q.Y/q.X-f) > 1e-12 {
				t.Errorf("line %d passes through (%g, %g), want y = %gx", i, q.X, q.Y, f)
			}
		}
		if l.XYs[0].X != p.X.Min || l.XYs[len(l.XYs)-1].X != p.X.Max {
			t.Errorf("line %d runs over x %g..%g, want the axis %g..%g", i, l.XYs[0].X, l.XYs[len(l.XYs)-1].X, p.X.Min, p.X.Max)
		}
	}
	// Both axes log, in us (the middle of 2 us..50 ms is 316 us), over one
	// range that covers every point.
	for _, a := range []*plot.Axis{&p.X, &p.Y} {
		if _, ok := a.Scale.(plot.LogScale); !ok {
			t.Errorf("axis %q scale %T, want log", a.Label.Text, a.Scale)
		}
	}
	if p.X.Label.Text != "measured (us)" || p.Y.Label.Text != "predicted (us)" {
		t.Errorf("labels %q, %q; want measured and predicted in us", p.X.Label.Text, p.Y.Label.Text)
	}
	if p.X.Min != p.Y.Min || p.X.Max != p.Y.Max {
		t.Errorf("x %g..%g, y %g..%g: want one range, so that y = x is the diagonal", p.X.Min, p.X.Max, p.Y.Min, p.Y.Max)
	}
	for _, q := range pts {
		for _, v := range []float64{q.Measured * 1e6, q.Predicted * 1e6} {
			if v < p.X.Min || v > p.X.Max {
				t.Errorf("%g us outside the axes %g..%g", v, p.X.Min, p.X.Max)
			}
		}
	}
	if p.Title.Text != "replay" {
		t.Errorf("title %q, want it as given when every op is drawn", p.Title.Text)
	}
}

func TestScatterSkipped(t *testing.T) {
	ok := ScatterPoint{Predicted: 1e-3, Measured: 1.1e-3, Kind: "kernel"}
	for _, c := range []struct {
		name, title string
		pts         []ScatterPoint
		want        string
	}{
		{"one zero", "r", []ScatterPoint{ok, {Predicted: 0, Measured: 1e-3}}, "r\n(1 op not drawn: zero or negative duration)"},
		{"zero and negative", "r", []ScatterPoint{{Predicted: 1e-3, Measured: 0}, ok, {Predicted: -1e-3, Measured: 1e-3}, {Predicted: 1e-3, Measured: -2}},
			"r\n(3 ops not drawn: zero or negative duration)"},
		{"not finite", "r", []ScatterPoint{ok, {Predicted: math.NaN(), Measured: 1e-3}, {Predicted: 1e-3, Measured: math.Inf(1)}},
			"r\n(2 ops not drawn: zero, negative or non-finite duration)"},
		{"no title", "", []ScatterPoint{ok, {}}, "(1 op not drawn: zero or negative duration)"},
	} {
		p, parts, err := scatter(c.title, c.pts)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if p.Title.Text != c.want {
			t.Errorf("%s: title %q, want %q", c.name, p.Title.Text, c.want)
		}
		if n := parts[len(parts)-1].(*plotter.Scatter).Len(); n != 1 {
			t.Errorf("%s: %d points drawn, want 1", c.name, n)
		}
	}
}

func TestScatterErrors(t *testing.T) {
	if _, err := Scatter("r", nil); err == nil {
		t.Error("no ops: no error")
	}
	_, err := Scatter("r", []ScatterPoint{{Predicted: 0, Measured: 1}, {Predicted: math.NaN(), Measured: 1}})
	if err == nil || !strings.Contains(err.Error(), "none of the 2 ops") {
		t.Errorf("no op drawable: error %v, want one that counts them", err)
	}
}

func TestScatterOnePoint(t *testing.T) {
	// One duration still gets a range (a decade around it) and draws.
	p, err := Scatter("one", []ScatterPoint{{Predicted: 5e-3, Measured: 5e-3, Kind: "kernel"}})
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Label.Text != "measured (ms)" || !(p.X.Min < 5 && p.X.Max > 5 && p.X.Max/p.X.Min >= 10*(1-1e-9)) {
		t.Errorf("x %g..%g %q, want a decade around 5 ms", p.X.Min, p.X.Max, p.X.Label.Text)
	}
	var b bytes.Buffer
	if err := Write(&b, p, Pixels(500), Pixels(500), "png"); err != nil {
		t.Fatal(err)
	}
}

func TestScatterUnit(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64 // seconds
		want   string
	}{
		{1e-7, 1e-6, "us"}, // never ns: 0.1 us reads well enough
		{2e-6, 50e-6, "us"},
		{2e-6, 50e-3, "us"}, // middle 316 us
		{1e-4, 1, "ms"},     // middle 10 ms
		{0.5, 20, "s"},
		{100, 1e4, "s"}, // never beyond s
	} {
		if got, _ := scatterUnit(c.lo, c.hi); got != c.want {
			t.Errorf("scatterUnit(%g, %g) = %s, want %s", c.lo, c.hi, got, c.want)
		}
	}
}

func TestLogTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var l []string
		prev := math.Inf(-1)
		for _, tk := range (logTicks{}).Ticks(lo, hi) {
			if tk.Value < lo || tk.Value > hi || tk.Value <= prev {
				t.Errorf("%g..%g: tick %g out of range or order", lo, hi, tk.Value)
			}
			prev = tk.Value
			if tk.Label != "" {
				l = append(l, tk.Label)
			}
		}
		return l
	}
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		// 4.6 decades: powers of ten, as plain numbers.
		{1.6, 63000, []string{"10", "100", "1000", "10k"}},
		{0.0016, 63, []string{"0.01", "0.1", "1", "10"}},
		// 1.5 decades: 1, 2 and 5 times each.
		{3, 100, []string{"5", "10", "20", "50", "100"}},
		// Under a decade: each of 1 to 9 times the power of ten, the low
		// end, which the log axis stretches, labelled too.
		{2, 9, []string{"2", "3", "4", "5", "6", "7", "8", "9"}},
		{85, 614, []string{"90", "100", "200", "300", "400", "500", "600"}},
		// Fewer than 3 of them: evenly spaced round values.
		{410, 490, []string{"420", "440", "460", "480"}},
		// 12 decades: every second power of ten.
		{1e-6, 1e6, []string{"0.000001", "0.0001", "0.01", "1", "100", "10k", "1M"}},
	} {
		if got := labels(c.lo, c.hi); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%g..%g: labels %q, want %q", c.lo, c.hi, got, c.want)
		}
	}
}

func TestScatterRender(t *testing.T) {
	render := func(format string) []byte {
		pts := replayPoints()
		pts = append(pts, ScatterPoint{Predicted: 0, Measured: 1e-5, Kind: "copy"})
		p, err := Scatter("replay on h200", pts)
		if err != nil {
			t.Fatal(err)
		}
		var b bytes.Buffer
		if err := Write(&b, p, Pixels(700), Pixels(700), format); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	a, b := render("svg"), render("svg")
	if !bytes.Equal(a, b) {
		t.Fatal("two renderings of the same points differ")
	}
	// The text a reader sees: title, note, axes, legend.
	for _, s := range []string{"replay on h200", "(1 op not drawn: zero or negative duration)", "measured (us)", "predicted (us)",
		"kernel", "host", "copy", "y = x", "±5%", "1000"} {
		if !bytes.Contains(a, []byte(">"+s+"<")) {
			t.Errorf("the SVG has no text %q", s)
		}
	}
	png := render("png")
	if len(png) < 1000 || !bytes.HasPrefix(png, []byte("\x89PNG\r\n\x1a\n")) {
		t.Errorf("PNG of %d bytes starting %q", len(png), png[:min(8, len(png))])
	}
}
