package hw

import (
	"fmt"
	"math"
	"sort"

	"gpusim/sim"
)

// OpError is one op of a replay: its predicted and measured times.
type OpError struct {
	ID   string
	Kind sim.OpKind
	// PredStart, PredDur, MeasStart and MeasDur are the op's start and
	// duration (End - Start) in the simulator and on the hardware.
	PredStart, PredDur, MeasStart, MeasDur sim.Time
	// PredHost and MeasHost are the host time of the op's call (HostEnd -
	// Call): API overhead, blocking, host work.
	PredHost, MeasHost sim.Time
	// Rel is (predicted - measured) / measured duration; NaN when the
	// measured duration is zero.
	Rel float64
	// Timed marks ops that do work of their own (kernels, copies, host
	// work): the ones the median error is over. Records, waits, signals
	// take no time, and a sync or await lasts as long as what it waits for.
	Timed bool
	// Modelled marks the timed ops whose duration the model predicts:
	// copies, and kernels the hw backend ran as memory kernels (their
	// measured records carry the bytes moved). The other timed ops, host
	// work and spin kernels, run on the hardware for the duration the
	// prediction gives them: their error says how closely the hardware
	// keeps a given duration, not how well the model predicts one.
	Modelled bool
}

// Comparison is a replay's outcome: every op, and the summary figures.
type Comparison struct {
	Ops []OpError
	// PredMakespan and MeasMakespan are the two runs' makespans; MakespanRel
	// is (predicted - measured) / measured.
	PredMakespan, MeasMakespan sim.Time
	MakespanRel                float64
	// MedianAbsRel is the median of |Rel| over timed ops; Timed counts them.
	MedianAbsRel float64
	Timed        int
	// MedianModelled is the median of |Rel| over the modelled ops (0 if
	// none); Modelled counts them.
	MedianModelled float64
	Modelled       int
}

// Compare matches the ops of a predicted and a measured run of the same
// program by ID and compares their durations. It fails if the runs are
// not of the same program.
func Compare(pred, meas *sim.Result) (*Comparison, error) {
	if len(pred.Ops) != len(meas.Ops) {
		return nil, fmt.Errorf("the predicted run has %d ops and the measured one %d: not the same program", len(pred.Ops), len(meas.Ops))
	}
	byID := make(map[string]int, len(meas.Ops))
	for i, r := range meas.Ops {
		byID[r.ID] = i
	}
	c := &Comparison{PredMakespan: pred.Makespan, MeasMakespan: meas.Makespan}
	c.MakespanRel = rel(pred.Makespan, meas.Makespan)
	// In program order: the measured run's records are by thread, then op.
	order := make([]int, 0, len(pred.Ops))
	pi := make(map[string]int, len(pred.Ops))
	for i, r := range pred.Ops {
		pi[r.ID] = i
	}
	for _, r := range meas.Ops {
		i, ok := pi[r.ID]
		if !ok {
			return nil, fmt.Errorf("op %s was measured but not predicted: not the same program", r.ID)
		}
		order = append(order, i)
	}
	var abs, modelled []float64
	for _, i := range order {
		p := pred.Ops[i]
		m := meas.Ops[byID[p.ID]]
		e := OpError{ID: p.ID, Kind: p.Kind, PredStart: p.Start, PredDur: p.End - p.Start, MeasStart: m.Start, MeasDur: m.End - m.Start,
			PredHost: p.HostEnd - p.Call, MeasHost: m.HostEnd - m.Call}
		e.Rel = rel(e.PredDur, e.MeasDur)
		switch p.Kind {
		case sim.OpKernel, sim.OpCopy, sim.OpHost:
			e.Timed = true
			// A kernel the backend ran as the memory kernel says how many
			// bytes it moved.
			e.Modelled = p.Kind == sim.OpCopy || p.Kind == sim.OpKernel && m.Bytes > 0
			if !math.IsNaN(e.Rel) {
				abs = append(abs, math.Abs(e.Rel))
				if e.Modelled {
					modelled = append(modelled, math.Abs(e.Rel))
				}
			}
		}
		c.Ops = append(c.Ops, e)
	}
	c.Timed, c.MedianAbsRel = len(abs), median(abs)
	c.Modelled, c.MedianModelled = len(modelled), median(modelled)
	return c, nil
}

// median is the median of xs (0 if empty); it sorts xs.
func median(xs []float64) float64 {
	n := len(xs)
	if n == 0 {
		return 0
	}
	sort.Float64s(xs)
	if n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[n/2]
}

func rel(pred, meas sim.Time) float64 {
	if meas == 0 {
		if pred == 0 {
			return 0
		}
		return math.NaN()
	}
	return float64(pred-meas) / float64(meas)
}

// Worst returns the n timed ops with the largest |Rel|, largest first (ties
// in program order).
func (c *Comparison) Worst(n int) []OpError {
	var w []OpError
	for _, e := range c.Ops {
		if e.Timed && !math.IsNaN(e.Rel) {
			w = append(w, e)
		}
	}
	sort.SliceStable(w, func(i, j int) bool { return math.Abs(w[i].Rel) > math.Abs(w[j].Rel) })
	if len(w) > n {
		w = w[:max(n, 0)]
	}
	return w
}
