package hw

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// f32 is what cuEventElapsedTime gives for a time in milliseconds.
func f32(ms float64) float64 { return float64(float32(ms)) }

// TestRefineEventTimesFarFromTheReference: events a few microseconds apart
// timed in whole nanoseconds by the driver, 30 s after the reference. Their
// coarse times (float32 ms) are off by up to a microsecond. Refined, each
// is within 20 ns of the truth where all are far from the reference, and
// within 2 ns where the run began at the reference (an early event's coarse
// time pins the chain).
func TestRefineEventTimesFarFromTheReference(t *testing.T) {
	for _, tc := range []struct {
		name       string
		from       int64 // ns after the reference
		n          int
		within, at float64 // ms
	}{
		{"all 30 s on", 30e9, 300, 20e-6, 0},
		{"from the start to 30 s on", 0, 3000, 2e-6, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := rand.New(rand.NewPCG(1, 2))
			truth := make([]float64, tc.n)
			ns := tc.from
			for i := range truth {
				ns += 500 + r.Int64N(20000) // 0.5 to 20.5 us apart
				if tc.from == 0 && i == tc.n/2 {
					ns += 30e9 // then a long pause
				}
				truth[i] = float64(ns) / 1e6
			}
			// Listed out of time order, as the ops of several streams are.
			r.Shuffle(len(truth), func(i, j int) { truth[i], truth[j] = truth[j], truth[i] })
			coarse := make([]float64, len(truth))
			worst := 0.0
			for i, x := range truth {
				coarse[i] = f32(x)
				worst = math.Max(worst, math.Abs(coarse[i]-x))
			}
			if worst < 0.5e-3 {
				t.Fatalf("the coarse times are off by at most %g ms: the test does not test", worst)
			}
			got, ok := refineEventTimes(coarse, func(i, j int) (float64, error) { return f32(truth[j] - truth[i]), nil })
			if !ok {
				t.Fatal("the chain was refused")
			}
			for i := range got {
				if d := math.Abs(got[i] - truth[i]); d > tc.within {
					t.Fatalf("event %d: %.9f ms, truth %.9f ms (off by %g ns; coarse times by up to %g ns)", i, got[i], truth[i], d*1e6, worst*1e6)
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
	got, ok := refineEventTimes(coarse, func(i, j int) (float64, error) { return half(truth[j] - truth[i]), nil })
	if ok {
		t.Error("a drifting chain was accepted")
	}
	for i := range got {
		if got[i] != coarse[i] {
			t.Fatalf("event %d: %v, want the coarse %v", i, got[i], coarse[i])
		}
	}
	got, ok = refineEventTimes(coarse, func(i, j int) (float64, error) { return 0, errors.New("CUDA_ERROR_INVALID_VALUE") })
	if ok || got[5] != coarse[5] {
		t.Errorf("a failing elapsed call: ok %v, event 5 %v, want the coarse %v", ok, got[5], coarse[5])
	}
}

// TestRefineEventTimesNearTheReference: within a second of the reference
// the coarse times stand and elapsed is never called.
func TestRefineEventTimesNearTheReference(t *testing.T) {
	coarse := []float64{0.004, 12.5, 999.9}
	got, ok := refineEventTimes(coarse, func(i, j int) (float64, error) {
		t.Fatal("elapsed called")
		return 0, nil
	})
	if !ok || got[0] != 0.004 || got[1] != 12.5 || got[2] != 999.9 {
		t.Errorf("got %v, %v", got, ok)
	}
}
