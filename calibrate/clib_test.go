//go:build linux

package calibrate

import (
	"context"
	"errors"
	"testing"
	"time"

	"gpusim/hw"
	"gpusim/internal/fakecuda"
)

// TestRunThroughTheCLibrary calibrates through the real CUDA binding,
// against the C stand-in for libcuda in its real-clock mode (copies are
// memcpys, kernels spin during their launch): every call must find its
// context current on its OS thread (the library refuses others, as CUDA
// does), the devices must be read as the library describes them, and all
// that was allocated must be freed, after a whole run and after one
// cancelled part-way. The library refuses, as CUDA does, a call from a
// thread with no context current or on a stream of another context.
func TestRunThroughTheCLibrary(t *testing.T) {
	if testing.Short() {
		t.Skip("a quick calibration against the C library takes seconds")
	}
	lib := fakecuda.Build(t)
	lib.Set(t, "realclock", 1)
	defer lib.Set(t, "realclock", 0)
	lib.Set(t, "nparams", 0)
	drv, err := hw.OpenLibrary(lib.Path)
	if err != nil {
		t.Fatal(err)
	}
	counters := []string{"allocated", "host_allocated", "context_errors", "retains0", "retains1"}
	before := map[string]int64{}
	for _, c := range counters {
		before[c] = lib.Get(c)
	}
	unchanged := func(when string) {
		t.Helper()
		for _, c := range counters {
			if got := lib.Get(c); got != before[c] {
				t.Errorf("%s: %s is %d, %d before", when, c, got, before[c])
			}
		}
	}

	r, err := Run(context.Background(), drv, Options{Quick: true, Budget: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	unchanged("after a calibration")
	// The library answers attribute a of device d with a*100+d.
	if len(r.Devices) != 2 || r.Devices[1].Name != "Fake GPU 1" || r.Devices[1].SMs != int(hw.AttrSMs)*100+1 ||
		r.Devices[0].CopyEngines != int(hw.AttrCopyEngines)*100 || r.Devices[1].MemoryBytes != 2<<34 {
		t.Errorf("devices %+v", r.Devices)
	}
	if len(r.P2P) != 2 || len(r.H2D) != 2 || len(r.D2H) != 2 {
		t.Errorf("%d peer paths, %d H2D, %d D2H fitted; want 2 of each", len(r.P2P), len(r.H2D), len(r.D2H))
	}

	// Interrupted after its third measurement (a copy path of GPU 0).
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, err = Run(ctx, drv, Options{Quick: true, Budget: time.Minute, Progress: func(done, _ int, _ string) {
		if done == 3 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("a calibration cancelled after its third measurement: error %v", err)
	}
	unchanged("after a cancelled calibration")
}
