package main

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"gonum.org/v1/plot"

	"gpusim/sim"
)

// TestGeometricSweepsGetALogAxis: powers of two, and decades, read best on
// a log axis; evenly spaced values, a narrow range, two values, or a zero
// do not.
func TestGeometricSweepsGetALogAxis(t *testing.T) {
	for _, tc := range []struct {
		xs   []float64
		want bool
	}{
		{[]float64{1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024}, true},
		{[]float64{1024, 1, 32}, true}, // in any order
		{[]float64{1, 10, 100, 1000}, true},
		{[]float64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, false}, // ratios under 1.5
		{[]float64{1, 2, 4}, false},                       // a factor of 4
		{[]float64{1, 16}, false},                         // two values
		{[]float64{0, 2, 4, 8, 16}, false},                // no log of 0
		{[]float64{-8, -4, 1, 2}, false},
	} {
		if got := geometric(tc.xs); got != tc.want {
			t.Errorf("geometric(%v) = %v, want %v", tc.xs, got, tc.want)
		}
	}
}

// A --set value is one line: a newline went into the summary, the CSV and
// the plots' titles as it was.
func TestSetRefusesControlCharacters(t *testing.T) {
	s := setFlag{}
	for _, v := range []string{"batch=1\nGiB", "batch=1\rGiB", "k\x00=1", "bucket=25\u2028MB", "name=a\u202eb"} {
		if err := s.Set(v); err == nil {
			t.Errorf("--set %q accepted", v)
		}
	}
	if err := s.Set("batch=1 GiB"); err != nil || s["batch"] != "1 GiB" {
		t.Errorf("--set batch=1 GiB: %v, %v", err, s)
	}
}

// calibrate's --budget reads Go durations and times as --from reads them;
// neither takes a number without its unit (but 0), as a scenario's
// durations do not: --from 40 meant as ms drew from 40 s.
func TestBudgetReadsTimesAsTheOtherFlags(t *testing.T) {
	for in, want := range map[string]time.Duration{"2m": 2 * time.Minute, "1m30s": 90 * time.Second, "1.5 min": 90 * time.Second, "90 s": 90 * time.Second, "250ms": 250 * time.Millisecond, "0": 0} {
		var b budgetFlag
		if err := b.Set(in); err != nil || b.d != want {
			t.Errorf("--budget %s: %v, %v; want %v", in, b.d, err, want)
		}
	}
	for _, in := range []string{"abc", "1e300 s", "NaN", "10", " 2.5 "} {
		var b budgetFlag
		if err := b.Set(in); err == nil {
			t.Errorf("--budget %s accepted as %v", in, b.d)
		}
	}
	for in, want := range map[string]sim.Time{"0": 0, "1.5ms": 1500 * sim.Microsecond, "40 us": 40 * sim.Microsecond} {
		var f timeFlag
		if err := f.Set(in); err != nil || f.t != want {
			t.Errorf("--from %s: %v, %v; want %v", in, f.t, err, want)
		}
	}
	for in, want := range map[string]string{"40": `"40" has no unit: give one, such as 40us, 40ms or 40s`, "0.05": `"0.05" has no unit: give one, such as 0.05us, 0.05ms or 0.05s`} {
		var f timeFlag
		if err := f.Set(in); err == nil || err.Error() != want {
			t.Errorf("--from %s: %v; want %q", in, err, want)
		}
	}
}

// nccl-tests --plot of sizes that are all 0 bytes (-e under one element)
// is refused, naming the element's size, and writes no file: it wrote an
// empty plot, a log axis with nothing on it. Sizes of 0 beside others are
// left off the plot.
func TestNCCLTestsPlotOfNoSize(t *testing.T) {
	dir := t.TempDir()
	png := filepath.Join(dir, "n.png")
	out, errb, code := runCmd(t, "nccl-tests", "--topology", "dgx-h100", "-b", "0", "-e", "7", "-d", "double", "--plot", png)
	want := "gpusim nccl-tests: --plot " + png + ": every size is 0 bytes (rounded down to whole elements of -d, 8 bytes each, as nccl-tests does), which has no bandwidth to draw; give -e of at least 8\n"
	if code != 2 || out != "" || errb != want {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing and %q", code, out, errb, want)
	}
	if _, err := os.Stat(png); err == nil {
		t.Errorf("%s was written", png)
	}
	if _, errb, code := runCmd(t, "nccl-tests", "--topology", "dgx-h100", "-b", "0", "-e", "1K", "-i", "512", "--plot", png); code != 0 {
		t.Errorf("sizes 0, 512, 1K: exit %d: %s", code, errb)
	}
	if _, err := os.Stat(png); err != nil {
		t.Errorf("sizes 0, 512, 1K: %v", err)
	}
	ag := filepath.Join(dir, "ag.png")
	// An all-gather's size is split over its 8 ranks, 16 bytes each at
	// least: 127 bytes is none, 128 one piece a rank.
	_, errb, code = runCmd(t, "nccl-tests", "--topology", "dgx-h100", "--op", "all_gather", "-b", "64", "-e", "127", "--plot", ag)
	want = "gpusim nccl-tests: --plot " + ag + ": every size is 0 bytes (rounded down to 16 bytes a rank for all_gather, over 8 ranks, as nccl-tests does), which has no bandwidth to draw; give -e of at least 128\n"
	if code != 2 || errb != want {
		t.Errorf("all_gather of 64-127 bytes: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
	if _, errb, code := runCmd(t, "nccl-tests", "--topology", "dgx-h100", "--op", "all_gather", "-b", "128", "-e", "128", "--plot", ag); code != 0 {
		t.Errorf("all_gather of 128 bytes: exit %d: %s", code, errb)
	}
}

// Sweep values with units are quantities of one kind, read in its base
// unit; plain numbers, names, or kinds mixed are not.
func TestQuantityValues(t *testing.T) {
	for _, tc := range []struct {
		xs   []string
		want []float64 // nil: not quantities
	}{
		{[]string{"1 MiB", "4MiB", "1 GiB"}, []float64{1 << 20, 4 << 20, 1 << 30}},
		{[]string{"2 us", "5 us", "1 ms"}, []float64{2e-6, 5e-6, 1e-3}},
		{[]string{"0", "1 KiB"}, []float64{0, 1024}}, // a bare 0 among sizes
		{[]string{"25 GB/s", "400 Gb/s"}, []float64{25e9, 50e9}},
		{[]string{"1", "2", "4"}, nil}, // no unit: plain numbers
		{[]string{"1 MiB", "2 us"}, nil},
		{[]string{"dgx-h100", "1 MiB"}, nil},
	} {
		got, ok := quantityValues(tc.xs)
		same := len(got) == len(tc.want)
		for i := 0; same && i < len(got); i++ {
			same = math.Abs(got[i]-tc.want[i]) <= 1e-12*tc.want[i]
		}
		if ok != (tc.want != nil) || ok && !same {
			t.Errorf("quantityValues(%q) = %v, %v; want %v", tc.xs, got, ok, tc.want)
		}
	}
}

// A sweep of sizes plots at the sizes, on a log axis labelled as the
// scenario writes them, and its makespans, growing 16 times, on a log axis
// too; idle shares growing as much stay linear (no two decades). A sweep
// of names keeps equally spaced categories.
func TestSweepPlotOfQuantities(t *testing.T) {
	tab := &sweepTable{Scenario: "s", Vars: []string{"size"}, Total: 3, Rows: []sweepRow{
		{Index: 0, Values: []string{"1 MiB"}, MakespanS: 1e-3, IdleMean: 0.01},
		{Index: 1, Values: []string{"4 MiB"}, MakespanS: 4e-3, IdleMean: 0.04},
		{Index: 2, Values: []string{"16 MiB"}, MakespanS: 16e-3, IdleMean: 0.16},
	}}
	p, err := sweepPlot(tab, "makespan")
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.X.Scale.(plot.LogScale); !ok {
		t.Errorf("x scale %T, want a log scale", p.X.Scale)
	}
	if _, ok := p.Y.Scale.(plot.LogScale); !ok {
		t.Errorf("makespan: y scale %T, want a log scale", p.Y.Scale)
	}
	var got []string
	for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
		got = append(got, fmt.Sprintf("%g=%s", tk.Value, tk.Label))
	}
	if want := []string{"1.048576e+06=1 MiB", "4.194304e+06=4 MiB", "1.6777216e+07=16 MiB"}; !slices.Equal(got, want) {
		t.Errorf("x ticks %q, want %q", got, want)
	}
	if p, err = sweepPlot(tab, "idle_mean"); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Y.Scale.(plot.LogScale); ok {
		t.Error("idle_mean growing 16 times: a log y axis, want a linear one")
	}
	// Sizes with a 0, or one size written twice, do not grow by factors:
	// categories, whose labels stay apart.
	for _, vs := range [][]string{{"0 B", "1 MiB", "1 GiB"}, {"1 MiB", "1048576 B", "1 GiB"}} {
		for i, v := range vs {
			tab.Rows[i].Values[0] = v
		}
		if p, err = sweepPlot(tab, "makespan"); err != nil {
			t.Fatal(err)
		}
		if _, ok := p.X.Scale.(plot.LogScale); ok || p.X.Tick.Marker == nil {
			t.Errorf("%q: x scale %T; want categories", vs, p.X.Scale)
		}
		var labels []string
		for _, tk := range p.X.Tick.Marker.Ticks(p.X.Min, p.X.Max) {
			if tk.Label != "" {
				labels = append(labels, fmt.Sprintf("%g=%s", tk.Value, tk.Label))
			}
		}
		if want := []string{"0=" + vs[0], "1=" + vs[1], "2=" + vs[2]}; !slices.Equal(labels, want) {
			t.Errorf("%q: ticks %q, want %q", vs, labels, want)
		}
	}
	for i, v := range []string{"a", "b", "c"} {
		tab.Rows[i].Values[0] = v
	}
	if p, err = sweepPlot(tab, "makespan"); err != nil {
		t.Fatal(err)
	}
	if _, ok := p.X.Scale.(plot.LogScale); ok {
		t.Error("names on a log axis")
	}
	if _, ok := p.Y.Scale.(plot.LogScale); ok {
		t.Error("names: makespan on a log y axis (x is not a log axis)")
	}
}

// --trace may name a file in --plot's directory, which the run makes: the
// trace was written first, into a directory not yet made.
func TestTraceIntoThePlotDirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "out")
	if _, errb, code := runCmd(t, "run", "quickstart", "--plot", dir, "--trace", filepath.Join(dir, "trace.json")); code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	for _, f := range []string{"trace.json", "timeline.png", "utilization.png"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Error(err)
		}
	}
}

// A sweep plot's x axis is the first var of more than one value: a var
// swept over one value (machine here) would give each series a single
// point.
func TestSweepPlotSkipsVarsOfOneValue(t *testing.T) {
	tab := &sweepTable{Scenario: "s", Vars: []string{"machine", "tp", "batch"}, Total: 4}
	for i, v := range [][]string{{"h100", "1", "1"}, {"h100", "1", "32"}, {"h100", "2", "1"}, {"h100", "2", "32"}} {
		tab.Rows = append(tab.Rows, sweepRow{Index: i, Values: v, MakespanS: float64(i + 1)})
	}
	p, err := sweepPlot(tab, "makespan")
	if err != nil {
		t.Fatal(err)
	}
	if p.X.Label.Text != "tp" || p.Title.Text != "s: makespan against tp" {
		t.Errorf("x axis %q, title %q; want tp", p.X.Label.Text, p.Title.Text)
	}
}
