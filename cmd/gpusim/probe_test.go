package main

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpusim/hw"
)

// TestReplayHostProbe: on a host slower than the topology says (every
// driver call 3 us more than the fake's 2 us: a kernel op, a launch and its
// timing event, takes 2 x 5 = 10 us where hgx-h200 has 2.7), the launch-bound
// loop of 200 kernels of 4 us is bounded by the host: 200 x 10 us = 2 ms.
// Replayed as it is, the prediction has the GPU bound it (4 us a kernel:
// about 0.8 ms, -60%); with --host-probe each run is predicted with the
// 10 us taken just before it, and the makespans agree.
func TestReplayHostProbe(t *testing.T) {
	defer func(o func() (hw.Driver, error)) { openDriver = o }(openDriver)
	cfg := fakeGPU()
	cfg.Drift = func(time.Duration) time.Duration { return 3 * time.Microsecond }
	openDriver = func() (hw.Driver, error) { return hw.NewFake(cfg), nil }
	errOf := func(args ...string) (float64, string) {
		t.Helper()
		var out, errb bytes.Buffer
		if code := run(append([]string{"replay", "hw-launch-bound"}, args...), &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		m := regexp.MustCompile(`makespan error ([-+]?[0-9.]+)%`).FindStringSubmatch(out.String())
		if m == nil {
			t.Fatalf("no makespan error in\n%s", out.String())
		}
		x, _ := strconv.ParseFloat(m[1], 64)
		return x, errb.String()
	}
	plain, _ := errOf("--repeat", "3")
	probed, stderr := errOf("--repeat", "3", "--host-probe")
	t.Logf("plain %.1f%%, probed %.1f%%\n%s", plain, probed, stderr)
	if plain > -50 {
		t.Errorf("without the probe: makespan error %.1f%%, want far short (2.7 us a kernel op predicted, 10 measured)", plain)
	}
	if probed < -3 || probed > 3 {
		t.Errorf("with the probe: makespan error %.1f%%, want within 3%%", probed)
	}
	if want := "hw: host time per kernel op before each run 10 us to 10 us; the compared run is predicted with the 10 us before it, where the topology has 2.7 us"; !strings.Contains(stderr, want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
