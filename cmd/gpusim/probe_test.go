package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"gpusim/hw"
)

// slowFake makes the command use the fake GPU with every driver call 3 us
// slower than its 2 us (a kernel op as the backend runs it: 2 x 5 us),
// until the test ends.
func slowFake(t *testing.T) {
	o := openDriver
	t.Cleanup(func() { openDriver = o })
	cfg := fakeGPU()
	cfg.Drift = func(time.Duration) time.Duration { return 3 * time.Microsecond }
	openDriver = func() (hw.Driver, error) { return hw.NewFake(cfg), nil }
}

// replayMakespanErr runs gpusim replay with args and returns its makespan
// error (percent) and its stderr.
func replayMakespanErr(t *testing.T, args ...string) (float64, string) {
	t.Helper()
	var out, errb bytes.Buffer
	if code := run(append([]string{"replay"}, args...), &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	m := regexp.MustCompile(`makespan error ([-+]?[0-9.]+)%`).FindStringSubmatch(out.String())
	if m == nil {
		t.Fatalf("no makespan error in\n%s", out.String())
	}
	x, _ := strconv.ParseFloat(m[1], 64)
	return x, errb.String()
}

// writeTemp writes text to name in dir and returns its path.
func writeTemp(t *testing.T, dir, name, text string) string {
	t.Helper()
	f := filepath.Join(dir, name)
	if err := os.WriteFile(f, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReplayHostProbe: on a host slower than the topology says (every
// driver call 3 us more than the fake's 2 us: a kernel op, a launch and its
// timing event, takes 2 x 5 = 10 us where hgx-h200 has 2.7), the launch-bound
// loop of 200 kernels of 4 us is bounded by the host: 200 x 10 us = 2 ms.
// Replayed as it is, the prediction has the GPU bound it (4 us a kernel:
// about 0.8 ms, -60%); with --host-probe each run is predicted with the
// 10 us taken just before it, and the makespans agree.
func TestReplayHostProbe(t *testing.T) {
	slowFake(t)
	plain, _ := replayMakespanErr(t, "hw-launch-bound", "--repeat", "3")
	probed, stderr := replayMakespanErr(t, "hw-launch-bound", "--repeat", "3", "--host-probe")
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

// TestReplayChargesTimingOverhead: a topology whose host pays 5 us a call
// (api_overhead) and whose hw backend adds 5 us more to time each op
// (timing_overhead, as calibrate splits them) predicts the fake's 10 us a
// kernel op in a replay, and 5 us in gpusim run: 200 launches of 5 us, 1 ms,
// then the sync's own 5 us call, which outlasts the last kernel's 4 us and
// the host's 0.5 us of sync latency after it.
// Without timing_overhead the replay falls 50% short (1 ms against 2).
func TestReplayChargesTimingOverhead(t *testing.T) {
	slowFake(t)
	dir := t.TempDir()
	topo := func(extra string) string {
		return writeTemp(t, dir, "t.yaml", "name: one\nhosts: [{name: cpu0, api_overhead: 5 us, sync_latency: 0.5 us"+extra+"}]\ngpus: [{name: gpu0, model: H200-SXM, kernel_overhead: 0 us}]\nlinks: [{ends: [gpu0, cpu0], type: pcie5x16}]\n")
	}
	if e, _ := replayMakespanErr(t, "hw-launch-bound", "--topology", topo(", timing_overhead: 5 us")); e < -1 || e > 1 {
		t.Errorf("with timing_overhead: makespan error %.1f%%, want within 1%%", e)
	}
	if e, _ := replayMakespanErr(t, "hw-launch-bound", "--topology", topo("")); e > -49 || e < -51 {
		t.Errorf("without timing_overhead: makespan error %.1f%%, want -50%%", e)
	}
	var out, errb bytes.Buffer
	if code := run([]string{"run", "hw-launch-bound", "--topology", topo(", timing_overhead: 5 us"), "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var res struct {
		Makespan float64 `json:"makespan_ns"`
	}
	if err := json.Unmarshal(out.Bytes(), &res); err != nil {
		t.Fatal(err)
	}
	if want := 200*5e3 + 5e3; res.Makespan < want-10 || res.Makespan > want+10 {
		t.Errorf("gpusim run: makespan %g ns, want %g (the launches without the backend's timing)", res.Makespan, want)
	}
}

// TestHostProbeKeepsSyncsUntimed: the probe is the host time of a kernel
// op as the backend runs it (a launch and its timing event: 10 us on the
// fake with 3 us of drift), but a sync pays its call alone (5 us): split in
// the topology's proportion (5 + 5 us), the probe predicts a loop of 1 us
// kernels each followed by a sync as well as the topology does. All as
// api_overhead, each sync would cost 5 us too much: +33%.
func TestHostProbeKeepsSyncsUntimed(t *testing.T) {
	slowFake(t)
	dir := t.TempDir()
	writeTemp(t, dir, "t.yaml", "name: one\nhosts: [{name: cpu0, api_overhead: 5 us, timing_overhead: 5 us}]\ngpus: [{name: gpu0, model: H200-SXM, kernel_overhead: 0 us}]\nlinks: [{ends: [gpu0, cpu0], type: pcie5x16}]\n")
	scen := writeTemp(t, dir, "s.yaml", "name: syncs\ntopology: t.yaml\nthreads:\n  - name: main\n    host: cpu0\n    ops:\n      - repeat: {count: 200, ops: [{kernel: {id: k, stream: gpu0/s, duration: 1 us}}, {sync: {id: y, stream: gpu0/s}}]}\n")
	for _, args := range [][]string{{scen}, {scen, "--host-probe"}} {
		if x, stderr := replayMakespanErr(t, args...); x < -2 || x > 2 {
			t.Errorf("replay %v: makespan error %.1f%%, want within 2%%\n%s", args, x, stderr)
		}
	}
}

// TestReplayKeepsContexts: replay --repeat 3 --host-probe runs six times on
// gpu0 (three probes, three runs of the scenario), and the GPU's primary
// context is made once: it is held between the runs, where each run made
// and destroyed it; after the command nothing is left retained.
func TestReplayKeepsContexts(t *testing.T) {
	o := openDriver
	t.Cleanup(func() { openDriver = o })
	f := hw.NewFake(fakeGPU())
	openDriver = func() (hw.Driver, error) { return f, nil }
	replayMakespanErr(t, "hw-launch-bound", "--repeat", "3", "--host-probe")
	if n := f.CallCounts()["cuDevicePrimaryCtxRetain"]; n != 7 {
		t.Errorf("%d retains, want 7: the hold and six runs", n)
	}
	if n := f.ContextsMade(); n != 1 {
		t.Errorf("gpu0's context made %d times, want once", n)
	}
	if live := f.Live(); len(live) != 0 {
		t.Errorf("still allocated after the command: %v", live)
	}
}

// TestReplayKeepsProbeContext: the host probe runs on device 0 whatever
// GPU the scenario uses: a scenario on gpu1 alone, replayed three times
// with --host-probe, makes gpu1's context once and gpu0's (the probes')
// once, not once a probe.
func TestReplayKeepsProbeContext(t *testing.T) {
	o := openDriver
	t.Cleanup(func() { openDriver = o })
	cfg := fakeGPU()
	cfg.Devices = 2
	f := hw.NewFake(cfg)
	openDriver = func() (hw.Driver, error) { return f, nil }
	dir := t.TempDir()
	topo := writeTemp(t, dir, "t.yaml", "name: two\nhosts: [{name: cpu0}]\ngpus: [{name: gpu0, model: H200-SXM}, {name: gpu1, model: H200-SXM}]\nlinks: [{ends: [gpu0, cpu0], type: pcie5x16}, {ends: [gpu1, cpu0], type: pcie5x16}]\n")
	scen := writeTemp(t, dir, "s.yaml", "name: s\ntopology: "+topo+"\nthreads:\n  - name: m\n    ops:\n      - kernel: {stream: gpu1/s, duration: 50 us}\n      - sync: {stream: gpu1/s}\n")
	replayMakespanErr(t, scen, "--repeat", "3", "--host-probe")
	if n := f.ContextsMade(); n != 2 {
		t.Errorf("contexts made %d times, want 2: gpu1's and the probes' gpu0's, once each", n)
	}
	if live := f.Live(); len(live) != 0 {
		t.Errorf("still allocated after the command: %v", live)
	}
}

// TestReplayJSONListsTheRuns: replay --json --repeat 3 gives every run's
// makespan, the compared one the median of them and the measured
// makespan; with --host-probe, the host time per kernel op taken before
// each run (10 us on the slowed fake: 2 x 5 us), and none without.
func TestReplayJSONListsTheRuns(t *testing.T) {
	slowFake(t)
	for _, probe := range []bool{false, true} {
		args := []string{"replay", "hw-launch-bound", "--repeat", "3", "--json"}
		if probe {
			args = append(args, "--host-probe")
		}
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		var doc struct {
			Measured  float64   `json:"measured_makespan_ns"`
			Makespans []float64 `json:"runs_makespan_ns"`
			Compared  int       `json:"compared_run"`
			Probes    []float64 `json:"probed_host_ns"`
		}
		if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
			t.Fatalf("%v\n%s", err, out.String())
		}
		if len(doc.Makespans) != 3 || doc.Compared < 0 || doc.Compared > 2 {
			t.Fatalf("--host-probe %v: runs %v, compared %d; want 3 runs and one of them", probe, doc.Makespans, doc.Compared)
		}
		m := doc.Makespans[doc.Compared]
		below, above := 0, 0
		for i, x := range doc.Makespans {
			if i != doc.Compared && x <= m {
				below++
			}
			if i != doc.Compared && x >= m {
				above++
			}
		}
		if m != doc.Measured || below < 1 || above < 1 {
			t.Errorf("--host-probe %v: compared run %d of %v (measured makespan %g): want the median, measured", probe, doc.Compared, doc.Makespans, doc.Measured)
		}
		switch {
		case !probe && doc.Probes != nil:
			t.Errorf("probes %v without --host-probe", doc.Probes)
		case probe && (len(doc.Probes) != 3 || doc.Probes[0] != 10_000 || doc.Probes[2] != 10_000):
			t.Errorf("probes %v, want 3 of 10000 ns", doc.Probes)
		}
	}
}

// TestDeviceCheckSummary: hw/devicecheck/summarize.py reads the lines
// replay prints on the fake into its table rows: for hw-launch-bound
// (slowed, with --host-probe, 3 runs: no op the model predicts) the
// scenario, 200 timed ops, the makespan error and the runs' spread as
// printed, and the probe; for hw-copies (every op a copy) and hw-overlap
// (copies and spin kernels) the medians over the ops the model predicts
// as printed. Steps that failed, were skipped or have no exit status get
// no numbers. A change to replay's wording that the script no longer reads
// fails here (log.txt is written here as run.sh writes it). Skips without
// python3.
func TestDeviceCheckSummary(t *testing.T) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Skip("no python3")
	}
	slowFake(t)
	dir := t.TempDir()
	log := ""
	printed := map[string]string{}
	for _, c := range []struct{ step, scen string }{{"hw-launch-bound-probed", "hw-launch-bound"}, {"hw-copies", "hw-copies"}, {"hw-overlap", "hw-overlap"}} {
		args := []string{"replay", c.scen, "--repeat", "3"}
		if c.step == "hw-launch-bound-probed" {
			args = append(args, "--host-probe")
		}
		var out, errb bytes.Buffer
		if code := run(args, &out, &errb); code != 0 {
			t.Fatalf("exit %d: %s", code, errb.String())
		}
		writeTemp(t, dir, "replay-"+c.step+".txt", out.String())
		writeTemp(t, dir, "replay-"+c.step+".err", errb.String())
		log += "== replay-" + c.step + ": gpusim replay\n   exit 0 in 10 ms\n"
		printed[c.step] = out.String() + errb.String()
	}
	// A failed step's output, and one the check was stopped in, are not
	// results.
	writeTemp(t, dir, "replay-hw-pageable.txt", printed["hw-copies"])
	writeTemp(t, dir, "replay-hw-memory.txt", printed["hw-copies"])
	log += "== replay-hw-pageable: gpusim replay\n   exit 1 in 10 ms\n== replay-hw-queued: gpusim replay\n   skipped: past the run's deadline\n== replay-hw-memory: gpusim replay\n"
	writeTemp(t, dir, "log.txt", "== calibrate: gpusim calibrate\n   exit 0 in 10 ms\n"+log)
	got, err := exec.Command(py, "../../hw/devicecheck/summarize.py", dir).Output()
	if err != nil {
		t.Fatalf("summarize.py: %v\n%s", err, got)
	}
	lines := strings.Split(strings.TrimSpace(string(got)), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines, want the header, its rule and 6 rows:\n%s", len(lines), got)
	}
	find := func(text, re string) []string {
		t.Helper()
		m := regexp.MustCompile(re).FindStringSubmatch(text)
		if m == nil {
			t.Fatalf("%q not in what replay printed:\n%s", re, text)
		}
		return m
	}
	lb := printed["hw-launch-bound-probed"]
	mk := find(lb, `makespan error (\S+)\)`)[1]
	spread := find(lb, `hw: 3 runs, makespans (.+) to (.+);`)
	if want := "| `hw-launch-bound-probed` | hw-launch-bound | 200 | "; !strings.HasPrefix(lines[2], want) || !strings.HasSuffix(lines[2], " | - (0) | "+mk+" | 3 runs: "+spread[1]+" to "+spread[2]+"; probed 10 us to 10 us a kernel op (topology: 2.7 us) |") {
		t.Errorf("row\n%s\nwant it to start %q and end with the makespan error %s, the spread %s to %s and the probe", lines[2], want, mk, spread[1], spread[2])
	}
	cp := find(printed["hw-copies"], `median \|error\| over (\d+) kernels, copies and host ops: (\S+)`)
	if want := fmt.Sprintf("| `hw-copies` | hw-copies | %s | %s | %s (%s) | ", cp[1], cp[2], cp[2], cp[1]); !strings.HasPrefix(lines[3], want) {
		t.Errorf("row\n%s\nwant it to start %q", lines[3], want)
	}
	ov := find(printed["hw-overlap"], `over the (\d+) copies and memory kernels, whose durations the model predicts: (\S+) `)
	if want := fmt.Sprintf(" | %s (%s) | ", ov[2], ov[1]); !strings.HasPrefix(lines[4], "| `hw-overlap` | hw-overlap | ") || !strings.Contains(lines[4], want) {
		t.Errorf("row\n%s\nwant hw-overlap's with %q", lines[4], want)
	}
	for i, want := range []string{"| `hw-pageable` | exit 1 | | | | | |", "| `hw-queued` | skipped | | | | | |", "| `hw-memory` | no exit status (the check was stopped in it?) | | | | | |"} {
		if lines[5+i] != want {
			t.Errorf("row %q, want %q", lines[5+i], want)
		}
	}
}

// TestReplayPlotDir: replay --plot DIR draws timelines.png and scatter.png
// and writes replay.json beside them, of the same runs as the table it
// prints: its makespan error is the table's.
func TestReplayPlotDir(t *testing.T) {
	slowFake(t)
	dir := filepath.Join(t.TempDir(), "plots")
	var out, errb bytes.Buffer
	if code := run([]string{"replay", "hw-overlap", "--repeat", "3", "--plot", dir}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, f := range []string{"timelines.png", "scatter.png"} {
		b, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || !bytes.HasPrefix(b, []byte("\x89PNG")) {
			t.Errorf("%s: %v, %d bytes", f, err, len(b))
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, "replay.json"))
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Scenario string    `json:"scenario"`
		Error    float64   `json:"makespan_error"`
		Runs     []float64 `json:"runs_makespan_ns"`
	}
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%v\n%s", err, b)
	}
	if want := fmt.Sprintf("(makespan error %+.1f%%)", 100*doc.Error); doc.Scenario != "hw-overlap" || len(doc.Runs) != 3 || !strings.Contains(out.String(), want) {
		t.Errorf("replay.json of %q, %d runs, makespan error %g; want hw-overlap's 3 and the table's %s:\n%s", doc.Scenario, len(doc.Runs), doc.Error, want, out.String())
	}
}
