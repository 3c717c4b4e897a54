package main

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"gpusim/sim"
)

// The training line: 16 samples (32,768 tokens) in 2 steps over 1 s are
// 500 ms a step and 32.8k tokens/s; 1 PFLOP of model FLOPs in 1 s on 2
// PFLOP/s of peak is an MFU of 50%. Without tokens it counts samples, and
// without a peak it says no MFU.
func TestWorkLine(t *testing.T) {
	w := &sim.Work{Steps: 2, Samples: 16, Tokens: 32768, ModelFLOPs: 1e15, PeakFLOPs: 2e15, DType: "bf16", GPUs: 2}
	for _, c := range []struct {
		w    *sim.Work
		want string
	}{
		{w, "training: 2 steps of 8 samples: 500 ms a step, 32.8k tokens/s; MFU 50.0% of the 2 GPUs' 2 PFLOP/s bf16 peak"},
		{&sim.Work{Steps: 1, Samples: 1, ModelFLOPs: 1e12, PeakFLOPs: 1e15, DType: "fp8", GPUs: 1}, "training: 1 step of 1 sample: 1 s a step, 1 samples/s; MFU 0.1% of the GPU's 1 PFLOP/s fp8 peak"},
		{&sim.Work{Steps: 4, Samples: 4e6, ModelFLOPs: 1e12, GPUs: 1}, "training: 4 steps of 1000000 samples: 250 ms a step, 4M samples/s"},
		{nil, ""},
		// 3 PFLOP of model FLOPs in a second on 2 PFLOP/s: 150%, said why.
		{&sim.Work{Steps: 1, Samples: 1, Tokens: 32768, ModelFLOPs: 3e15, PeakFLOPs: 2e15, DType: "bf16", GPUs: 2}, "training: 1 step of 1 sample: 1 s a step, 32.8k tokens/s; MFU 150.0% of the 2 GPUs' 2 PFLOP/s bf16 peak (over 100%: the model FLOPs count attention's masked products whole, as PaLM's MFU does, and causal kernels skip them; docs/model.md)"},
	} {
		if got := workLine(c.w, sim.Second); got != c.want {
			t.Errorf("got  %q\nwant %q", got, c.want)
		}
	}
	// Three significant digits, rounded before the unit is chosen.
	for v, want := range map[float64]string{0.5: "0.5", 999.6: "1k", 12345: "12.3k", 999600: "1M", 5e9: "5G", 2.5e13: "25000G"} {
		if got := rate(v); got != want {
			t.Errorf("rate(%g) = %q, want %q", v, got, want)
		}
	}
}

// --json carries the work of a training, with its rates over the makespan
// and MFU = model FLOPs / (makespan x peak); a program without one has no
// "work" key.
func TestJSONWork(t *testing.T) {
	var out, errb bytes.Buffer
	if code := run([]string{"run", "dp-scaling", "--set", "gpus=2", "--json"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var doc struct {
		Makespan float64 `json:"makespan_ns"`
		Work     *struct {
			Steps           int
			Samples, Tokens float64
			ModelFLOPs      float64 `json:"model_flops"`
			PeakFLOPs       float64 `json:"peak_flops"`
			DType           string
			SamplesPerS     float64 `json:"samples_per_s"`
			TokensPerS      float64 `json:"tokens_per_s"`
			MFU             float64
		}
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	w, secs := doc.Work, doc.Makespan/1e9
	if w == nil || w.Steps < 1 || w.Samples <= 0 || w.Tokens <= 0 || w.DType == "" {
		t.Fatalf("work %+v", w)
	}
	for _, c := range []struct {
		name      string
		got, want float64
	}{
		{"samples_per_s", w.SamplesPerS, w.Samples / secs},
		{"tokens_per_s", w.TokensPerS, w.Tokens / secs},
		{"mfu", w.MFU, w.ModelFLOPs / secs / w.PeakFLOPs},
		// Two H100s: twice the datasheet's 989.5 TFLOP/s of dense bf16.
		{"peak_flops", w.PeakFLOPs, 2 * 989.5e12},
	} {
		if math.Abs(c.got/c.want-1) > 1e-9 {
			t.Errorf("%s = %g, want %g", c.name, c.got, c.want)
		}
	}
	out.Reset()
	if code := run([]string{"run", "quickstart", "--json"}, &out, &errb); code != 0 || bytes.Contains(out.Bytes(), []byte(`"work"`)) {
		t.Errorf("quickstart: exit %d, a work key: %v", code, bytes.Contains(out.Bytes(), []byte(`"work"`)))
	}
}

// TestNameRuns: three or more names counting up by one are a range.
func TestNameRuns(t *testing.T) {
	for _, tc := range []struct {
		in   []string
		want string
	}{
		{[]string{"gpu1", "gpu2"}, "gpu1, gpu2"},
		{[]string{"gpu1", "gpu2", "gpu3", "gpu5", "gpu6", "gpu7", "gpu8", "x"}, "gpu1-gpu3, gpu5-gpu8, x"},
		{[]string{"a1", "b2", "b3", "b4", "c"}, "a1, b2-b4, c"},
		{[]string{"gpu9", "gpu10", "gpu11"}, "gpu9-gpu11"},
		{[]string{"gpu", "gpu1", "gpu2"}, "gpu, gpu1, gpu2"},
	} {
		if got := nameRuns(tc.in); got != tc.want {
			t.Errorf("nameRuns(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The critical path's count reads as English ("1 step"), and a run of no
// time says its path took none rather than listing shares of nothing ("-").
func TestCriticalPathWording(t *testing.T) {
	dir := t.TempDir()
	one := writeTemp(t, dir, "one.yaml", "name: one\ntopology: pcie-2gpu\nthreads:\n  - name: m\n    ops:\n      - host: {duration: 5 us}\n")
	out, _, code := runCmd(t, "run", one)
	if code != 0 || !strings.Contains(out, "\nCritical path: 1 step; host 100.0%\n") {
		t.Errorf("exit %d; want \"Critical path: 1 step; host 100.0%%\" in\n%s", code, out)
	}
	topo := writeTemp(t, dir, "t.yaml", "name: t\nhosts: [{name: cpu0, api_overhead: 0 us, timing_overhead: 0 us}]\ngpus: [{name: gpu0, model: H100-SXM, kernel_overhead: 0 us}]\nlinks: [{ends: [gpu0, cpu0], type: pcie5x16}]\n")
	zero := writeTemp(t, dir, "zero.yaml", "name: zero\ntopology: "+topo+"\nthreads:\n  - name: m\n    ops:\n      - kernel: {stream: gpu0/s, duration: 0 s}\n")
	out, _, code = runCmd(t, "run", zero)
	if code != 0 || !strings.HasSuffix(out, "\nCritical path: 2 steps, all of no time\n") {
		t.Errorf("exit %d; want the path's 2 steps of no time at the end of\n%s", code, out)
	}
}
