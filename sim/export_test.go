package sim

import "time"

// RunLoopTimed is Run, also returning the wall time of its event loop
// alone (without the validation before it and the analysis after it).
func RunLoopTimed(m *Machine, p *Program) (*Result, time.Duration, error) {
	var d time.Duration
	res, err := runWith(m, p, runOptions{around: func(loop func()) {
		t0 := time.Now()
		loop()
		d = time.Since(t0)
	}})
	return res, d, err
}

// RunChunkByChunk is Run with every staged copy moved chunk by chunk,
// however many chunks it has (no coalescing, see copy.go): the simulation
// as it was before long copies were coalesced.
func RunChunkByChunk(m *Machine, p *Program) (*Result, error) {
	return runWith(m, p, runOptions{chunkByChunk: true})
}

// CoalesceAbove is coalesceAbove, for tests.
const CoalesceAbove = coalesceAbove
