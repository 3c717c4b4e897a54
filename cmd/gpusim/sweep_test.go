package main

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

const sweepScenario = `
name: sw
topology: ${topo}
vars: {batch: 64 MiB}
sweep:
  topo: [pcie-2gpu, dgx-h100, dgx-a100]
  memory: [pinned, pageable]
  n: [1, 2, 3]
threads:
  - name: main
    host: cpu0
    ops:
      - repeat: {count: "${n}", ops: [{copy: {from: cpu0, to: gpu0, bytes: "${batch}", memory: "${memory}", stream: gpu0/c}}]}
`

// unsharded clears Slurm's task id (restored after the test), so that a
// sweep runs whole, and returns a new folder for the test's files.
func unsharded(t *testing.T) string {
	t.Helper()
	t.Setenv("SLURM_ARRAY_TASK_ID", "")
	os.Unsetenv("SLURM_ARRAY_TASK_ID")
	return t.TempDir()
}

func runCmd(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	code := run(args, &out, &errb)
	return out.String(), errb.String(), code
}

// TestSweepIsTheSameWhateverJAndShards runs a sweep with -j 1 and -j 8, and
// as three shards merged, and requires the same CSV bytes each time.
func TestSweepIsTheSameWhateverJAndShards(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "sw.yaml")
	os.WriteFile(scen, []byte(sweepScenario), 0o644)
	var want []byte
	for _, j := range []string{"1", "8"} {
		csv := filepath.Join(dir, "j"+j+".csv")
		if _, e, code := runCmd(t, "sweep", scen, "-j", j, "--csv", csv); code != 0 {
			t.Fatalf("-j %s: exit %d: %s", j, code, e)
		}
		got, _ := os.ReadFile(csv)
		if want == nil {
			want = got
			if !bytes.Contains(got, []byte("complete, 18 of 18 points")) {
				t.Fatalf("CSV header: %s", got)
			}
		} else if !bytes.Equal(got, want) {
			t.Errorf("-j %s gives a different table:\n%s\nwant:\n%s", j, got, want)
		}
	}
	var shards []string
	for i := 0; i < 3; i++ {
		csv := filepath.Join(dir, "shard"+string(rune('0'+i))+".csv")
		if _, e, code := runCmd(t, "sweep", scen, "--shard", string(rune('0'+i))+"/3", "--csv", csv); code != 0 {
			t.Fatalf("shard %d: exit %d: %s", i, code, e)
		}
		shards = append(shards, csv)
	}
	merged := filepath.Join(dir, "merged.csv")
	text, e, code := runCmd(t, append([]string{"sweep", "merge", "--csv", merged}, shards...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, e)
	}
	if got, _ := os.ReadFile(merged); !bytes.Equal(got, want) {
		t.Errorf("merged shards differ from the whole sweep:\n%s\nwant:\n%s", got, want)
	}
	// The merged table is printed as sweep --csv prints the whole one.
	if wholeText, _, _ := runCmd(t, "sweep", scen, "--csv", filepath.Join(dir, "again.csv")); text != wholeText {
		t.Errorf("merge --csv printed\n%s\nwant the table sweep --csv prints:\n%s", text, wholeText)
	}
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
	out, _, _ := runCmd(t, "sweep", scen, "--json")
	if !strings.Contains(out, `"shard": "1/3"`) || strings.Contains(out, `"point": 0,`) {
		t.Errorf("SLURM shard 1/3 output:\n%s", out)
	}
}

// The sweep's idle mean and largest idle are over the GPUs that run ops:
// every point of sweepScenario copies to gpu0 alone, so both are gpu0's,
// whatever else the machine has (eight GPUs on a DGX).
func TestSweepIdleIsOfTheGPUsInUse(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "sw.yaml")
	os.WriteFile(scen, []byte(sweepScenario), 0o644)
	out, errb, code := runCmd(t, "sweep", scen, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var tab struct {
		Rows []struct {
			Values   []string `json:"values"`
			IdleMean float64  `json:"idle_mean"`
			IdleMax  float64  `json:"idle_max"`
			PerGPU   []struct {
				GPU  string  `json:"gpu"`
				Idle float64 `json:"idle"`
			} `json:"idle_per_gpu"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil || len(tab.Rows) != 18 {
		t.Fatalf("JSON with %d rows (%v), want 18", len(tab.Rows), err)
	}
	for _, r := range tab.Rows {
		if len(r.PerGPU) < 2 || r.PerGPU[0].GPU != "gpu0" {
			t.Fatalf("%v: idle per GPU %v, want gpu0 first of several", r.Values, r.PerGPU)
		}
		g0 := r.PerGPU[0].Idle
		if r.IdleMean != g0 || r.IdleMax != g0 {
			t.Errorf("%v: idle mean %g, max %g; want gpu0's, %g (the others run nothing)", r.Values, r.IdleMean, r.IdleMax, g0)
		}
		if r.PerGPU[1].Idle != 1 {
			t.Errorf("%v: gpu1 idle %g, want 1: it runs nothing", r.Values, r.PerGPU[1].Idle)
		}
	}
}

// A sweep with a point whose value is not valid runs the others, writes
// them, and exits with status 2, naming the first failed point (the last
// var varies fastest: points 0-2 are pinned, 3-5 not valid) and where in
// the sweep: block its value is.
func TestSweepWithAFailedPointExitsTwo(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "sw.yaml")
	bad := strings.Replace(sweepScenario, "memory: [pinned, pageable]", "memory: [pinned, pinnned]", 1)
	os.WriteFile(scen, []byte(bad), 0o644)
	csv := filepath.Join(dir, "out.csv")
	out, errb, code := runCmd(t, "sweep", scen, "--csv", csv, "--json")
	if code != 2 {
		t.Fatalf("exit %d, want 2 (9 of 18 points failed); stderr %q", code, errb)
	}
	want := "gpusim sweep: 9 of 18 points failed; the first, point 3 (topo=pcie-2gpu, memory=pinnned, n=1): " + scen + ":"
	if !strings.HasPrefix(errb, want) || !strings.Contains(errb, `"pinnned" is not valid`) || strings.Count(errb, "\n") != 1 {
		t.Errorf("stderr %q, want one line starting %q and saying what is not valid", errb, want)
	}
	// The fix is in the sweep: block (line 7, column 20), not where the
	// value is used.
	if !strings.HasSuffix(errb, " (${memory} from sweep: at 7:20)\n") {
		t.Errorf("stderr %q, want it to end by naming the swept value's place", errb)
	}
	if got, _ := os.ReadFile(csv); !bytes.Contains(got, []byte("complete, 18 of 18 points")) {
		t.Errorf("the CSV should hold every point, the failed ones with their error: %s", got)
	}
	var tab struct {
		Rows []struct {
			Point     int     `json:"point"`
			MakespanS float64 `json:"makespan_s"`
			Error     string  `json:"error"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil || len(tab.Rows) != 18 {
		t.Fatalf("JSON with %d rows (%v), want 18", len(tab.Rows), err)
	}
	for _, r := range tab.Rows {
		if bad := r.Point/3%2 == 1; bad != (r.Error != "") || bad == (r.MakespanS > 0) {
			t.Errorf("point %d: makespan %g s, error %q; want an error exactly for the points with pinnned", r.Point, r.MakespanS, r.Error)
		}
	}
}

// Shards of a sweep with failed points merge into a table with them, and
// the merge exits 2 as the whole sweep does.
func TestSweepMergeWithFailedPointsExitsTwo(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "sw.yaml")
	bad := strings.Replace(sweepScenario, "memory: [pinned, pageable]", "memory: [pinned, pinnned]", 1)
	os.WriteFile(scen, []byte(bad), 0o644)
	var shards []string
	for i := 0; i < 2; i++ {
		csv := filepath.Join(dir, "shard"+string(rune('0'+i))+".csv")
		if _, _, code := runCmd(t, "sweep", scen, "--shard", string(rune('0'+i))+"/2", "--csv", csv); code != 2 {
			t.Fatalf("shard %d: exit %d, want 2", i, code)
		}
		shards = append(shards, csv)
	}
	_, errb, code := runCmd(t, append([]string{"sweep", "merge"}, shards...)...)
	if want := "gpusim sweep: 9 of 18 points failed; the first, point 3 (topo=pcie-2gpu, memory=pinnned, n=1): "; code != 2 || !strings.HasPrefix(errb, want) {
		t.Errorf("merge: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
}

// Flags that make no sense together, or alone, are refused in one line.
func TestSweepRefusesFlagsThatDoNothing(t *testing.T) {
	for _, v := range []string{"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX"} {
		t.Setenv(v, "") // restored after the test
		os.Unsetenv(v)
	}
	dir := t.TempDir()
	scen := filepath.Join(dir, "sw.yaml")
	os.WriteFile(scen, []byte(sweepScenario), 0o644)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--metric", "idle_mean"}, "gpusim sweep: --metric chooses what --plot DIR draws; add --plot\n"},
		{[]string{"--shards", "3"}, "gpusim sweep: --shards 3 counts the shards of a Kubernetes Indexed Job, whose JOB_COMPLETION_INDEX is not set here: run one shard with --shard i/n\n"},
		{[]string{"--shards", "3", "--shard", "0/2"}, "gpusim sweep: --shards goes with Kubernetes' JOB_COMPLETION_INDEX; here --shard or Slurm's SLURM_ARRAY_TASK_ID/COUNT already give the shard: drop --shards\n"},
		{[]string{"--shards", "-3"}, "gpusim sweep: --shards -3: want the number of shards, at least 1\n"},
		{[]string{"--shard", ""}, "gpusim sweep: --shard is empty: write it as i/n, such as 0/4 (a variable not set?)\n"},
		{[]string{"--shard= "}, "gpusim sweep: --shard is empty: write it as i/n, such as 0/4 (a variable not set?)\n"},
		{[]string{"--shards", "0"}, "gpusim sweep: --shards 0: want the number of shards, at least 1\n"},
		{[]string{"--shards=0"}, "gpusim sweep: --shards 0: want the number of shards, at least 1\n"},
		{[]string{"--max-ops", "-1"}, "gpusim sweep: --max-ops -1: want 1 to 68719476736 (the default is 10000000)\n"},
		{[]string{"--max-ops", "68719476737"}, "gpusim sweep: --max-ops 68719476737: want 1 to 68719476736 (the default is 10000000)\n"},
	} {
		_, errb, code := runCmd(t, append([]string{"sweep", scen}, tc.args...)...)
		if code != 2 || errb != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb, tc.want)
		}
	}
}

// TestSweepInterruptAndResume sends a real SIGINT to a running gpusim sweep:
// it must stop, exit non-zero and leave a complete CSV marked partial; a
// rerun with --resume must finish only the missing points and match a
// sweep run in one go.
func TestSweepInterruptAndResume(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "gpusim")
	if out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput(); err != nil {
		t.Fatalf("build: %v: %s", err, out)
	}
	// 60 points of about 0.09 s each, one at a time (5.3 s in all on the
	// development machine, which the signal after 1.5 s must interrupt; at
	// 300 repeats the solver's shortcut for lone transfers made the sweep
	// finish first).
	scen := filepath.Join(dir, "slow.yaml")
	os.WriteFile(scen, []byte(`
name: slow
topology: dgx-h100
sweep:
  i: [`+values(60)+`]
  k: [a]
threads:
  - name: main-${k}
    host: cpu0
    ops:
      - repeat: {count: 1500, ops: [{kernel: {stream: gpu0/s, duration: "${i} us"}}, {allreduce: {gpus: all, bytes: 1 MiB, stream: comm}}]}
`), 0o644)
	csv := filepath.Join(dir, "slow.csv")
	cmd := exec.Command(bin, "sweep", scen, "-j", "1", "--csv", csv)
	var errb bytes.Buffer
	cmd.Stderr = &errb
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	cmd.Process.Signal(syscall.SIGINT)
	err := cmd.Wait()
	if err == nil {
		t.Fatalf("interrupted sweep exited 0 (it may have finished before the signal); stderr: %s", errb.String())
	}
	if !strings.Contains(errb.String(), "interrupted") || !strings.Contains(errb.String(), "--resume") {
		t.Errorf("stderr %q does not say it was interrupted and how to resume", errb.String())
	}
	partial, rerr := os.ReadFile(csv)
	if rerr != nil {
		t.Fatalf("no CSV after the interrupt: %v", rerr)
	}
	if !bytes.Contains(partial, []byte(": partial, ")) {
		t.Fatalf("CSV not marked partial:\n%s", firstLine(string(partial)))
	}
	// Without --csv nothing was saved, and it says so rather than point
	// at a file to resume.
	bare := exec.Command(bin, "sweep", scen, "-j", "1")
	var bareErr bytes.Buffer
	bare.Stderr = &bareErr
	if err := bare.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1500 * time.Millisecond)
	bare.Process.Signal(syscall.SIGINT)
	if err := bare.Wait(); err == nil || !strings.Contains(bareErr.String(), "without --csv nothing was saved") {
		t.Errorf("interrupted without --csv: %v, stderr %q; want it to say nothing was saved", err, bareErr.String())
	}
	if out, err := exec.Command(bin, "sweep", scen, "-j", "2", "--csv", csv, "--resume").CombinedOutput(); err != nil {
		t.Fatalf("resume: %v: %s", err, out)
	}
	whole := filepath.Join(dir, "whole.csv")
	if out, err := exec.Command(bin, "sweep", scen, "-j", "2", "--csv", whole).CombinedOutput(); err != nil {
		t.Fatalf("whole: %v: %s", err, out)
	}
	a, _ := os.ReadFile(csv)
	b, _ := os.ReadFile(whole)
	if !bytes.Equal(a, b) {
		t.Errorf("resumed table differs from one run in one go:\n%s\nvs\n%s", firstLine(string(a)), firstLine(string(b)))
	}
}

// The simulator's warnings for a point are not lost in a sweep: each point
// run that had any gets a line on stderr, in point order whatever -j, the
// first ten of them (a point's first warning, and how many more), and
// --json lists them all; --strict makes such points failed points (exit
// status 2), as gpusim run --strict does for one run.
func TestSweepWarnsAndStrict(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "w.yaml")
	// Point i waits i+1 times on each of two events not yet recorded: two
	// warnings (one per place), each counting its i repeats.
	src := `name: w
topology: pcie-2gpu
vars: {n: 1}
sweep: {n: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12]}
threads:
  - name: main
    host: cpu0
    ops:
      - repeat: {count: "${n}", ops: [{wait: {stream: gpu0/s, event: e}}, {wait: {stream: gpu0/s, event: f}}]}
      - kernel: {stream: gpu0/s, duration: 1 us}
      - record: {stream: gpu0/s, event: e}
      - record: {stream: gpu0/s, event: f}
`
	if err := os.WriteFile(scen, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errb, code := runCmd(t, "sweep", scen, "-j", "4", "--json")
	if code != 0 {
		t.Fatalf("exit %d, want 0 (warnings are not errors); stderr %q", code, errb)
	}
	lines := strings.Split(strings.TrimSuffix(errb, "\n"), "\n")
	if len(lines) != 11 {
		t.Fatalf("%d lines on stderr, want 10 points and a count of the other 2:\n%s", len(lines), errb)
	}
	for i, l := range lines[:10] {
		want := fmt.Sprintf("warning: point %d (n=%d): %s:9:46: op main/0: waits on event e, which has no record", i, i+1, scen)
		if !strings.HasPrefix(l, want) {
			t.Errorf("line %d %q, want it to start %q", i, l, want)
		}
		times := "times"
		if i == 1 {
			times = "time"
		}
		if more := strings.Contains(l, fmt.Sprintf("(and %d more %s from this place)", i, times)); more != (i >= 1) {
			t.Errorf("line %d %q: want (and %d more times, ...) exactly from point 1 on", i, l, i)
		}
		if !strings.HasSuffix(l, "(and one more; gpusim run with the point's values as --set shows them all)") {
			t.Errorf("line %d %q: want it to end with the count of the point's other warning", i, l)
		}
	}
	if lines[10] != "warning: and 2 more points with warnings (--json lists each point's)" {
		t.Errorf("last line %q", lines[10])
	}
	var tab struct {
		Rows []struct {
			Warnings []string `json:"warnings"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil || len(tab.Rows) != 12 {
		t.Fatalf("JSON with %d rows (%v), want 12", len(tab.Rows), err)
	}
	for i, r := range tab.Rows {
		if len(r.Warnings) != 2 {
			t.Errorf("point %d: %d warnings in the JSON, want 2", i, len(r.Warnings))
		}
	}

	_, errb, code = runCmd(t, "sweep", scen, "-j", "4", "--strict")
	if code != 2 {
		t.Fatalf("--strict: exit %d, want 2; stderr %q", code, errb)
	}
	want := "gpusim sweep: 12 of 12 points failed; the first, point 0 (n=1): --strict makes its 2 warnings an error: " + scen + ":9:46: op main/0: waits on event e"
	if !strings.HasPrefix(errb, want) || strings.Count(errb, "\n") != 1 {
		t.Errorf("--strict: stderr %q, want one line starting %q", errb, want)
	}
}

// A point with warnings is a failed point with --strict and a result
// without: --resume runs again the rows of the other way (the table is
// the one a run in one go writes), and sweep merge refuses shards of both
// ways, naming a row of each: a resumed or merged table held points failed
// for warnings beside points with the same warnings that ran.
func TestSweepStrictIsNotMixed(t *testing.T) {
	dir := unsharded(t)
	scen := filepath.Join(dir, "w.yaml")
	// Event x is recorded before the wait, e after it: the points of
	// ev=e (2 and 3) warn that e has no record when waited on.
	os.WriteFile(scen, []byte(`name: w
topology: pcie-2gpu
sweep: {ev: [x, e], n: [1, 2]}
threads:
  - name: main
    host: cpu0
    ops:
      - record: {stream: gpu0/s, event: x}
      - repeat: {count: "${n}", ops: [{wait: {stream: gpu0/s, event: "${ev}"}}]}
      - kernel: {stream: gpu0/s, duration: 1 us}
      - record: {stream: gpu0/s, event: e}
`), 0o644)
	read := func(name string) string {
		b, err := os.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		return string(b)
	}
	sweep := func(wantCode int, args ...string) string {
		t.Helper()
		_, errb, code := runCmd(t, append([]string{"sweep", scen}, args...)...)
		if code != wantCode {
			t.Fatalf("sweep %v: exit %d, want %d: %s", args, code, wantCode, errb)
		}
		return errb
	}
	lenient, strict := filepath.Join(dir, "lenient.csv"), filepath.Join(dir, "strict.csv")
	sweep(0, "--csv", lenient)
	sweep(2, "--csv", strict, "--strict")
	if l, s := read(lenient), read(strict); strings.Count(s, strictPrefix) != 2 || strings.Contains(l, strictPrefix) {
		t.Fatalf("want the 2 points of ev=e failed with --strict only:\n%s\n%s", l, s)
	}
	for _, tc := range []struct {
		from, want string
		args       []string
		code       int
	}{
		{lenient, strict, []string{"--strict"}, 2},
		{strict, lenient, nil, 0},
	} {
		f := filepath.Join(dir, "r.csv")
		os.WriteFile(f, []byte(read(tc.from)), 0o644)
		errb := sweep(tc.code, append([]string{"--csv", f, "--resume"}, tc.args...)...)
		was := "without --strict"
		if tc.from == strict {
			was = "with --strict"
		}
		if note := "note: " + f + " was run " + was + ": its 2 points with warnings run again\n"; !strings.HasPrefix(errb, note) {
			t.Errorf("%s resumed %v: stderr\n%s\nwant it to start %q", tc.from, tc.args, errb, note)
		}
		if got := read(f); got != read(tc.want) {
			t.Errorf("%s resumed %v:\n%s\nwant the table of a run in one go:\n%s", tc.from, tc.args, got, read(tc.want))
		}
	}
	// Shard 0/2 holds points 0 and 2, 1/2 points 1 and 3 (lines 3 and 4).
	s0, s1 := filepath.Join(dir, "s0.csv"), filepath.Join(dir, "s1.csv")
	sweep(0, "--shard", "0/2", "--csv", s0)
	sweep(2, "--shard", "1/2", "--csv", s1, "--strict")
	_, errb, code := runCmd(t, "sweep", "merge", s0, s1)
	if want := s1 + ":4:1: point 3, failed by --strict for its warnings, and point 2 at " + s0 + ":4:1, with warnings and not failed: the shards were run with --strict and without; run those without it again with --strict (--resume reruns its points), or the others again without it\n"; code != 2 || errb != want {
		t.Errorf("merge of shards with and without --strict: exit %d, stderr\n%s\nwant 2 and\n%s", code, errb, want)
	}
	sweep(2, "--shard", "0/2", "--csv", s0, "--resume", "--strict")
	if _, errb, code := runCmd(t, "sweep", "merge", "--csv", filepath.Join(dir, "m.csv"), s0, s1); code != 2 || !strings.Contains(errb, "2 of 4 points failed") {
		t.Errorf("merge of shards with --strict: exit %d, stderr\n%s\nwant 2 and the failed points counted", code, errb)
	}
	if got := read(filepath.Join(dir, "m.csv")); got != read(strict) {
		t.Errorf("merged shards run with --strict:\n%s\nwant the table of a run in one go:\n%s", got, read(strict))
	}
}

// A shipped study run as three shards, written as CSV and merged, prints
// the JSON of the study run in one go, byte for byte: the CSV keeps every
// digit of each float (six significant digits once made the merged
// makespans and idle fractions differ in the seventh).
func TestSweepMergedShardsGiveTheSameJSON(t *testing.T) {
	dir := unsharded(t)
	whole, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--json")
	if code != 0 {
		t.Fatalf("sweep pipeline-bubble: exit %d: %s", code, errb)
	}
	// The study's makespans have more than six significant digits (point
	// 0's is 0.210625913982 s), or the test would not tell the two apart.
	if !strings.Contains(whole, `"makespan_s": 0.210625913982,`) {
		t.Fatalf("point 0's makespan is not 0.210625913982 s; pick another value to check:\n%s", whole)
	}
	shards := runShards(t, dir, "pipeline-bubble", 3)
	s0, _ := os.ReadFile(shards[0])
	if !bytes.Contains(s0, []byte("\n0,gpipe,4,0.210625913982,")) {
		t.Errorf("shard 0's CSV does not hold point 0's makespan in full, 0.210625913982:\n%s", s0)
	}
	merged, errb, code := runCmd(t, append([]string{"sweep", "merge", "--json"}, shards...)...)
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errb)
	}
	if merged != whole {
		t.Errorf("merged shards' JSON differs from the whole sweep's:\n%s\nwant:\n%s", merged, whole)
	}
	// A CSV of an older gpusim, six digits, still reads.
	old := filepath.Join(dir, "old.csv")
	os.WriteFile(old, []byte("# gpusim sweep pipeline-bubble: complete, 1 of 8 points\n"+
		"point,schedule,microbatches,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error\n"+
		"0,gpipe,4,0.210622,0.428299,0.428952,gpu0=0.428952 gpu1=0.427645,link:gpu1-nvswitch gpu1->nvswitch,0.000859282,compute-bound: 100% of the critical path is kernels,\n"), 0o644)
	out, errb, code := runCmd(t, "sweep", "merge", "--json", old)
	if code != 0 || !strings.Contains(out, `"makespan_s": 0.210622,`) || !strings.Contains(out, `"idle": 0.427645`) {
		t.Errorf("old CSV: exit %d, stderr %q, JSON:\n%s\nwant exit 0 and its six-digit values", code, errb, out)
	}
}

// A Slurm array numbered from 1 (sbatch --array=1-3: SLURM_ARRAY_TASK_MIN
// 1, ids 1, 2, 3, SLURM_ARRAY_TASK_COUNT 3) runs shards 0/3, 1/3 and 2/3:
// task 1 has points 0, 3, 6, 9 of the 12 of pipeline-bubble, task 3
// points 2, 5, 8, 11. The task id was taken as the shard, so that task 3
// failed.
func TestSweepSlurmArrayFromMin(t *testing.T) {
	t.Setenv("JOB_COMPLETION_INDEX", "")
	os.Unsetenv("JOB_COMPLETION_INDEX")
	t.Setenv("SLURM_ARRAY_TASK_MIN", "1")
	t.Setenv("SLURM_ARRAY_TASK_COUNT", "3")
	for _, tc := range []struct {
		id, shard string
		points    []int
	}{
		{"1", "0/3", []int{0, 3, 6, 9}},
		{"2", "1/3", []int{1, 4, 7, 10}},
		{"3", "2/3", []int{2, 5, 8, 11}},
	} {
		t.Setenv("SLURM_ARRAY_TASK_ID", tc.id)
		out, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--json")
		if code != 0 {
			t.Errorf("task %s: exit %d: %s", tc.id, code, errb)
			continue
		}
		var tab struct {
			Shard string `json:"shard"`
			Rows  []struct {
				Point int `json:"point"`
			} `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &tab); err != nil {
			t.Fatal(err)
		}
		var got []int
		for _, r := range tab.Rows {
			got = append(got, r.Point)
		}
		if tab.Shard != tc.shard || fmt.Sprint(got) != fmt.Sprint(tc.points) {
			t.Errorf("task %s: shard %q, points %v; want %s, %v", tc.id, tab.Shard, got, tc.shard, tc.points)
		}
	}
	// An id past the array's last (a step, --array=1-5:2, has ids 1, 3, 5
	// and count 3) is refused rather than taken for another shard.
	t.Setenv("SLURM_ARRAY_TASK_ID", "5")
	_, errb, code := runCmd(t, "sweep", "pipeline-bubble")
	want := "gpusim sweep: SLURM_ARRAY_TASK_ID=5 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3: want a task id from SLURM_ARRAY_TASK_MIN (0 if not set) to MIN+COUNT-1, a shard each; an array with a step or gaps, such as --array=0-8:2, is not one: give --shard i/n\n"
	if code != 2 || errb != want {
		t.Errorf("task 5 of 1-5:2: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
	// Where Slurm says so (SLURM_ARRAY_TASK_STEP, or MAX-MIN+1 not the
	// count), every task of such an array refuses, the first one too:
	// tasks 1 and 3 ran shards 0/3 and 2/3 and shard 1 never ran.
	t.Setenv("SLURM_ARRAY_TASK_ID", "1")
	t.Setenv("SLURM_ARRAY_TASK_MAX", "5")
	t.Setenv("SLURM_ARRAY_TASK_STEP", "2")
	_, errb, code = runCmd(t, "sweep", "pipeline-bubble")
	want = "gpusim sweep: SLURM_ARRAY_TASK_ID=1 SLURM_ARRAY_TASK_MIN=1 SLURM_ARRAY_TASK_COUNT=3 SLURM_ARRAY_TASK_STEP=2 SLURM_ARRAY_TASK_MAX=5: want a task id from SLURM_ARRAY_TASK_MIN (0 if not set) to MIN+COUNT-1, a shard each; an array with a step or gaps, such as --array=0-8:2, is not one: give --shard i/n\n"
	if code != 2 || errb != want {
		t.Errorf("task 1 of 1-5:2: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
}

// A --plot DIR that cannot be a directory (a file, or a path through one)
// is refused before any point runs, as --csv naming a directory is, with
// the exit status of a file that cannot be written (1): the sweep ran to
// the end first, then failed.
func TestSweepPlotDirCheckedFirst(t *testing.T) {
	dir := unsharded(t)
	file := filepath.Join(dir, "file")
	os.WriteFile(file, []byte("x"), 0o644)
	csv := filepath.Join(dir, "out.csv")
	for _, plotTo := range []string{file, filepath.Join(file, "sub")} {
		want := "gpusim: cannot make the plot directory " + plotTo + ": " + file + " is a file; name a directory, or one to make\n"
		out, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--plot", plotTo, "--csv", csv)
		if code != 1 || errb != want || out != "" {
			t.Errorf("--plot %s: exit %d, stdout %q, stderr %q; want 1, nothing and %q", plotTo, code, out, errb, want)
		}
		if _, err := os.Stat(csv); err == nil {
			t.Errorf("--plot %s: the sweep ran and wrote its CSV before the refusal", plotTo)
		}
		_, errb, code = runCmd(t, "sweep", "merge", "/tmp/no/such/shard.csv", "--plot", plotTo)
		if code != 1 || errb != want {
			t.Errorf("merge --plot %s: exit %d, stderr %q; want 1 and %q (before reading the shards)", plotTo, code, errb, want)
		}
	}
	// --csv naming a directory fails the same way, with the same status.
	if _, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--csv", dir); code != 1 || !strings.HasPrefix(errb, "gpusim: cannot write "+dir) {
		t.Errorf("--csv DIR: exit %d, stderr %q; want 1", code, errb)
	}
	// A directory to make, under one that exists, is drawn into.
	made := filepath.Join(dir, "new", "plots")
	if _, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--plot", made); code != 0 {
		t.Fatalf("--plot %s: exit %d: %s", made, code, errb)
	}
	if _, err := os.Stat(filepath.Join(made, "sweep.png")); err != nil {
		t.Errorf("no sweep.png in %s: %v", made, err)
	}
}

// sweepCSVHead and sweepCSVRows are a CSV of 3 of the 4 points of a sweep
// of a: [x, y] and b: [1, 2] (point 0 is x,1; 1 x,2; 2 y,1; 3 y,2), as
// gpusim sweep --csv writes one; the tests below edit a row.
const (
	sweepCSVHead = "# gpusim sweep st: complete, 3 of 4 points\n" +
		"point,a,b,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error\n"
	sweepCSVRow0 = "0,x,1,0.5,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n"
	sweepCSVRow1 = "1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n"
	sweepCSVRow3 = "3,y,2,1.5,0,0,gpu0=0 gpu1=0,l,0.5,compute-bound,\n"
)

// sweepMerge runs gpusim sweep merge on files named and written in a
// temporary directory, in the order given, and returns stderr and the exit
// status, with the directory's name in stderr written DIR.
func sweepMerge(t *testing.T, files ...[2]string) (string, int) {
	t.Helper()
	dir := t.TempDir()
	args := []string{"sweep", "merge", "--json"}
	for _, f := range files {
		name := filepath.Join(dir, f[0])
		if err := os.WriteFile(name, []byte(f[1]), 0o644); err != nil {
			t.Fatal(err)
		}
		args = append(args, name)
	}
	_, errb, code := runCmd(t, args...)
	return strings.ReplaceAll(errb, dir+string(filepath.Separator), "DIR/"), code
}

// csvOf is a CSV of the sweep of sweepCSVHead holding rows, its first line
// counting them as gpusim sweep writes it.
func csvOf(rows ...string) string {
	return strings.Replace(sweepCSVHead, "3 of 4", fmt.Sprintf("%d of 4", len(rows)), 1) + strings.Join(rows, "")
}

// A table read back (sweep merge, --resume) whose rows gpusim sweep could
// not have written is refused in one line naming the file, the line (the
// # line is 1) and the column in characters of the field, the column's
// name and what it should hold, with exit status 2: corrupt values were
// read as 0, or as NaN that --json then failed on (exit 1).
func TestSweepMergeRefusesCorruptRows(t *testing.T) {
	const want11 = "; want 11, as the header on line 2 has: point,a,b,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error\n"
	for _, tc := range []struct {
		row1 string // in place of sweepCSVRow1, on line 4
		want string
	}{
		{"1,x,2,abc,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:7: column makespan_s: "abc" is not a number; want the makespan in seconds, a number at least 0` + "\n"},
		{"1,x,2,NaN,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:7: column makespan_s: "NaN" is not a number; want the makespan in seconds, a number at least 0` + "\n"},
		{"1,x,2,1e400,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:7: column makespan_s: "1e400" is out of range; want the makespan in seconds, a number at least 0` + "\n"},
		{"1,x,2,-1,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:7: column makespan_s: "-1" is out of range; want the makespan in seconds, a number at least 0` + "\n"},
		{"1,x,2,0.75,1.5,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:12: column idle_mean: "1.5" is out of range; want a fraction from 0 to 1` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=x,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:21: column idle_per_gpu: "gpu1=x": "x" is not a fraction; want GPU=fraction pairs apart by spaces, each fraction from 0 to 1, such as gpu0=0.25 gpu1=1` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu0=1,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:21: column idle_per_gpu: gpu0 twice; want GPU=fraction pairs apart by spaces, each fraction from 0 to 1, such as gpu0=0.25 gpu1=1, each GPU once` + "\n"},
		{"1,x,2,0.75,0.25,0.5,,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:21: column idle_per_gpu: empty, for a point that ran; want GPU=fraction pairs apart by spaces, each fraction from 0 to 1, such as gpu0=0.25 gpu1=1, each GPU of its topology` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,Inf,compute-bound,\n",
			`DIR/f.csv:4:39: column busiest_link_util: "Inf" is out of range; want a fraction from 0 to 1 (0 where no link carried anything)` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,7,compute-bound,\n",
			`DIR/f.csv:4:39: column busiest_link_util: "7" is out of range; want a fraction from 0 to 1 (0 where no link carried anything)` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,,0.5,compute-bound,\n",
			`DIR/f.csv:4:38: column busiest_link_util: "0.5" with no busiest link; want 0 where no link carried anything` + "\n"},
		// Columns count characters: é is one, two bytes.
		{"1,é,2,abc,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:7: column makespan_s: "abc" is not a number; want the makespan in seconds, a number at least 0` + "\n"},
		{"one,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:1: column point: "one" is not a point; want a whole number from 0 to 3, the point's place in the sweep` + "\n"},
		{"4,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			"DIR/f.csv:4:1: column point: point 4 is not in the sweep; want a whole number from 0 to 3, the point's place in the sweep of 4 points\n"},
		{"-1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			"DIR/f.csv:4:1: column point: point -1 is not in the sweep; want a whole number from 0 to 3, the point's place in the sweep of 4 points\n"},
		{sweepCSVRow0,
			"DIR/f.csv:4:1: column point: point 0 again (it is at DIR/f.csv:3:1); want each point once\n"},
		// b is 1 for point 0 and 2 for point 3: in a sweep of 2 vars
		// over 4 points, point 1 has one of the two.
		{"1,x,3,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:5:5: column b: point 3's "2" and point 1's "3" (at DIR/f.csv:4:5) fit no sweep of 2 vars over 4 points together with the rows before this one; want the values gpusim sweep wrote (was one of the two edited, or are they of sweeps of other values?)` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,,\n",
			"DIR/f.csv:4:60: 12 fields" + want11},
		// No control characters: the terminal's table would print them.
		{"1,x\x1b[2J,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:3: column a: "x\x1b[2J" holds a control character (U+001B); want text as gpusim writes it, which holds none (was the row edited?)` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute\x00-bound,\n",
			`DIR/f.csv:4:45: column bottleneck: "compute\x00-bound" holds a control character (U+0000); want text as gpusim writes it, which holds none (was the row edited?)` + "\n"},
		{"1,x\ty,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:3: column a: "x\ty" holds a control character (U+0009); want text as gpusim writes it, which holds none (was the row edited?)` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 g\apu1=0,l,0.125,compute-bound,\n",
			`DIR/f.csv:4:21: column idle_per_gpu: GPU "g\apu1" holds a control character (U+0007); want GPU=fraction pairs apart by spaces, each fraction from 0 to 1, such as gpu0=0.25 gpu1=1, GPUs named as in their topology` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,,\"a\rb\"\n",
			`DIR/f.csv:4:46: column error: "a\rb" holds a control character (U+000D); want text as gpusim writes it, which holds none (was the row edited?)` + "\n"},
		{"1,x,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l\"ink,0.125,compute-bound,\n",
			`DIR/f.csv:4:38: not CSV: bare " in non-quoted-field; want fields apart by commas, quoted ("...", a quote written "") where they hold a comma, a quote or a line break` + "\n"},
	} {
		errb, code := sweepMerge(t, [2]string{"f.csv", sweepCSVHead + sweepCSVRow0 + tc.row1 + sweepCSVRow3})
		if code != 2 || errb != tc.want {
			t.Errorf("row %q: exit %d, stderr\n%s\nwant 2 and\n%s", tc.row1, code, errb, tc.want)
		}
	}
	for _, tc := range []struct {
		name, data, want string
	}{
		{"cut short", sweepCSVHead + sweepCSVRow0 + "1,x,2,0.7",
			"DIR/f.csv:4:10: 4 fields (the file ends in this row: was it cut short?)" + want11},
		{"no header", "# gpusim sweep st: complete, 3 of 4 points\n" + sweepCSVRow0,
			"DIR/f.csv:2:1: a row of a point where the header row should be; want the header: point, the swept vars, then makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error,samples_per_s,tokens_per_s,mfu,compute_mean,topology,warnings,first_token_s,per_token_s\n"},
		{"first line", "# gpusim sweep st: done, 3 of 4 points\n",
			`DIR/f.csv:1:1: cannot read the line "# gpusim sweep st: done, 3 of 4 points"; want # gpusim sweep NAME: complete (or partial), N of TOTAL points, then " shard i/n" for a shard and ", --set {"name":"value"}" for a sweep run with --set` + "\n"},
		{"a var's name", strings.Replace(sweepCSVHead, ",b,", ",b\a,", 1) + sweepCSVRow0 + sweepCSVRow1 + sweepCSVRow3,
			`DIR/f.csv:2:7: var "b\a" holds a control character (U+0007); want the name gpusim sweep wrote, which holds none (was the file edited?)` + "\n"},
		{"the scenario's name", strings.Replace(sweepCSVHead, "sweep st:", "sweep s\x1bt:", 1) + sweepCSVRow0 + sweepCSVRow1 + sweepCSVRow3,
			`DIR/f.csv:1:16: scenario "s\x1bt" holds a control character (U+001B); want the name gpusim sweep wrote, which holds none (was the file edited?)` + "\n"},
		{"rows missing", sweepCSVHead + sweepCSVRow0,
			"DIR/f.csv:1:30: the first line says 3 points, but the file holds 1 row; want the table as gpusim sweep --csv wrote it (cut short, or edited: run the sweep or its shard again)\n"},
		{"not in the shard", "# gpusim sweep st: complete, 2 of 4 points shard 0/2\n" + sweepCSVHead[strings.Index(sweepCSVHead, "\n")+1:] + sweepCSVRow0 + sweepCSVRow1,
			"DIR/f.csv:4:1: column point: point 1 is not one of shard 0/2's; want only its points, 0, 2\n"},
	} {
		errb, code := sweepMerge(t, [2]string{"f.csv", tc.data})
		if code != 2 || errb != tc.want {
			t.Errorf("%s: exit %d, stderr\n%s\nwant 2 and\n%s", tc.name, code, errb, tc.want)
		}
	}
	// A point in two files: the second is refused.
	errb, code := sweepMerge(t, [2]string{"f.csv", csvOf(sweepCSVRow0, sweepCSVRow1)}, [2]string{"g.csv", csvOf(sweepCSVRow3, sweepCSVRow0)})
	if want := "DIR/g.csv:4:1: column point: point 0 again (it is at DIR/f.csv:3:1); want each point once: each shard's file once, and no two files that hold the same shard\n"; code != 2 || errb != want {
		t.Errorf("point 0 in two files: exit %d, stderr\n%s\nwant 2 and\n%s", code, errb, want)
	}
	// A file given twice is said to be so.
	dir := t.TempDir()
	f := filepath.Join(dir, "f.csv")
	os.WriteFile(f, []byte(sweepCSVHead+sweepCSVRow0), 0o644)
	g := dir + "/./f.csv" // another name of f
	if _, errb, code := runCmd(t, "sweep", "merge", f, g); code != 2 || errb != "gpusim sweep merge: "+f+" and "+g+" are the same file; want each shard's file once\n" {
		t.Errorf("a file twice: exit %d, stderr %q", code, errb)
	}
	// A value in one file that contradicts another file's: point 2 is
	// y,1, at b's first place as point 0 is.
	errb, code = sweepMerge(t, [2]string{"f.csv", csvOf(sweepCSVRow0, sweepCSVRow1)}, [2]string{"g.csv", csvOf("2,y,2,1.5,0,0,gpu0=0 gpu1=0,l,0.5,compute-bound,\n")})
	if want := `DIR/g.csv:3:5: column b: point 2's "2" and point 0's "1" (at DIR/f.csv:3:5) fit no sweep`; code != 2 || !strings.HasPrefix(errb, want) {
		t.Errorf("point 2 with b 2: exit %d, stderr\n%s\nwant 2 and a line starting\n%s", code, errb, want)
	}
	// The rows as written merge.
	if errb, code := sweepMerge(t, [2]string{"f.csv", csvOf(sweepCSVRow0, sweepCSVRow1)}, [2]string{"g.csv", csvOf(sweepCSVRow3)}); code != 0 || errb != "warning: the shards hold 3 of 4 points\n" {
		t.Errorf("valid rows: exit %d, stderr %q; want 0 and a warning of the missing point", code, errb)
	}
	// A table printed by --json is read back with the same checks, its
	// places those of the JSON.
	js := `{
 "scenario": "st",
 "vars": ["a", "b"],
 "points_total": 4,
 "partial": false,
 "rows": [
  {"point": 0, "values": ["x", "1"], "makespan_s": -1, "idle_mean": 0, "idle_max": 0, "idle_per_gpu": [{"gpu": "g0", "idle": 0}], "busiest_link": "", "busiest_link_util": 0, "bottleneck": ""}
 ]
}
`
	if errb, code := sweepMerge(t, [2]string{"f.json", js}); code != 2 || errb != `DIR/f.json:7:52: column makespan_s: "-1" is out of range; want the makespan in seconds, a number at least 0`+"\n" {
		t.Errorf("JSON: exit %d, stderr %q", code, errb)
	}
	// A key left out of a JSON row read as 0: a makespan of 0, point 0.
	for _, cut := range []string{`"makespan_s": 0.5, `, `"point": 0, `} {
		row := strings.Replace(strings.Replace(js, "-1", "0.5", 1), cut, "", 1)
		key := cut[1 : strings.Index(cut[1:], `"`)+1]
		want := `DIR/f.json:7:3: a row without "` + key + `"; want each row's point and values, and the makespan_s, idle_mean, idle_max, idle_per_gpu, busiest_link, busiest_link_util and bottleneck of a point without an error, as gpusim sweep --json writes them (was the row edited?)` + "\n"
		if errb, code := sweepMerge(t, [2]string{"f.json", row}); code != 2 || errb != want {
			t.Errorf("JSON row without %s: exit %d, stderr %q; want 2 and %q", key, code, errb, want)
		}
	}
	// An inference's row with its token times and without its rates, or
	// a time a token without a first token, was read as it stood.
	infRow := strings.Replace(strings.Replace(js, "-1", "0.5", 1), `"bottleneck": ""`, `"bottleneck": "", "samples_per_s": 2, "tokens_per_s": 64, "first_token_s": 0.25, "per_token_s": 0.01`, 1)
	if errb, code := sweepMerge(t, [2]string{"f.json", infRow}); code != 0 {
		t.Fatalf("an inference's row: exit %d, stderr %q", code, errb)
	}
	for _, tc := range []struct{ cut, want string }{
		{`"samples_per_s": 2, `, `column samples_per_s: nothing, where the row has an inference's time to its first token; want the inference's sequences a second, a number at least 0 (was the row edited?)`},
		{`"tokens_per_s": 64, `, `column tokens_per_s: nothing, where the row has an inference's time to its first token; want the inference's tokens a second, a number at least 0 (was the row edited?)`},
		{`"first_token_s": 0.25, `, `column first_token_s: nothing, where the row has an inference's time a token; want its time to the first token in seconds, a number at least 0 (was the row edited?)`},
	} {
		errb, code := sweepMerge(t, [2]string{"f.json", strings.Replace(infRow, tc.cut, "", 1)})
		if code != 2 || !strings.HasPrefix(errb, "DIR/f.json:7:") || !strings.HasSuffix(errb, tc.want+"\n") {
			t.Errorf("an inference's row without %s: exit %d, stderr %q; want 2 and %q", tc.cut, code, errb, tc.want)
		}
	}
}

// --resume reads its CSV with the same checks, and requires each row's
// values to be its point's in the scenario's sweep.
func TestSweepResumeRefusesCorruptRows(t *testing.T) {
	dir := unsharded(t)
	scen := filepath.Join(dir, "st.yaml")
	os.WriteFile(scen, []byte(`name: st
topology: pcie-2gpu
sweep: {a: [x, y], b: [1, 2]}
threads:
  - name: main-${a}
    host: cpu0
    ops: [{kernel: {stream: gpu0/s, duration: "${b} us"}}]
`), 0o644)
	csv := filepath.Join(dir, "f.csv")
	for _, tc := range []struct{ row1, want string }{
		{"1,x,2,NaN,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			csv + `:4:7: column makespan_s: "NaN" is not a number; want the makespan in seconds, a number at least 0` + "\n"},
		{"1,y,2,0.75,0.25,0.5,gpu0=0.5 gpu1=0,l,0.125,compute-bound,\n",
			csv + `:4:3: column a: "y" for point 1; want "x", the point's value in the sweep of ` + scen + " (was the row edited, or the file written by a sweep of other values?)\n"},
	} {
		os.WriteFile(csv, []byte(csvOf(sweepCSVRow0, tc.row1)), 0o644)
		out, errb, code := runCmd(t, "sweep", scen, "--csv", csv, "--resume")
		if code != 2 || errb != tc.want || out != "" {
			t.Errorf("row %q: exit %d, stdout %q, stderr\n%s\nwant 2, nothing and\n%s", tc.row1, code, out, errb, tc.want)
		}
	}
}

// A sweep whose first point's values fail runs the others, its first a
// failed point of the table as any other would be: sweep loads a point to
// read the sweep, and the failing first one failed the whole sweep. Where
// every point fails, the first point's error is the sweep's.
func TestSweepRunsPastABadFirstPoint(t *testing.T) {
	dir := unsharded(t)
	write := func(values string) string {
		scen := filepath.Join(dir, "bp.yaml")
		os.WriteFile(scen, []byte(`name: bp
topology: pcie-2gpu
sweep: {d: `+values+`}
threads:
  - name: main
    host: cpu0
    ops: [{kernel: {stream: gpu0/s, duration: "${d}"}}]
`), 0o644)
		return scen
	}
	scen := write("[-1 us, 1 us, 2 us]")
	out, errb, code := runCmd(t, "sweep", scen, "--json")
	bad := scen + ":7:47: threads[0].ops[0].kernel.duration: -1 us must not be negative (${d} from sweep: at 3:13)"
	if want := "gpusim sweep: 1 of 3 points failed; the first, point 0 (d=-1 us): " + bad + "\n"; code != 2 || errb != want {
		t.Errorf("exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
	var tab struct {
		Rows []struct {
			Error     string  `json:"error"`
			MakespanS float64 `json:"makespan_s"`
		} `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &tab); err != nil || len(tab.Rows) != 3 {
		t.Fatalf("%v: want 3 rows:\n%s", err, out)
	}
	// A kernel of d after its launch, pcie-2gpu host's api_overhead of 3 us: 4 and 5 us.
	if tab.Rows[0].Error != bad || tab.Rows[1].MakespanS != 4e-6 || tab.Rows[2].MakespanS != 5e-6 {
		t.Errorf("rows %+v; want point 0 failed and 4 us, 5 us", tab.Rows)
	}
	scen = write("[-1 us, -2 us]")
	out, errb, code = runCmd(t, "sweep", scen)
	if want := bad + "\n"; code != 2 || out != "" || errb != want {
		t.Errorf("every point bad: exit %d, stdout %q, stderr %q; want 2, nothing and %q", code, out, errb, want)
	}
}

// A shard of no points (more shards than the sweep's points) prints its
// rows as an empty list, not null, and its JSON merges with the others.
func TestSweepShardOfNoPoints(t *testing.T) {
	dir := unsharded(t)
	scen := filepath.Join(dir, "st.yaml")
	os.WriteFile(scen, []byte(`name: st
topology: pcie-2gpu
sweep: {b: [1, 2]}
threads:
  - name: main
    host: cpu0
    ops: [{kernel: {stream: gpu0/s, duration: "${b} us"}}]
`), 0o644)
	var files []string
	for i := range 3 {
		out, errb, code := runCmd(t, "sweep", scen, "--shard", fmt.Sprintf("%d/3", i), "--json")
		if code != 0 {
			t.Fatalf("shard %d/3: exit %d: %s", i, code, errb)
		}
		var tab struct {
			Rows []json.RawMessage `json:"rows"`
		}
		if err := json.Unmarshal([]byte(out), &tab); err != nil || tab.Rows == nil || len(tab.Rows) != 1-i/2 {
			t.Errorf("shard %d/3: %v, rows %v; want a list of %d:\n%s", i, err, tab.Rows, 1-i/2, out)
		}
		f := filepath.Join(dir, fmt.Sprintf("s%d.json", i))
		os.WriteFile(f, []byte(out), 0o644)
		files = append(files, f)
	}
	whole, _, _ := runCmd(t, "sweep", scen, "--json")
	if merged, errb, code := runCmd(t, append([]string{"sweep", "merge", "--json"}, files...)...); code != 0 || merged != whole {
		t.Errorf("merged: exit %d (%s):\n%s\nwant the whole sweep's:\n%s", code, errb, merged, whole)
	}
}

// --resume with the CSV of another scenario's sweep is refused naming both,
// even where the vars and the count of points are the same: its rows are
// another program's points, and the file would be written over under this
// scenario's name.
func TestSweepResumeRefusesAnotherSweep(t *testing.T) {
	dir := unsharded(t)
	body := `topology: pcie-2gpu
sweep: {a: [x, y], b: [1, 2]}
threads:
  - name: main-${a}
    host: cpu0
    ops: [{kernel: {stream: gpu0/s, duration: "${b} us"}}]
`
	st, st2, st3 := filepath.Join(dir, "st.yaml"), filepath.Join(dir, "st2.yaml"), filepath.Join(dir, "st3.yaml")
	os.WriteFile(st, []byte("name: st\n"+body), 0o644)
	os.WriteFile(st2, []byte("name: st2\n"+body), 0o644)
	os.WriteFile(st3, []byte("name: st\n"+strings.ReplaceAll(strings.Replace(body, "b: [1, 2]", "c: [1, 2]", 1), "${b}", "${c}")), 0o644)
	csv := filepath.Join(dir, "f.csv")
	if _, errb, code := runCmd(t, "sweep", st, "--csv", csv); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errb)
	}
	before, _ := os.ReadFile(csv)
	// "# gpusim sweep st: ...": the name at column 16; the vars at column 7 of line 2,
	// the CSV's header.
	for _, tc := range []struct{ scen, want string }{
		{st2, csv + ":1:16: it holds a different sweep (st, vars a,b, 4 points) than " + st2 + " (st2, vars a,b, 4 points): want the --csv FILE this scenario's sweep wrote (or another --csv FILE)\n"},
		{st3, csv + ":2:7: it holds a different sweep (st, vars a,b, 4 points) than " + st3 + " (st, vars a,c, 4 points): want the --csv FILE this scenario's sweep wrote (or another --csv FILE)\n"},
	} {
		out, errb, code := runCmd(t, "sweep", tc.scen, "--csv", csv, "--resume")
		if code != 2 || errb != tc.want || out != "" {
			t.Errorf("%s: exit %d, stdout %q, stderr\n%s\nwant 2, nothing and\n%s", tc.scen, code, out, errb, tc.want)
		}
		if after, _ := os.ReadFile(csv); !bytes.Equal(after, before) {
			t.Errorf("%s: the file was written over:\n%s", tc.scen, after)
		}
	}
}

// --resume with the CSV of another shard (or of the whole sweep, or a
// shard's resumed as the whole sweep) is refused naming both: the rows of
// the file's other points were dropped from the file written over it.
func TestSweepResumeRefusesAnotherShard(t *testing.T) {
	dir := unsharded(t)
	csv := filepath.Join(dir, "s.csv")
	if _, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--shard", "1/3", "--csv", csv); code != 0 {
		t.Fatalf("shard 1/3: exit %d: %s", code, errb)
	}
	before, _ := os.ReadFile(csv)
	for _, tc := range []struct {
		args []string
		want string
	}{
		// "# gpusim sweep pipeline-bubble: complete, 4 of 12 points shard 1/3":
		// 15 + 15 + 2 + 10 + 14 + 7 characters before 1/3, at column 64.
		{[]string{"--shard", "0/3"}, csv + ":1:64: it holds shard 1/3; this run is shard 0/3: want the --csv FILE of shard 0/3 (each shard resumes its own file)\n"},
		{nil, csv + ":1:64: it holds shard 1/3; this run is the whole sweep: want the --csv FILE of the whole sweep (each shard resumes its own file)\n"},
		{[]string{"--shard", "1/4"}, csv + ":1:64: it holds shard 1/3; this run is shard 1/4: want the --csv FILE of shard 1/4 (each shard resumes its own file)\n"},
	} {
		_, errb, code := runCmd(t, append([]string{"sweep", "pipeline-bubble", "--csv", csv, "--resume"}, tc.args...)...)
		if code != 2 || errb != tc.want {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errb, tc.want)
		}
		if after, _ := os.ReadFile(csv); !bytes.Equal(after, before) {
			t.Errorf("%v: the file was written over:\n%s", tc.args, after)
		}
	}
	whole := filepath.Join(dir, "w.csv")
	if _, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--csv", whole); code != 0 {
		t.Fatalf("whole sweep: exit %d: %s", code, errb)
	}
	_, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--csv", whole, "--resume", "--shard", "2/3")
	if want := whole + ":1:1: it holds the whole sweep; this run is shard 2/3: want the --csv FILE of shard 2/3 (each shard resumes its own file)\n"; code != 2 || errb != want {
		t.Errorf("whole sweep resumed as shard 2/3: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
	// The shard's own file resumes (nothing is left to run).
	if _, errb, code := runCmd(t, "sweep", "pipeline-bubble", "--csv", csv, "--resume", "--shard", "1/3"); code != 0 {
		t.Errorf("its own shard: exit %d: %s", code, errb)
	}
}

// A sweep run with --set records the values in its CSV's first line (and
// its JSON), and --resume and sweep merge refuse a CSV run with other
// values, naming both: points run with d = 1 us and 2 us were mixed in one
// table. A CSV without the record (an older gpusim's) is of a sweep run
// without --set.
func TestSweepRecordsSet(t *testing.T) {
	dir := unsharded(t)
	scen := filepath.Join(dir, "ss.yaml")
	os.WriteFile(scen, []byte(`name: ss
topology: pcie-2gpu
vars: {d: 1 us, m: pinned}
sweep: {n: [1, 2, 3, 4]}
threads:
  - name: main
    host: cpu0
    ops:
      - repeat: {count: "${n}", ops: [{kernel: {stream: gpu0/c, duration: "${d}"}}]}
      - copy: {from: cpu0, to: gpu0, bytes: 1 MiB, memory: "${m}", stream: gpu0/c}
`), 0o644)
	a, b := filepath.Join(dir, "a.csv"), filepath.Join(dir, "b.csv")
	set := []string{"--set", "m=pageable", "--set", "d=2 us"}
	if _, errb, code := runCmd(t, append([]string{"sweep", scen, "--shard", "0/2", "--csv", a}, set...)...); code != 0 {
		t.Fatalf("shard 0/2: exit %d: %s", code, errb)
	}
	got, _ := os.ReadFile(a)
	if want := `# gpusim sweep ss: complete, 2 of 4 points shard 0/2, --set {"d":"2 us","m":"pageable"}` + "\n"; firstLine(string(got))+"\n" != want {
		t.Errorf("first line %q, want %q", firstLine(string(got)), want)
	}
	// Shard 1 run without --set: refused by merge, at the end of its first
	// line ("# gpusim sweep ss: complete, 2 of 4 points shard 1/2" has
	// 15 + 2 + 2 + 10 + 13 + 7 + 3 = 52 characters).
	if _, errb, code := runCmd(t, "sweep", scen, "--shard", "1/2", "--csv", b); code != 0 {
		t.Fatalf("shard 1/2: exit %d: %s", code, errb)
	}
	_, errb, code := runCmd(t, "sweep", "merge", a, b)
	if want := b + `:1:53: run with no --set, and ` + a + ` with --set "d=2 us" --set "m=pageable"; want the shards of a sweep run with the same --set values` + "\n"; code != 2 || errb != want {
		t.Errorf("merge: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
	// Resuming shard 0 with other values: refused where its --set values
	// start (52 characters as above, then ", --set ": column 61), the file
	// left as it was.
	_, errb, code = runCmd(t, "sweep", scen, "--shard", "0/2", "--csv", a, "--resume", "--set", "d=2 us")
	if want := a + `:1:61: it was run with --set "d=2 us" --set "m=pageable"; this run has --set "d=2 us": want the same --set values (or another --csv FILE)` + "\n"; code != 2 || errb != want {
		t.Errorf("resume: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
	if again, _ := os.ReadFile(a); !bytes.Equal(again, got) {
		t.Errorf("the refused resume wrote over the file:\n%s", again)
	}
	// With the same values both shards merge into the table of the sweep
	// run in one go, --set included.
	if _, errb, code := runCmd(t, append([]string{"sweep", scen, "--shard", "1/2", "--csv", b}, set...)...); code != 0 {
		t.Fatalf("shard 1/2 with --set: exit %d: %s", code, errb)
	}
	merged, errb, code := runCmd(t, "sweep", "merge", a, b, "--json")
	if code != 0 {
		t.Fatalf("merge: exit %d: %s", code, errb)
	}
	whole, errb, code := runCmd(t, append([]string{"sweep", scen, "--json"}, set...)...)
	if code != 0 || merged != whole || !strings.Contains(whole, "\"set\": {\n  \"d\": \"2 us\",\n  \"m\": \"pageable\"\n },") {
		t.Errorf("exit %d (%s); merged JSON:\n%s\nwhole sweep's:\n%s\nwant the same, with the --set values", code, errb, merged, whole)
	}
	if _, errb, code := runCmd(t, append([]string{"sweep", scen, "--shard", "0/2", "--csv", a, "--resume"}, set...)...); code != 0 {
		t.Errorf("resume with the same --set: exit %d: %s", code, errb)
	}
	// An older CSV, with no record: resumed without --set (its point runs
	// again, for what an older gpusim did not write); with it, refused at
	// the end of its first line (15 + 2 + 2 + 9 + 13 = 41 characters).
	old := filepath.Join(dir, "old.csv")
	oldCSV := []byte("# gpusim sweep ss: partial, 1 of 4 points\n" +
		"point,n,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error\n" +
		"0,1,2e-05,0.5,0.5,gpu0=0.5 gpu1=1,,0,launch-bound,\n")
	os.WriteFile(old, oldCSV, 0o644)
	out, errb, code := runCmd(t, "sweep", scen, "--csv", old, "--resume", "--json")
	if code != 0 || strings.Contains(out, `"makespan_s": 0.00002,`) || strings.Contains(out, `"set"`) || !strings.Contains(errb, "is an older gpusim's, without a training's rates, the GPUs' compute, the points' topology and warnings: its 1 point run again") {
		t.Errorf("old CSV resumed without --set: exit %d, stderr %q, JSON:\n%s\nwant 0, its point 0 run again, no set", code, errb, out)
	}
	os.WriteFile(old, oldCSV, 0o644) // the resume finished it
	_, errb, code = runCmd(t, "sweep", scen, "--csv", old, "--resume", "--set", "d=2 us")
	// The file cannot say whether it was run without --set or by a gpusim
	// that did not record it: the message says both, and not to drop --set.
	if want := old + `:1:42: it records no --set values (a sweep run without --set, or by a gpusim that did not record them); this run has --set "d=2 us": resume it only as it was run, or give another --csv FILE` + "\n"; code != 2 || errb != want {
		t.Errorf("old CSV resumed with --set: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
}

// A sweep of more than a million points is refused before it runs, saying
// how many values of each var make it so many and what would do.
func TestSweepTooManyPoints(t *testing.T) {
	dir := t.TempDir()
	scen := filepath.Join(dir, "huge.yaml")
	os.WriteFile(scen, []byte(`name: huge
topology: pcie-2gpu
sweep:
  a: [1,2,3,4,5,6,7,8,9,10]
  b: [1,2,3,4,5,6,7,8,9,10]
  c: [1,2,3,4,5,6,7,8,9,10]
  d: [1,2,3,4,5,6,7,8,9,10]
  e: [1,2,3,4,5,6,7,8,9,10]
  f: [1,2,3,4,5,6,7,8,9,10]
  g: [1,2]
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {stream: gpu0/s, duration: "${a}${b}${c}${d}${e}${f}${g} ns"}
`), 0o644)
	out, errb, code := runCmd(t, "sweep", scen)
	want := scen + ":3:1: the sweep has more than 1000000 points (10 values of a by 10 values of b by 10 values of c by 10 values of d by 10 values of e by 10 values of f by 2 values of g, each with each); want at most 1000000: list fewer values, or split the study into several\n"
	if code != 2 || errb != want || out != "" {
		t.Errorf("exit %d, stdout %q, stderr %q; want 2, nothing and %q", code, out, errb, want)
	}
}

// A table no sweep could have written is refused at once, in one line:
// more points than a sweep may have (a search over the count's divisors
// never ended for 2^63-1), or no swept vars in JSON (a panic).
func TestSweepMergeRefusesImpossibleTables(t *testing.T) {
	dir := t.TempDir()
	huge := filepath.Join(dir, "huge.csv")
	os.WriteFile(huge, []byte("# gpusim sweep x: complete, 1 of 9223372036854775807 points\npoint,a,b,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error\n0,1,2,1,0,0,gpu0=0,,0,,\n"), 0o644)
	novars := filepath.Join(dir, "novars.json")
	os.WriteFile(novars, []byte(`{"scenario":"x","vars":[],"points_total":2,"partial":false,"rows":[]}`), 0o644)
	// Eight vars over 720720 points: the search for a layout of the first
	// three rows runs out of work and says they fit (a panic once, dividing
	// by the strides it never set); with the fourth, none fits.
	layout := filepath.Join(dir, "layout.csv")
	rest := ",1e-06,1,1,gpu0=1,,0,host-bound: 100% of the critical path is host work,,,,\n"
	os.WriteFile(layout, []byte("# gpusim sweep x: partial, 9 of 720720 points\npoint,v0,v1,v2,v3,v4,v5,v6,v7,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error,samples_per_s,tokens_per_s,mfu\n"+
		"0,a,a,a,a,a,a,a,a"+rest+"1,b,a,a,a,a,a,a,a"+rest+"720719,a,b,a,a,a,a,a,a"+rest+"360360,a,a,a,a,a,a,a,b"+rest+"240240,a,a,a,a,a,a,a,b"+rest+
		"144144,a,a,a,a,a,a,a,b"+rest+"102960,a,a,a,a,a,a,a,b"+rest+"65520,a,a,a,a,a,a,a,b"+rest+"55440,a,a,a,a,a,a,a,b"+rest), 0o644)
	for _, tc := range []struct{ file, want string }{
		{layout, layout + ":6:1: column point: point 360360's values fit no sweep of 8 vars over 720720 points together with the rows before this one; want the values gpusim sweep wrote (was a value edited, or are some rows of sweeps of other values?)\n"},
		// "# gpusim sweep x: complete, 1 of " is 33 characters.
		{huge, huge + ":1:34: 9223372036854775807 points in all; want a sweep of 1 to 1000000 points\n"},
		// {"scenario":"x", is 16 characters; "vars" starts at 17, its value at 24.
		{novars, novars + ":1:24: no swept vars; want the vars of a sweep (at least one)\n"},
	} {
		_, errb, code := runCmd(t, "sweep", "merge", tc.file)
		if code != 2 || errb != tc.want {
			t.Errorf("sweep merge %s: exit %d, stderr %q; want 2, %q", tc.file, code, errb, tc.want)
		}
	}
}

// A sweep table is read up to maxSweepFile bytes, and what starts as no
// table at all is refused at once, endless or not (/dev/zero once ran out
// of memory).
func TestSweepFileSizeLimit(t *testing.T) {
	defer func(n int) { maxSweepFile = n }(maxSweepFile)
	maxSweepFile = 100
	dir := t.TempDir()
	long := filepath.Join(dir, "long.csv")
	os.WriteFile(long, []byte("# gpusim sweep x: complete, 1 of 1 points\n"+strings.Repeat("#\n", 50)), 0o644)
	_, errb, code := runCmd(t, "sweep", "merge", long)
	if want := long + ":1:1: the file is more than 100 B; gpusim reads sweep tables (--csv, --json) up to that, more than a sweep of its most points writes\n"; code != 2 || errb != want {
		t.Errorf("a 143-byte table under a limit of 100: exit %d, stderr %q; want 2, %q", code, errb, want)
	}
	if _, err := os.Stat("/dev/zero"); err == nil {
		_, errb, code := runCmd(t, "sweep", "merge", "/dev/zero")
		if want := "/dev/zero:1:1: not a sweep table written by gpusim sweep --csv; want its first line, # gpusim sweep NAME: ...\n"; code != 2 || errb != want {
			t.Errorf("/dev/zero: exit %d, stderr %q; want 2, %q", code, errb, want)
		}
	}
}

// A training sweep carries each point's throughput and MFU: in --json, in
// the CSV (merged shards give the whole sweep's JSON byte for byte), in
// the table, and as --metric for --plot; the rates are the point's tokens
// and model FLOPs over its makespan (tensor-parallel: one sample of 2048
// tokens in one step).
func TestSweepCarriesTrainingRates(t *testing.T) {
	dir := unsharded(t)
	whole, errb, code := runCmd(t, "sweep", "tensor-parallel", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var tab sweepTable
	if err := json.Unmarshal([]byte(whole), &tab); err != nil || len(tab.Rows) != 6 {
		t.Fatalf("JSON with %d rows (%v), want 6", len(tab.Rows), err)
	}
	for _, r := range tab.Rows {
		batch := 1.0
		if r.TokensPerS == nil || r.SamplesPerS == nil || r.MFU == nil {
			t.Fatalf("point %d: no rates: %+v", r.Index, r)
		}
		if got, want := *r.TokensPerS, batch*2048/r.MakespanS; math.Abs(got/want-1) > 1e-12 {
			t.Errorf("point %d: %g tokens/s, want %g", r.Index, got, want)
		}
		if got, want := *r.SamplesPerS, batch/r.MakespanS; math.Abs(got/want-1) > 1e-12 {
			t.Errorf("point %d: %g samples/s, want %g", r.Index, got, want)
		}
		// Kernels reach 70% of the peak; the model FLOPs count the masked
		// half of the attention products that causal kernels skip, at most
		// 1.18 times the kernels' FLOPs (gpt3-125m at seq 2048).
		if *r.MFU <= 0 || *r.MFU >= 0.7*1.182 {
			t.Errorf("point %d: MFU %g, want in (0, 0.827)", r.Index, *r.MFU)
		}
	}
	shards := runShards(t, dir, "tensor-parallel", 2)
	merged, errb, code := runCmd(t, append([]string{"sweep", "merge", "--json"}, shards...)...)
	if code != 0 || merged != whole {
		t.Errorf("merged shards: exit %d (%s), JSON differs from the whole sweep's: %v", code, errb, merged != whole)
	}
	text, _, _ := runCmd(t, "sweep", "tensor-parallel", "-j", "1")
	if !strings.Contains(text, "makespan    tokens/s  MFU") {
		t.Errorf("the table has no tokens/s and MFU columns:\n%s", text)
	}
	if _, _, code := runCmd(t, "sweep", "merge", shards[0], "--plot", dir, "--metric", "mfu"); code != 0 {
		t.Errorf("--metric mfu: exit %d", code)
	}
	// A sweep with no training has nothing to draw for it: refused before
	// its points run.
	_, errb, code = runCmd(t, "sweep", "pinned-vs-pageable", "--plot", dir, "--metric", "tokens_per_s")
	if want := "gpusim sweep: --metric tokens_per_s: scenarios/pinned-vs-pageable.yaml has no training: or inference: block; "; code != 2 || !strings.HasPrefix(errb, want) {
		t.Errorf("tokens_per_s of copies: exit %d, %q; want 2 and %q", code, errb, want)
	}
	// An inference has no MFU: refused before its points run.
	_, errb, code = runCmd(t, "sweep", "tp-inference", "--plot", dir, "--metric", "mfu")
	if want := "gpusim sweep: --metric mfu: scenarios/tp-inference.yaml is an inference, which has no MFU; "; code != 2 || !strings.HasPrefix(errb, want) {
		t.Errorf("mfu of an inference: exit %d, %q; want 2 and %q", code, errb, want)
	}
	// Shards' tables without the metric are refused before the merged
	// table is printed, saying why: they once printed the table, then
	// blamed an older gpusim.
	inf := filepath.Join(dir, "inf.yaml")
	os.WriteFile(inf, []byte(`name: inf
topology: dgx-h100
sweep: {b: [1, 2]}
inference: {gpus: 2, model: gpt3-125m, tensor: 2, batch: "${b}", tokens: 1}
`), 0o644)
	infShard := filepath.Join(dir, "inf.csv")
	if _, errb, code := runCmd(t, "sweep", inf, "--shard", "0/2", "--csv", infShard); code != 0 {
		t.Fatalf("inference shard: exit %d: %s", code, errb)
	}
	png := filepath.Join(dir, "sweep.png")
	// An inference of one token has neither MFU nor a time a token.
	const infHave = "makespan, compute_mean, idle_mean, idle_max, busiest_link_util, tokens_per_s, samples_per_s, first_token"
	for metric, want := range map[string]string{
		"mfu":       png + ": no point of the sweep has mfu: its points are an inference's, which has no MFU; plot one its points have: " + infHave + "\n",
		"per_token": png + ": no point of the sweep has per_token: each of its points that ran generated one token (tokens: 1), so there is no time between tokens; plot one its points have: " + infHave + "\n",
	} {
		out, errb, code := runCmd(t, "sweep", "merge", infShard, "--plot", dir, "--metric", metric)
		if code != 2 || out != "" || errb != want {
			t.Errorf("merge --metric %s of an inference of one token: exit %d, stdout %q, stderr %q; want 2, nothing and %q", metric, code, out, errb, want)
		}
	}
	if _, errb, code := runCmd(t, "sweep", "merge", shards[0], "--plot", dir, "--metric", "per_token"); code != 2 || !strings.Contains(errb, "its points are a training's, which has no token times") {
		t.Errorf("merge --metric per_token of a training: exit %d, stderr %q; want 2 and the training named", code, errb)
	}
	// The inference's CSV as an older gpusim wrote it, without the token
	// times' two columns: no inference to tell, but an older table.
	b, _ := os.ReadFile(infShard)
	var cut []string
	for _, l := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if !strings.HasPrefix(l, "#") {
			l = l[:strings.LastIndex(l[:strings.LastIndex(l, ",")], ",")]
		}
		cut = append(cut, l)
	}
	oldInf := filepath.Join(dir, "old-inf.csv")
	os.WriteFile(oldInf, []byte(strings.Join(cut, "\n")+"\n"), 0o644)
	_, errb, code = runCmd(t, "sweep", "merge", oldInf, "--plot", dir, "--metric", "first_token")
	if want := png + ": no point of the sweep has first_token: an older gpusim wrote the table, without an inference's token times; plot one its points have: makespan, compute_mean, idle_mean, idle_max, busiest_link_util, tokens_per_s, samples_per_s\n"; code != 2 || errb != want {
		t.Errorf("merge --metric first_token of an older inference CSV: exit %d, stderr %q; want 2 and %q", code, errb, want)
	}
	// An older gpusim's CSV (without the rates' columns) reads, but is not
	// merged with shards that have them; --resume of it runs its points
	// again, and the file is then the one a run in one go writes.
	whole0, _ := os.ReadFile(shards[0])
	oldCSV := filepath.Join(dir, "old.csv")
	var lines []string
	for _, l := range strings.Split(strings.TrimSuffix(string(whole0), "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			lines = append(lines, l)
			continue
		}
		f := strings.Split(l, ",")
		lines = append(lines, strings.Join(f[:len(f)-8], ","))
	}
	os.WriteFile(oldCSV, []byte(strings.Join(lines, "\n")+"\n"), 0o644)
	if out, errb, code := runCmd(t, "sweep", "merge", oldCSV); code != 0 || strings.Contains(out, "MFU") {
		t.Errorf("an old CSV alone: exit %d (%s), a table with MFU:\n%s", code, errb, out)
	}
	_, errb, code = runCmd(t, "sweep", "merge", oldCSV, shards[1])
	if want := oldCSV + ": an older gpusim's CSV, without a training's rates, and " + shards[1] + " has them"; code != 2 || !strings.HasPrefix(errb, want) {
		t.Errorf("old and new shards: exit %d, %q; want 2 and %q", code, errb, want)
	}
	// A header with some of the rates' columns is refused at its last.
	part := filepath.Join(dir, "part.csv")
	os.WriteFile(part, []byte("# gpusim sweep x: complete, 1 of 1 points\npoint,a,makespan_s,idle_mean,idle_max,idle_per_gpu,busiest_link,busiest_link_util,bottleneck,error,samples_per_s\n0,1,1,0,0,,,0,,,1\n"), 0o644)
	_, errb, code = runCmd(t, "sweep", "merge", part)
	if want := part + `:2:100: header column "samples_per_s" last; want the header to end error,samples_per_s,tokens_per_s,mfu,compute_mean,topology,warnings,first_token_s,per_token_s (or at warnings, mfu or error, as older gpusims wrote it)` + "\n"; code != 2 || errb != want {
		t.Errorf("a header with some rates: exit %d, %q; want 2 and %q", code, errb, want)
	}
	_, errb, code = runCmd(t, "sweep", "tensor-parallel", "--shard", "0/2", "--csv", oldCSV, "--resume")
	if again, _ := os.ReadFile(oldCSV); code != 0 || !strings.Contains(errb, "its 3 points run again") || string(again) != string(whole0) {
		t.Errorf("--resume of an old CSV: exit %d, %q; the file:\n%s\nwant the shard's:\n%s", code, errb, again, whole0)
	}
}

// A var a group sweeps is swept: --set of it is refused, naming the group;
// the group's values are the table's, and merged shards of it read back.
func TestSweepGroupedValues(t *testing.T) {
	_, errb, code := runCmd(t, "sweep", "parallel-layout", "--set", "tensor=2")
	if want := "gpusim sweep: --set tensor: tensor is swept, by layout; set only vars that are not\n"; code != 2 || !strings.HasSuffix(errb, want) {
		t.Errorf("exit %d, %q; want 2 and %q", code, errb, want)
	}
	// So is a value the scenario could not take: the --set is the mistake.
	_, errb, code = runCmd(t, "sweep", "launch-bound", "--set", "graph=maybe")
	if want := "gpusim sweep: --set graph: graph is swept; set only vars that are not\n"; code != 2 || errb != want {
		t.Errorf("--set graph=maybe: exit %d, %q; want 2 and %q", code, errb, want)
	}
	dir := t.TempDir()
	csv := filepath.Join(dir, "s.csv")
	if _, e, code := runCmd(t, "sweep", "parallel-layout", "--shard", "1/4", "--csv", csv); code != 0 {
		t.Fatalf("shard: exit %d: %s", code, e)
	}
	out, e, code := runCmd(t, "sweep", "merge", csv)
	if code != 0 || !strings.Contains(out, "dgx-h100      tensor=4 stages=2") || !strings.Contains(out, "pcie-8x-4090  tensor=4 stages=2") {
		t.Errorf("merge: exit %d (%s):\n%s\nwant points 1 and 5, tensor=4 stages=2 on each machine", code, e, out)
	}
}

// A point that ran without the plotted metric (a training's, in a table
// of an older gpusim or of listed layers' tokens) is left out, and the
// title says how many were.
func TestSweepPlotSaysWhatItLeftOut(t *testing.T) {
	v := 0.5
	tab := &sweepTable{Scenario: "s", Vars: []string{"a"}, Total: 3, Rows: []sweepRow{
		{Index: 0, Values: []string{"1"}, MakespanS: 1, MFU: &v},
		{Index: 1, Values: []string{"2"}, MakespanS: 1},
		{Index: 2, Values: []string{"3"}, Error: "bad"},
	}}
	p, err := sweepPlot(tab, "mfu")
	if err != nil {
		t.Fatal(err)
	}
	if want := "s: MFU against a (1 failed, not drawn) (1 without mfu, not drawn)"; p.Title.Text != want {
		t.Errorf("title %q, want %q", p.Title.Text, want)
	}
}

// A link busy through the whole run can measure a hair over 1 of its
// capacity (123456789 B each way at once over a 100 GB/s joint limit
// gives 1.0000000000000002): the table holds it to 1, and reads its own
// CSV back.
func TestSweepLinkUtilizationReadsBack(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "dt.yaml"), []byte(`name: dt
hosts: [{name: cpu0, api_overhead: 0 us}]
gpus: [{name: gpu0, model: H100-SXM, copy_overhead: 0 us}]
links: [{ends: [gpu0, cpu0], type: pcie5x16, latency: 0 us, duplex_bandwidth: 100 GB/s}]
`), 0o644)
	scen := filepath.Join(dir, "ds.yaml")
	os.WriteFile(scen, []byte(`name: ds
topology: dt.yaml
sweep: {b: [1 GB, 123456789 B, 7 GB]}
threads:
  - name: main
    host: cpu0
    ops:
      - copy: {from: cpu0, to: gpu0, bytes: "${b}", stream: gpu0/in}
      - copy: {from: gpu0, to: cpu0, bytes: "${b}", stream: gpu0/out}
`), 0o644)
	csv := filepath.Join(dir, "ds.csv")
	if _, errb, code := runCmd(t, "sweep", scen, "--csv", csv); code != 0 {
		t.Fatalf("sweep: exit %d: %s", code, errb)
	}
	data, _ := os.ReadFile(csv)
	if !strings.Contains(string(data), "\n1,123456789 B,0.00246913578,0,0,gpu0=0,link:gpu0-cpu0 gpu0<->cpu0 both ways,1,") || strings.Contains(string(data), "1.0000000000000002") {
		t.Errorf("want point 1's busiest link at exactly 1 in\n%s", data)
	}
	if _, errb, code := runCmd(t, "sweep", "merge", csv); code != 0 {
		t.Errorf("merge of its own CSV: exit %d: %s", code, errb)
	}
}

// TestSweepMergeKeepsWarningsAndMachine: shards merged give the whole
// sweep's JSON, warnings included, its stderr (the points' warnings) and
// its plot, whose title names the machine of an unswept topology; a
// --resume of a CSV keeps the warnings of the points it read. A CSV of the
// gpusim before (ending at mfu) reads, without them.
func TestSweepMergeKeepsWarningsAndMachine(t *testing.T) {
	dir := unsharded(t)
	whole, wholeErr, code := runCmd(t, "sweep", "activation-recompute", "--json", "--plot", filepath.Join(dir, "whole"))
	if code != 0 || !strings.Contains(whole, `"warnings": [`) || !strings.Contains(wholeErr, "warning: point 3 ") {
		t.Fatalf("exit %d, want 0 and points with warnings:\n%s", code, wholeErr)
	}
	shards := runShards(t, dir, "activation-recompute", 2)
	merged, mergedErr, code := runCmd(t, append([]string{"sweep", "merge", "--json", "--plot", filepath.Join(dir, "merged")}, shards...)...)
	if code != 0 || merged != whole || mergedErr != wholeErr {
		t.Errorf("merged: exit %d; JSON as the whole sweep's %v, stderr %q, want %q", code, merged == whole, mergedErr, wholeErr)
	}
	a, _ := os.ReadFile(filepath.Join(dir, "whole", "sweep.png"))
	b, _ := os.ReadFile(filepath.Join(dir, "merged", "sweep.png"))
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Error("the merged sweep.png differs from the whole sweep's")
	}
	// Resume a shard whose file lost its third row (point 5): the second
	// (point 3) keeps its warnings.
	data, _ := os.ReadFile(shards[1])
	lines := strings.Split(string(data), "\n")
	cut := filepath.Join(dir, "cut.csv")
	head := strings.Replace(lines[0], "complete, 4 of 8", "partial, 3 of 8", 1)
	os.WriteFile(cut, []byte(strings.Join(append([]string{head, lines[1], lines[2], lines[3]}, lines[5:]...), "\n")), 0o644)
	resumed, e, code := runCmd(t, "sweep", "activation-recompute", "--shard", "1/2", "--csv", cut, "--resume", "--json")
	shard, shardErr, _ := runCmd(t, "sweep", "activation-recompute", "--shard", "1/2", "--json")
	if code != 0 || resumed != shard || e != shardErr || !strings.Contains(e, "warning: point 3 ") {
		t.Errorf("--resume: exit %d, stderr %q (the shard's: %q); JSON as the shard's %v:\n%s", code, e, shardErr, resumed == shard, resumed)
	}
	// The gpusim before wrote no compute, topology and warnings: its rows
	// read without them.
	var v2 []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			v2 = append(v2, l)
			continue
		}
		r := csv.NewReader(strings.NewReader(l))
		f, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		var sb strings.Builder
		w := csv.NewWriter(&sb)
		w.Write(f[:len(f)-5])
		w.Flush()
		v2 = append(v2, strings.TrimSuffix(sb.String(), "\n"))
	}
	old := filepath.Join(dir, "v2.csv")
	os.WriteFile(old, []byte(strings.Join(v2, "\n")+"\n"), 0o644)
	out, e, code := runCmd(t, "sweep", "merge", old, "--json")
	if code != 0 || strings.Contains(out, `"warnings"`) || strings.Contains(out, `"topology"`) || strings.Contains(out, `"compute_mean"`) || !strings.Contains(out, `"mfu"`) {
		t.Errorf("a CSV ending at mfu: exit %d (%s):\n%s", code, e, out)
	}
	// Beside a shard of this gpusim it is refused, its points would lack
	// them; --resume runs its points again.
	_, e, code = runCmd(t, "sweep", "merge", shards[0], old)
	if want := old + ": an older gpusim's table, without the GPUs' compute, the points' topology and warnings, and " + shards[0] + " has them: "; code != 2 || !strings.HasPrefix(e, want) {
		t.Errorf("merged with a shard of this gpusim: exit %d, %q; want 2 and %q...", code, e, want)
	}
	resumed, e, code = runCmd(t, "sweep", "activation-recompute", "--shard", "1/2", "--csv", old, "--resume", "--json")
	if code != 0 || resumed != shard || !strings.Contains(e, "its 4 points run again") {
		t.Errorf("--resume of a CSV ending at mfu: exit %d, stderr %q; JSON as the shard's %v", code, e, resumed == shard)
	}
}

// TestSweepComputeShare: compute_mean is the share of the makespan the
// GPUs in use ran kernels. On pcie-2gpu (3 us a call, and the default
// 3.6 us from a kernel's end to a sync's return), one kernel of d after its
// launch and a sync: the makespan is 3 us + d + 3.6 us, gpu0 computes d of
// it, and gpu1, which runs nothing, is left out: 59.4/66 = 0.9 and
// 15.4/22 = 0.7.
func TestSweepComputeShare(t *testing.T) {
	name := filepath.Join(t.TempDir(), "s.yaml")
	src := "name: s\ntopology: pcie-2gpu\nsweep: {d: [59.4 us, 15.4 us]}\nthreads:\n  - name: m\n    ops:\n      - kernel: {stream: gpu0/s, duration: \"${d}\"}\n      - sync: {stream: gpu0/s}\n"
	if err := os.WriteFile(name, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	out, errb, code := runCmd(t, "sweep", name, "--json")
	var tab sweepTable
	if code != 0 || json.Unmarshal([]byte(out), &tab) != nil || len(tab.Rows) != 2 {
		t.Fatalf("exit %d (%s):\n%s", code, errb, out)
	}
	for i, want := range []float64{0.9, 0.7} {
		if c := tab.Rows[i].ComputeMean; c == nil || math.Abs(*c-want) > 1e-12 {
			got := "none"
			if c != nil {
				got = fmt.Sprint(*c)
			}
			t.Errorf("point %d: compute_mean %s, want %g", i, got, want)
		}
	}
	text, _, _ := runCmd(t, "sweep", name)
	if !strings.Contains(text, "compute  idle mean") || !strings.Contains(text, " 90.0% ") || !strings.Contains(text, " 70.0% ") {
		t.Errorf("the table:\n%s\nwant a compute column of 90.0%% and 70.0%%", text)
	}
}

// runShards runs the n shards of a shipped sweep, each into its CSV in
// dir (s0.csv, s1.csv, ...), and returns the files.
func runShards(t *testing.T, dir, scenario string, n int) []string {
	t.Helper()
	var shards []string
	for i := 0; i < n; i++ {
		csv := filepath.Join(dir, fmt.Sprintf("s%d.csv", i))
		if _, e, code := runCmd(t, "sweep", scenario, "--shard", fmt.Sprintf("%d/%d", i, n), "--csv", csv); code != 0 {
			t.Fatalf("shard %d/%d: exit %d: %s", i, n, code, e)
		}
		shards = append(shards, csv)
	}
	return shards
}

// A failed point's JSON has its point, values, error and warnings, not
// measures it does not have (a makespan of 0 read as a result); a point
// that ran keeps every measure, and a link's "->" as it is.
func TestFailedPointJSONHasNoMeasures(t *testing.T) {
	failed, err := json.Marshal(sweepRow{Index: 4, Values: []string{"bogus"}, Error: "s.yaml:9:44: not a duration"})
	if err != nil {
		t.Fatal(err)
	}
	if got, want := string(failed), `{"point":4,"values":["bogus"],"error":"s.yaml:9:44: not a duration"}`; got != want {
		t.Errorf("failed point: %s, want %s", got, want)
	}
	var b bytes.Buffer
	if err := writeSweepJSON(&b, &sweepTable{Scenario: "s", Vars: []string{"n"}, Total: 1, Rows: []sweepRow{{Index: 1, Values: []string{"2"}, MakespanS: 0.5, Link: "link:a-b a->b"}}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"makespan_s": 0.5`, `"idle_mean": 0`, `"busiest_link": "link:a-b a->b"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("point that ran: %s, want %s in it", b.String(), want)
		}
	}
}

// An inference's sweep carries each point's time to its first token and
// time a token after it: the values gpusim run --json gives the point
// (none a token for a generation of one), in the table, the CSV read back
// and merged, and --plot's per_token and first_token; a sweep of no
// inference has no such metric. A CSV of the gpusim before (ending at
// warnings) reads, is not merged with a table of token times, and
// --resume runs its points again.
func TestSweepCarriesTokenTimes(t *testing.T) {
	dir := unsharded(t)
	scen := filepath.Join(dir, "inf.yaml")
	os.WriteFile(scen, []byte(`name: inf
topology: dgx-h100
sweep:
  tokens: [1, 3]
  graphs: ["true", "false"]
inference: {gpus: 2, model: gpt3-13b, batch: 2, prompt: 64, tokens: "${tokens}", graphs: "${graphs}"}
`), 0o644)
	whole, errb, code := runCmd(t, "sweep", scen, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb)
	}
	var tab sweepTable
	if err := json.Unmarshal([]byte(whole), &tab); err != nil || len(tab.Rows) != 4 {
		t.Fatalf("JSON with %d rows (%v), want 4", len(tab.Rows), err)
	}
	for _, r := range tab.Rows {
		one := filepath.Join(dir, fmt.Sprintf("p%d.yaml", r.Index))
		os.WriteFile(one, []byte(fmt.Sprintf("name: p\ntopology: dgx-h100\ninference: {gpus: 2, model: gpt3-13b, batch: 2, prompt: 64, tokens: %s, graphs: %s}\n", r.Values[0], r.Values[1])), 0o644)
		out, e, code := runCmd(t, "run", one, "--json")
		var res struct {
			Work struct {
				First *float64 `json:"first_token_ns"`
				Per   *float64 `json:"per_token_ns"`
			} `json:"work"`
		}
		if err := json.Unmarshal([]byte(out), &res); code != 0 || err != nil || res.Work.First == nil {
			t.Fatalf("run of point %d: exit %d (%s), %v", r.Index, code, e, err)
		}
		if r.FirstTokenS == nil || math.Abs(*r.FirstTokenS-*res.Work.First*1e-9) > 1e-12 {
			t.Errorf("point %d: first_token_s %v, want run's %g ns", r.Index, r.FirstTokenS, *res.Work.First)
		}
		switch {
		case r.Values[0] == "1" && (r.PerTokenS != nil || res.Work.Per != nil):
			t.Errorf("point %d: one token has a time a token: sweep %v, run %v", r.Index, r.PerTokenS, res.Work.Per)
		case r.Values[0] == "3" && (r.PerTokenS == nil || res.Work.Per == nil || math.Abs(*r.PerTokenS-*res.Work.Per*1e-9) > 1e-12):
			t.Errorf("point %d: per_token_s %v, want run's %v ns", r.Index, r.PerTokenS, res.Work.Per)
		}
		if r.MFU != nil {
			t.Errorf("point %d: an inference with an MFU", r.Index)
		}
	}
	// The prefill does not depend on how many tokens follow it.
	if *tab.Rows[0].FirstTokenS != *tab.Rows[2].FirstTokenS {
		t.Errorf("first token at %g with 1 token, %g with 3", *tab.Rows[0].FirstTokenS, *tab.Rows[2].FirstTokenS)
	}
	text, _, _ := runCmd(t, "sweep", scen)
	if !strings.Contains(text, "tokens/s  first token  a token") || strings.Contains(text, "MFU") {
		t.Errorf("the table has no token times, or an MFU:\n%s", text)
	}
	shards := runShards(t, dir, scen, 2)
	merged, errb, code := runCmd(t, append([]string{"sweep", "merge", "--json"}, shards...)...)
	if code != 0 || merged != whole {
		t.Errorf("merged shards: exit %d (%s), JSON differs from the whole sweep's: %v", code, errb, merged != whole)
	}
	for _, m := range []string{"first_token", "per_token"} {
		if _, e, code := runCmd(t, "sweep", "merge", shards[0], shards[1], "--plot", filepath.Join(dir, m), "--metric", m); code != 0 {
			t.Errorf("--metric %s: exit %d: %s", m, code, e)
		}
		_, e, code := runCmd(t, "sweep", "tensor-parallel", "--plot", dir, "--metric", m)
		if want := "gpusim sweep: --metric " + m + ": scenarios/tensor-parallel.yaml has no inference: block; "; code != 2 || !strings.HasPrefix(e, want) {
			t.Errorf("--metric %s of a training: exit %d, %q; want 2 and %q", m, code, e, want)
		}
	}
	// The CSV of the gpusim before: without the last two columns.
	data, _ := os.ReadFile(shards[1])
	var prev []string
	for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
		if strings.HasPrefix(l, "#") {
			prev = append(prev, l)
			continue
		}
		f := strings.Split(l, ",")
		prev = append(prev, strings.Join(f[:len(f)-2], ","))
	}
	old := filepath.Join(dir, "prev.csv")
	os.WriteFile(old, []byte(strings.Join(prev, "\n")+"\n"), 0o644)
	if out, e, code := runCmd(t, "sweep", "merge", old, "--json"); code != 0 || strings.Contains(out, "token_s") || !strings.Contains(out, `"topology"`) {
		t.Errorf("a CSV ending at warnings: exit %d (%s):\n%s", code, e, out)
	}
	_, e, code := runCmd(t, "sweep", "merge", shards[0], old)
	if want := old + ": an older gpusim's table, without an inference's token times, and " + shards[0] + " has them: "; code != 2 || !strings.HasPrefix(e, want) {
		t.Errorf("merged with a shard of this gpusim: exit %d, %q; want 2 and %q...", code, e, want)
	}
	shard, _, _ := runCmd(t, "sweep", scen, "--shard", "1/2", "--json")
	resumed, e, code := runCmd(t, "sweep", scen, "--shard", "1/2", "--csv", old, "--resume", "--json")
	if code != 0 || resumed != shard || !strings.Contains(e, "without an inference's token times: its 2 points run again") {
		t.Errorf("--resume of a CSV ending at warnings: exit %d, stderr %q; JSON as the shard's %v", code, e, resumed == shard)
	}
	// A point that ran without token times beside one with them: edited.
	lines := strings.Split(string(data), "\n")
	f := strings.Split(lines[3], ",")
	lines[3] = strings.Join(append(f[:len(f)-2], "", ""), ",")
	edited := filepath.Join(dir, "edited.csv")
	os.WriteFile(edited, []byte(strings.Join(lines, "\n")), 0o644)
	_, e, code = runCmd(t, "sweep", "merge", edited)
	if want := fmt.Sprintf("%s:4:%d: column first_token_s: no time to the first token, where point 1 has one (at %s:3:", edited, len(lines[3]), edited); code != 2 || !strings.HasPrefix(e, want) {
		t.Errorf("a point without token times: exit %d, %q; want 2 and %q...", code, e, want)
	}
	// A header cut within the token times is refused at its last column.
	cut := filepath.Join(dir, "cut.csv")
	os.WriteFile(cut, []byte(strings.Replace(string(data), ",first_token_s,per_token_s\n", ",first_token_s\n", 1)), 0o644)
	_, e, code = runCmd(t, "sweep", "merge", cut)
	if want := `header column "first_token_s" last; want the header to end error,samples_per_s,tokens_per_s,mfu,compute_mean,topology,warnings,first_token_s,per_token_s (or at warnings, mfu or error, as older gpusims wrote it)`; code != 2 || !strings.Contains(e, want) {
		t.Errorf("a header cut short: exit %d, %q; want 2 and %q", code, e, want)
	}
}

// values is "1, 2, ..., n".
func values(n int) string {
	v := make([]string, n)
	for i := range v {
		v[i] = strconv.Itoa(i + 1)
	}
	return strings.Join(v, ", ")
}
