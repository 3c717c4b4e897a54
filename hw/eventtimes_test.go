package hw

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// f32 is what cuEventElapsedTime gives for a time in milliseconds, rounded
// once, correctly.
func f32(ms float64) float64 { return float64(float32(ms)) }

// f32div is what a driver that computes in float32 gives for ns
// nanoseconds: (float)ns / 1e6f, rounded twice.
func f32div(ns int64) float64 { return float64(float32(ns) / float32(1e6)) }

// withinStep checks the promise: every time is within slack float32 steps
// of its coarse time.
func withinStep(t *testing.T, coarse, got []float64) {
	t.Helper()
	for i := range got {
		if d := math.Abs(got[i] - coarse[i]); d > slack*step(coarse[i]) {
			t.Fatalf("event %d: %.9f ms, %g steps from its coarse time %.9f", i, got[i], d/step(coarse[i]), coarse[i])
		}
	}
}

// TestRefineEventTimesFarFromTheReference: events a few microseconds apart
// timed in whole nanoseconds by the driver, 30 s after the reference. Their
// coarse times (float32 ms) are off by up to a microsecond. Refined, each
// is within 20 ns of the truth where all are far from the reference, and
// within 2 ns where the run began at the reference (an early event's coarse
// time pins the chain).
func TestRefineEventTimesFarFromTheReference(t *testing.T) {
	for _, tc := range []struct {
		name   string
		from   int64 // ns after the reference
		n      int
		within float64 // ms
		div    bool    // the driver computes in float32
	}{
		{"all 30 s on", 30e9, 300, 20e-6, false},
		{"from the start to 30 s on", 0, 3000, 2e-6, false},
		{"a driver that rounds twice", 0, 3000, 20e-6, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			truth := make([]int64, tc.n) // ns
			ns := tc.from
			for i := range truth {
				ns += 500 + r.Int64N(20000) // 0.5 to 20.5 us apart
				if tc.from == 0 && i == tc.n/2 {
					ns += 30e9 // then a long pause
				}
				truth[i] = ns
			}
			// Listed out of time order, as the ops of several streams are.
			r.Shuffle(len(truth), func(i, j int) { truth[i], truth[j] = truth[j], truth[i] })
			ms := func(ns int64) float64 {
				if tc.div {
					return f32div(ns)
				}
				return f32(float64(ns) / 1e6)
			}
			coarse := make([]float64, len(truth))
			worst := 0.0
			for i, x := range truth {
				coarse[i] = ms(x)
				worst = math.Max(worst, math.Abs(coarse[i]-float64(x)/1e6))
			}
			if worst < 0.5e-3 {
				t.Fatalf("the coarse times are off by at most %g ms: the test does not test", worst)
			}
			got, ok, err := refineEventTimes(coarse, func(i, j int) (float64, error) { return ms(truth[j] - truth[i]), nil })
			if !ok || err != nil {
				t.Fatalf("the chain was refused (%v)", err)
			}
			withinStep(t, coarse, got)
			for i := range got {
				if d := math.Abs(got[i] - float64(truth[i])/1e6); d > tc.within {
					t.Fatalf("event %d: %.9f ms, truth %.9f ms (off by %g ns; coarse times by up to %g ns)", i, got[i], float64(truth[i])/1e6, d*1e6, worst*1e6)
				}
			}
		})
	}
}

// TestRefineEventTimesFallsBack: a driver whose elapsed times are rounded to
// half a microsecond drifts when chained; where the chain leaves the coarse
// times' step, the coarse times are kept. An elapsed call that fails, too.
func TestRefineEventTimesFallsBack(t *testing.T) {
	truth := make([]float64, 2000)
	for i := range truth {
		truth[i] = 2000 + float64(i)*0.00123 // 1.23 us apart, 2 s on
	}
	coarse := make([]float64, len(truth))
	for i, x := range truth {
		coarse[i] = f32(x)
	}
	half := func(ms float64) float64 { return math.Ceil(ms/0.0005) * 0.0005 } // 1.23 us -> 1.5 us
	got, ok, err := refineEventTimes(coarse, func(i, j int) (float64, error) { return half(truth[j] - truth[i]), nil })
	if ok || err != nil {
		t.Errorf("a drifting chain: ok %v, error %v; want refused without an error", ok, err)
	}
	for i := range got {
		if got[i] != coarse[i] {
			t.Fatalf("event %d: %v, want the coarse %v", i, got[i], coarse[i])
		}
	}
	for _, bad := range []struct {
		what    string
		elapsed func(i, j int) (float64, error)
	}{
		{"a failing elapsed call", func(i, j int) (float64, error) { return 0, errors.New("CUDA_ERROR_INVALID_VALUE") }},
		{"an elapsed time that is not a number", func(i, j int) (float64, error) { return math.NaN(), nil }},
	} {
		got, ok, err = refineEventTimes(coarse, bad.elapsed)
		if ok || err == nil || got[5] != coarse[5] {
			t.Errorf("%s: ok %v, error %v, event 5 %v; want the coarse %v and the error", bad.what, ok, err, got[5], coarse[5])
		}
	}
	// A coarse time that is not a number is never refined, and never makes
	// another one up.
	odd := []float64{1500, math.NaN(), 1500.25}
	got, ok, _ = refineEventTimes(odd, func(i, j int) (float64, error) { return 0.25, nil })
	if ok || got[0] != 1500 || !math.IsNaN(got[1]) || got[2] != 1500.25 {
		t.Errorf("with a NaN: %v, %v", got, ok)
	}
}

// TestRefineEventTimesStaysWithinAStep: however the links drift (here, each
// off by nearly what rounding allows, all the same way, around powers of two
// where the float32 step changes), no time moves more than slack steps from
// its coarse time.
func TestRefineEventTimesStaysWithinAStep(t *testing.T) {
	for _, around := range []float64{2048, 4096, 8192, 16384, 32768} {
		truth := make([]float64, 400)
		for i := range truth {
			truth[i] = around - 0.2 + float64(i)*0.001
		}
		coarse := make([]float64, len(truth))
		for i, x := range truth {
			coarse[i] = f32(x)
		}
		got, ok, err := refineEventTimes(coarse, func(i, j int) (float64, error) {
			d := truth[j] - truth[i]
			return d * (1 + 0x1p-24), nil // rounded up every time
		})
		if err != nil || !ok {
			t.Fatalf("around %v: refused (%v)", around, err)
		}
		withinStep(t, coarse, got)
	}
}

// TestRefineEventTimesNearTheReference: within a second of the reference
// the coarse times stand and elapsed is never called.
func TestRefineEventTimesNearTheReference(t *testing.T) {
	coarse := []float64{0.004, 12.5, 999.9}
	got, ok, err := refineEventTimes(coarse, func(i, j int) (float64, error) {
		t.Fatal("elapsed called")
		return 0, nil
	})
	if !ok || err != nil || got[0] != 0.004 || got[1] != 12.5 || got[2] != 999.9 {
		t.Errorf("got %v, %v", got, ok)
	}
}
