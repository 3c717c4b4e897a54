package plots

import "testing"

func TestMergeBars(t *testing.T) {
	// 1000 touching bars 0.001 wide (a pixel is 0.01): one bar.
	var bars []bar
	for i := 0; i < 1000; i++ {
		bars = append(bars, bar{x0: float64(i) * 0.001, x1: float64(i+1) * 0.001, kind: KindKernel})
	}
	if got := mergeBars(bars, 0.01); len(got) != 1 || got[0].x0 != 0 || got[0].x1 != 1 {
		t.Errorf("merged %d bars into %v, want one over [0, 1]", len(bars), got)
	}
	// Wide bars stay apart even when they touch; a narrow bar beyond a
	// pixel's gap does too.
	got := mergeBars([]bar{{x0: 0, x1: 1, kind: KindKernel}, {x0: 1, x1: 2, kind: KindH2D}, {x0: 2.5, x1: 2.501, kind: KindKernel}}, 0.01)
	if len(got) != 3 {
		t.Errorf("got %v, want the three bars", got)
	}
	// A narrow bar next to a wide one joins it, and the wide one names it.
	got = mergeBars([]bar{{x0: 1, x1: 1.005, kind: KindAPI}, {x0: 0, x1: 1, kind: KindKernel}}, 0.01)
	if len(got) != 1 || got[0].kind != KindKernel || got[0].x0 != 0 || got[0].x1 != 1.005 {
		t.Errorf("got %v, want one kernel bar over [0, 1.005]", got)
	}
	// Many narrow bars: the kind that covers the most of the merged span
	// names it, whatever came first (a 0.005-wide wait, wider than each
	// kernel after it, then 0.003-wide kernels each after a 0.001-wide
	// wait: kernels cover 0.3 of 0.405).
	bars = []bar{{x0: 0, x1: 0.005, kind: KindCollWait}}
	for i := 0; i < 100; i++ {
		x := 0.005 + float64(i)*0.004
		bars = append(bars, bar{x0: x, x1: x + 0.003, kind: KindKernel}, bar{x0: x + 0.003, x1: x + 0.004, kind: KindCollWait})
	}
	if got := mergeBars(bars, 0.01); len(got) != 1 || got[0].kind != KindKernel {
		t.Errorf("got %v, want one kernel bar", got)
	}
	// Link loads merge to their mean over the span: 0.004 at 1 and 0.004
	// at 0.5 give 0.75; with a gap as long between them, 0.5.
	got = mergeBars([]bar{{x0: 0, x1: 0.004, kind: KindTransfer, level: 1}, {x0: 0.008, x1: 0.012, kind: KindTransfer, level: 0.5}}, 0.01)
	if len(got) != 1 || got[0].level != 0.5 || got[0].x1 != 0.012 {
		t.Errorf("got %v, want one bar over [0, 0.012] at level 0.5", got)
	}
	got = mergeBars([]bar{{x0: 0, x1: 0.004, kind: KindTransfer, level: 1}, {x0: 0.004, x1: 0.008, kind: KindTransfer, level: 0.5}}, 0.01)
	if len(got) != 1 || got[0].level != 0.75 {
		t.Errorf("got %v, want one bar at level 0.75", got)
	}
}
