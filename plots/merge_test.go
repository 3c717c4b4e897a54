package plots

import (
	"math"
	"strings"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestMergeBars(t *testing.T) {
	// 1000 touching bars 0.001 wide (a pixel is 0.01): 100 full columns
	// alike, one bar over [0, 1] at full height.
	var bars []bar
	for i := 0; i < 1000; i++ {
		bars = append(bars, bar{x0: float64(i) * 0.001, x1: float64(i+1) * 0.001, kind: KindKernel})
	}
	if got := mergeBars(bars, 0.01, 0); len(got) != 1 || got[0].x0 != 0 || !near(got[0].x1, 1) || got[0].base != 0 || got[0].level != 1 {
		t.Errorf("merged %d bars into %v, want one over [0, 1] at full height", len(bars), got)
	}
	// Wide bars stay as they are, even when they touch; a narrow bar beyond
	// them becomes its column: [2.5, 2.51], a tenth of its height (0.001
	// of 0.01, 6.4 of 64 steps: 6).
	got := mergeBars([]bar{{x0: 0, x1: 1, kind: KindKernel}, {x0: 1, x1: 2, kind: KindH2D}, {x0: 2.5, x1: 2.501, kind: KindKernel}}, 0.01, 0)
	if len(got) != 3 || got[0].partial || got[1].partial || !got[2].partial || !near(got[2].x0, 2.5) || !near(got[2].x1, 2.51) || got[2].level != 6.0/64 {
		t.Errorf("got %v, want the two wide bars and a column [2.5, 2.51] at 6/64", got)
	}
	// Kernels 0.003 wide, each followed by a 0.001 collective wait and a
	// 0.006 gap, a period a pixel (0.01) long: every column is 0.3 kernel
	// and 0.1 waiting, stacked (19 and 6 of 64 steps), over the 100
	// columns, whatever covers more; the gaps leave the top empty.
	bars = nil
	for i := 0; i < 100; i++ {
		x := float64(i) * 0.01
		bars = append(bars, bar{x0: x, x1: x + 0.003, kind: KindKernel}, bar{x0: x + 0.003, x1: x + 0.004, kind: KindCollWait})
	}
	got = mergeBars(bars, 0.01, 0)
	if len(got) != 2 || got[0].kind != KindKernel || got[1].kind != KindCollWait ||
		got[0].base != 0 || got[0].level != 19.0/64 || got[1].base != 19.0/64 || got[1].level != 6.0/64 || !near(got[1].x1, 1) {
		t.Errorf("got %v, want a kernel part of 19/64 under a waiting part of 6/64 over [0, 1]", got)
	}
	// A bar that straddles two columns counts in each for its share: 0.004
	// from 0.008 is 0.002 in column 0 and 0.002 in column 1, 0.2 each.
	got = mergeBars([]bar{{x0: 0.008, x1: 0.012, kind: KindKernel}}, 0.01, 0)
	if len(got) != 1 || !near(got[0].x0, 0) || !near(got[0].x1, 0.02) || got[0].level != 13.0/64 {
		t.Errorf("got %v, want one part over [0, 0.02] at 13/64 (0.2 of 64 is 12.8)", got)
	}
	// Columns count from the window's start, not from zero.
	got = mergeBars([]bar{{x0: 0.105, x1: 0.109, kind: KindKernel}}, 0.01, 0.005)
	if len(got) != 1 || !near(got[0].x0, 0.105) || !near(got[0].x1, 0.115) {
		t.Errorf("got %v, want the column [0.105, 0.115]", got)
	}
	// Link loads: the mean load over the column, gaps counting as none:
	// 0.004 at 1 and 0.004 at 0.5 in one column give 0.6.
	got = mergeBars([]bar{{x0: 0, x1: 0.004, kind: KindTransfer, level: 1}, {x0: 0.004, x1: 0.008, kind: KindTransfer, level: 0.5}}, 0.01, 0)
	if len(got) != 1 || got[0].level != math.Round(0.6*64)/64 {
		t.Errorf("got %v, want one column at 0.6 (38/64)", got)
	}
	// Bars that overlap in a lane (more than the column) are scaled to fit.
	got = mergeBars([]bar{{x0: 0, x1: 0.008, kind: KindKernel}, {x0: 0, x1: 0.008, kind: KindComm}}, 0.01, 0)
	if len(got) != 2 || got[0].level != 0.5 || got[1].base != 0.5 || got[1].level != 0.5 {
		t.Errorf("got %v, want two halves", got)
	}
	// A trace too short to see: a sliver, not nothing.
	got = mergeBars([]bar{{x0: 0, x1: 1e-9, kind: KindAPI}}, 0.01, 0)
	if len(got) != 1 || got[0].level != 1.0/64 {
		t.Errorf("got %v, want a sliver of 1/64", got)
	}
}

func TestMergeBarsKeepsOpsOfNoLength(t *testing.T) {
	got := mergeBars([]bar{{x0: 0.5, x1: 0.5, kind: KindAPI}, {x0: 0.7, x1: 0.7, kind: KindTransfer, level: 0}}, 0.01, 0)
	if len(got) != 1 || got[0].kind != KindAPI || got[0].level != 1.0/64 {
		t.Errorf("got %v, want a sliver for the call and nothing for a link at no load", got)
	}
}

// TestSlidingMean: each value the mean of the k around it, (k-1)/2 before
// and k/2 after, the window moved inside at the ends.
func TestSlidingMean(t *testing.T) {
	got := sliding([]float64{4, 0, 0, 0, 8}, 4)
	// i=0, 1: [4 0 0 0]/4; i=2, 3, 4: [0 0 0 8]/4.
	want := []float64{1, 1, 2, 2, 2}
	for i := range want {
		if !near(got[i], want[i]) {
			t.Errorf("sliding = %v, want %v", got, want)
			break
		}
	}
	if sliding(nil, 4) != nil {
		t.Error("no curve should stay no curve (a GPU with no ops)")
	}
}

// Log axes label big values as the tables print them (10M, not 10000000).
func TestLogTicksShortLabels(t *testing.T) {
	var labels []string
	for _, tk := range (logTicks{}).Ticks(1e3, 2e7) {
		if tk.Label != "" {
			labels = append(labels, tk.Label)
		}
	}
	if got, want := strings.Join(labels, " "), "1000 10k 100k 1M 10M"; got != want {
		t.Errorf("labels %s, want %s", got, want)
	}
	for v, want := range map[float64]string{0.00001: "0.00001", 500: "500", 9999: "9999", 10000: "10k", 2.5e7: "25M", 3e9: "3G"} {
		if got := shortNumber(v); got != want {
			t.Errorf("shortNumber(%v) = %s, want %s", v, got, want)
		}
	}
}
