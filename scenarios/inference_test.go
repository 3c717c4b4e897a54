package scenarios

import (
	"fmt"
	"math"
	"strings"
	"testing"

	"gpusim/models"
	"gpusim/sim"
)

// oneGPU computes exactly 1000 TFLOP/s in bf16 and reads 1000 GB/s; its
// host pays no API overhead or sync latency and 10 us a graph launch; the
// tokens' copy (16 bytes over 8 GB/s) takes 2 ns.
const oneGPU = `
name: one
hosts: [{name: cpu0, api_overhead: 0 us, sync_latency: 0 us, graph_launch: 10 us}]
gpus:
  - {name: gpu0, model: H100-SXM, peak: {bf16: 1000 TFLOP/s}, compute_efficiency: 1, memory_bandwidth: 1000 GB/s, memory_efficiency: 1, kernel_overhead: 0 us, copy_overhead: 0 us}
links: [{ends: [gpu0, cpu0], bandwidth: 8 GB/s}]
`

// TestInferenceOnOneGPU works a generation of gpt3-125m (12 blocks, d =
// 768, V = 50257) out by hand: 2 sequences of 100-token prompts, 4 tokens.
// Each kernel takes the longer of its FLOPs at 1e15 FLOP/s and its bytes
// at 1e12 B/s (2-byte values):
//   - the embedding, each pass: no FLOPs, 7 x 2 toks d x 2 bytes (the
//     token rows and the position rows read and written, the sum reading
//     both and writing it; toks = 100 in prefill, 1 a decode step);
//   - prefill (s = 100): attention 2 x (100 x 8 d^2 + 2 x 100 x 101 d)
//     FLOPs (causal: token i attends to i),
//     bytes 4 d^2 x 2 (weights) + 2 x 2 x 100 d x 2 (the KV cache written)
//   - 2 x 2 x 100 d x 2 (input and output); the MLP 2 x 100 x 16 d^2,
//     8 d^2 x 2 + 2 x 2 x 100 d x 2; the head 2 x 2 V d FLOPs, V d x 2 +
//     2 (d + V) x 2 bytes;
//   - decode step t (context c = 100 + t): attention 2 (8 d^2 + 4 c d)
//     FLOPs, 4 d^2 x 2 + 2 x 2 c d x 2 (the cache read) + 2 x 2 d x 2
//     bytes; the MLP 2 x 16 d^2, 8 d^2 x 2 + 2 x 2 d x 2; the head as in
//     prefill.
//
// Every one is memory-bound. Prefill runs eagerly with 0.5 us of framework
// time for each kernel the framework launches (3 for the embedding, 6 for
// an attention, 5 for an MLP, 2 for the head; the driver's launches cost
// nothing here) before the kernel: the embedding's 1.5 us, then its kernel
// (2.15 us) under the first attention's 3 us, the longest; the others are
// shorter than every block's kernel (the shortest reads 5.9 MB: 5.9 us),
// so the GPU waits for none after that: the first token is on the host at
// 1.5 + 3 us + the blocks' and the head's kernels + the copy. A decode step
// is a graph: 10 us of launch, its kernels (the embedding's too), the copy.
// Eagerly, each decode step is 1.5 + 3 us + its blocks' and head's
// kernels + the copy (its embedding, 0.02 us, under the attention's 3 us).
// The engine's host_per_step (7 us) comes before every step: the first
// token 7 us later, each token 7 us longer.
func TestInferenceOnOneGPU(t *testing.T) {
	scen := `
name: gen
topology: topo.yaml
inference:
  gpus: all
  model: gpt3-125m
  batch: 2
  prompt: 100
  tokens: 4
  graphs: ${graphs}
  host_per_kernel: 0.5 us
  host_per_step: ${step}
vars: {graphs: "true", step: 0 us}
`
	const d, V, b, s = 768.0, 50257.0, 2.0, 100.0
	kernel := func(flops, bytes float64) float64 { return max(flops/1e15, bytes/1e12) * 1e6 } // us
	head := kernel(b*2*V*d, V*d*2+b*(d+V)*2)
	prefill := 12*(kernel(b*(s*8*d*d+2*s*(s+1)*d), 4*d*d*2+b*2*s*d*2+2*b*s*d*2)+kernel(b*s*16*d*d, 8*d*d*2+2*b*s*d*2)) + head
	decode := func(c float64) float64 {
		return 12*(kernel(b*(8*d*d+4*c*d), 4*d*d*2+b*2*c*d*2+2*b*d*2)+kernel(b*16*d*d, 8*d*d*2+2*b*d*2)) + head
	}
	embedDecode := kernel(0, 7*b*d*2)
	const copyUS = 16 / 8e9 * 1e6
	for _, c := range []struct {
		graphs bool
		step   float64 // us
	}{{true, 0}, {false, 0}, {true, 7}, {false, 7}} {
		graphs := c.graphs
		res := runWith(t, oneGPU, scen, map[string]string{"graphs": fmt.Sprint(graphs), "step": fmt.Sprintf("%g us", c.step)})
		first, per, ok := res.TokenTimes()
		if !ok {
			t.Fatalf("graphs %v: no token times", graphs)
		}
		launch := 10 + embedDecode
		if !graphs {
			launch = 1.5 + 3
		}
		steps := 0.0
		for tok := 1.0; tok < 4; tok++ {
			steps += c.step + launch + decode(s+tok) + copyUS
		}
		if want := c.step + 1.5 + 3 + prefill + copyUS; abs(first.Seconds()*1e6-want) > 1e-3 {
			t.Errorf("graphs %v, step %g us: first token at %s, want %.4f us", graphs, c.step, first, want)
		}
		if want := steps / 3; abs(per.Seconds()*1e6-want) > 1e-3 {
			t.Errorf("graphs %v, step %g us: %s a token, want %.4f us", graphs, c.step, per, want)
		}
		if w := res.Program.Work; w.Tokens != 8 || w.Samples != 2 || w.Steps != 4 {
			t.Errorf("graphs %v: work %+v, want 8 tokens of 2 sequences in 4 steps", graphs, *w)
		}
	}
}

func abs(x float64) float64 { return max(x, -x) }

// TestInferenceTensorParallel: over two GPUs each pass all-reduces the
// embedding and every block's attention and MLP output (b d values a
// decode step, b s d in prefill) and all-gathers the logits (b V), on the
// compute stream; a
// decode step's kernels and collectives are one graph; the op count the
// limit is checked against is the count expanded.
func TestInferenceTensorParallel(t *testing.T) {
	topo := strings.Replace(strings.Replace(fourGPUs, "  - {name: gpu2", "#", 1), "  - {name: gpu3", "#", 1)
	topo = strings.Replace(strings.Replace(topo, "  - {ends: [gpu2, nvs], bandwidth: 100 GB/s}", "", 1), "  - {ends: [gpu3, nvs], bandwidth: 100 GB/s}", "", 1)
	topo = strings.Replace(strings.Replace(topo, "  - {ends: [gpu2, pcie], bandwidth: 50 GB/s}", "", 1), "  - {ends: [gpu3, pcie], bandwidth: 50 GB/s}", "", 1)
	scen := `
name: tp
topology: topo.yaml
inference: {gpus: all, model: gpt3-125m, batch: 4, prompt: 64, tokens: 3}
`
	const d, V, b, s = 768, 50257, 4, 64
	res := runWith(t, topo, scen, nil)
	if len(res.Program.Threads) != 2 {
		t.Fatalf("%d threads, want one a GPU", len(res.Program.Threads))
	}
	th := res.Program.Threads[0]
	colls := map[string]int{}
	graphOps := []int{}
	for i, op := range th.Ops {
		if op.GraphOps > 0 {
			graphOps = append(graphOps, op.GraphOps)
			if th.Ops[i].Kind != sim.OpKernel {
				t.Errorf("graph starts with %v", op.Kind)
			}
		}
		if op.Kind == sim.OpCollective {
			colls[fmt.Sprintf("%s %d", op.Coll.Name, op.Coll.Bytes)]++
		}
	}
	want := map[string]int{
		fmt.Sprintf("%s %d", models.AllReduce, b*s*d*2): 1 + 24,       // prefill: the embedding, 12 blocks x 2
		fmt.Sprintf("%s %d", models.AllReduce, b*d*2):   2 * (1 + 24), // two decode steps
		fmt.Sprintf("%s %d", models.AllGather, b*V*2):   3,
	}
	if fmt.Sprint(colls) != fmt.Sprint(want) {
		t.Errorf("collectives %v, want %v", colls, want)
	}
	// The prefill's embedding over 2 GPUs reads and writes (6 + 1/2 + 2) b
	// s d values of 2 bytes (the zeroing of the other GPU's tokens: 2 of
	// them) at 1e15 B/s (fourGPUs' memory), no kernel overhead.
	found := false
	for _, op := range th.Ops {
		if op.ID == "infer/gpu0/prefill/embed" {
			found = true
			want := sim.Time(math.Round(8.5 * b * s * d * 2 / 1e15 * 1e12))
			if op.Duration != want {
				t.Errorf("the embedding lasts %v, want %v", op.Duration, want)
			}
		}
	}
	if !found {
		t.Errorf("no op infer/gpu0/prefill/embed")
	}
	// A decode step's graph: 26 kernels (the embedding, 24 of the blocks,
	// the head) and 26 collectives.
	if fmt.Sprint(graphOps) != "[52 52]" {
		t.Errorf("graphs of %v ops, want two of 52", graphOps)
	}
	// Prefill: 26 kernels and 26 collectives, each after a host op, then
	// the copy and the sync; a decode step 52 ops and the two.
	if n := len(th.Ops); n != 106+2*54 {
		t.Errorf("%d ops on gpu0's thread, want %d", n, 106+2*54)
	}
	// The count the limit is checked against is the count expanded, with
	// and without the engine's host op a step (one more a step and GPU).
	for _, sc := range []string{scen, strings.Replace(scen, "tokens: 3}", "tokens: 3, host_per_step: 1 ms}", 1)} {
		res := runWith(t, topo, sc, nil)
		n := res.Program.NumOps()
		if want := 2 * (106 + 2*54); sc != scen {
			if n != want+2*3 {
				t.Errorf("%d ops with host_per_step, want %d", n, want+2*3)
			}
		}
		if _, err := loadOn(topo, sc, int64(n)); err != nil {
			t.Errorf("limit %d, the count: %v", n, err)
		}
		if _, err := loadOn(topo, sc, int64(n-1)); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("inference: expands to %d ops, more than the limit of %d", n, n-1)) {
			t.Errorf("limit %d: error %v", n-1, err)
		}
	}
}

// TestInferenceLaunches: outside a graph the host pays, before each
// kernel, the framework's time for every kernel the framework launches for
// it and the driver's for all but the one the kernel op pays (attention: 6
// launches, 6 x 5 + 5 x 1 us with 1 us calls; MLP: 5, 5 x 5 + 4; head: 2,
// 2 x 5 + 1; the embedding over 2 GPUs: 5, its 3 and the vocabulary
// split's mask and zeroing, 5 x 5 + 4), and 22 us before each collective;
// the GPU runs each extra
// launch's kernel_overhead (1 us) beyond the one the roofline time has.
func TestInferenceLaunches(t *testing.T) {
	scen := "name: x\ntopology: topo.yaml\ninference: {gpus: 2, model: gpt3-125m, tokens: 1}\n"
	ops := func(topo string) map[string]sim.Op {
		sc, err := loadOn(topo, scen, 1e7)
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]sim.Op{}
		for _, op := range sc.Program.Threads[0].Ops {
			out[op.ID] = op
		}
		return out
	}
	bare := ops(fourGPUs)
	slow := strings.Replace(fourGPUs, "api_overhead: 0 us", "api_overhead: 1 us", 1)
	slow = strings.ReplaceAll(slow, "kernel_overhead: 0 us", "kernel_overhead: 1 us")
	got := ops(slow)
	const p = "infer/gpu0/prefill/"
	for id, want := range map[string]float64{p + "embed/host": 29, p + "embed/all-reduce/host": 22, p + "L0/attn/host": 35, p + "L0/mlp/host": 29, p + "head/host": 11, p + "L0/attn/all-reduce/host": 22, p + "L0/mlp/all-reduce/host": 22} {
		if op, ok := got[id]; !ok || op.Kind != sim.OpHost || op.Duration != sim.Time(want*1e6) {
			t.Errorf("%s: %v, want a host op of %g us", id, op.Duration, want)
		}
	}
	for id, extra := range map[string]float64{p + "embed": 5, p + "L0/attn": 6, p + "L0/mlp": 5, p + "head": 2} {
		if d := got[id].Duration - bare[id].Duration; d != sim.Time(extra*1e6) {
			t.Errorf("%s: %s longer with 1 us of kernel_overhead, want %g us", id, d, extra)
		}
	}
}

// TestInferenceRefusals: what an inference: block refuses, each naming the
// key and what would do.
func TestInferenceRefusals(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{"{gpus: all, model: gpt3-5b}", `s.yaml:3:31: inference.model: unknown model "gpt3-5b"; presets: gpt3-125m,`},
		{"{gpus: all, model: [{params: 1e6, flops: 1 GFLOP}]}", `s.yaml:3:31: inference.model: inference takes a preset model: gpt3-125m,`},
		{"{gpus: all, model: gpt3-125m, tensor: 3}", `s.yaml:3:50: inference.tensor: 3 does not divide the 4 GPUs serving into tensor-parallel groups; use one of 1, 2, 4`},
		{"{gpus: all, model: gpt3-125m, tokens: 0}", `inference.tokens: `},
		{"{gpus: all, model: gpt3-125m, host_per_kernel: -1 us}", `inference.host_per_kernel: `},
		{"{gpus: all, model: gpt3-125m, host_per_step: 1 GB}", `inference.host_per_step: `},
	} {
		_, err := loadOn(fourGPUs, "name: x\ntopology: topo.yaml\ninference: "+c.block+"\n", 1e7)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want %q", c.block, err, c.want)
		}
	}
	for _, other := range []string{"training: {gpus: all, model: gpt3-125m}", "pipeline: {gpus: 2, forward: 1 ms}", "threads: [{name: m, host: cpu0, ops: [{host: {duration: 1 us}}]}]"} {
		both := "name: x\ntopology: topo.yaml\n" + other + "\ninference: {gpus: all, model: gpt3-125m}\n"
		if _, err := loadOn(fourGPUs, both, 1e7); err == nil || !strings.Contains(err.Error(), "inference: runs alone: ") {
			t.Errorf("%s and inference: error %v", other, err)
		}
	}
}

// TestInferenceMemoryWarning: gpt3-175b's weights (12 d^2 x 96 blocks, the
// embedding's V d, which the head shares, and 2048 positions' d, d =
// 12288, in 2 bytes: 325.2 GiB), KV cache (2 x 96 d values a token, 1,920 +
// 128 tokens of 1 sequence but the last, never cached: 8.996 GiB) and
// logits (V in fp32) on one 80 GiB GPU; and gpt3-125m's logits alone for 2^20
// sequences over 4 GPUs (V x 4 bytes each: 196.3 GiB).
func TestInferenceMemoryWarning(t *testing.T) {
	sc, err := loadOn(oneGPU, "name: x\ntopology: topo.yaml\ninference: {gpus: all, model: gpt3-175b, prompt: 1920, tokens: 128}\n", 1e9)
	if err != nil {
		t.Fatal(err)
	}
	const d, V = 12288.0, 50257.0
	gib := float64(1 << 30)
	weights := (12*d*d*96 + V*d + 2048*d) * 2 / gib
	cache := 2 * 96 * d * 2047 * 2 / gib
	logits := V * 4 / gib
	want := fmt.Sprintf("inference: a GPU needs about %.4g GiB (weights %.4g GiB, KV cache %.4g GiB, logits %.4g GiB), more than the 80 GiB of gpu0 (H100-SXM): it would not fit; try more GPUs, or GPUs with more memory", weights+cache+logits, weights, cache, logits)
	if len(sc.Program.Warnings) != 1 || !strings.Contains(sc.Program.Warnings[0], want) {
		t.Errorf("warnings %q, want one with %q", sc.Program.Warnings, want)
	}
	sc, err = loadOn(fourGPUs, "name: x\ntopology: topo.yaml\ninference: {gpus: all, model: gpt3-125m, batch: 1048576, prompt: 1, tokens: 1}\n", 1e9)
	if err != nil {
		t.Fatal(err)
	}
	if want := fmt.Sprintf("logits %.4g GiB)", 1048576*V*4/gib); len(sc.Program.Warnings) != 1 || !strings.Contains(sc.Program.Warnings[0], want) {
		t.Errorf("warnings %q, want one with %q", sc.Program.Warnings, want)
	}
}

// TestInferenceAlgorithm: a forced algorithm is the all-reduces'; the
// logits' all-gather keeps NCCL's choice (tree runs all-reduce only).
func TestInferenceAlgorithm(t *testing.T) {
	sc, err := loadOn(fourGPUs, "name: x\ntopology: topo.yaml\ninference: {gpus: all, model: gpt3-125m, tokens: 1, algorithm: tree}\n", 1e7)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, op := range sc.Program.Threads[0].Ops {
		if op.Kind == sim.OpCollective {
			seen[op.Coll.Name] = op.Coll.Algorithm
		}
	}
	if seen[models.AllReduce] != "tree" || seen[models.AllGather] == "tree" || seen[models.AllGather] == "" {
		t.Errorf("algorithms %v, want tree for the all-reduces and NCCL's own for the gather", seen)
	}
}

// TestInferenceCausalAttention: attention is causal. On a GPU of 1 TFLOP/s
// (so that the attention kernels are compute-bound) a prefill of s = 100
// tokens of 2 sequences of gpt3-125m (d = 768) does 2 x (8 d^2 s + 4 d (1
// + 2 + ... + s)) = 2 x (8 d^2 s + 2 d s (s + 1)) FLOPs in each block's
// attention, not 2 x s (8 d^2 + 4 s d); the decode step after it, with 101
// tokens in the cache, 2 x (8 d^2 + 4 x 101 d).
func TestInferenceCausalAttention(t *testing.T) {
	slow := strings.Replace(oneGPU, "peak: {bf16: 1000 TFLOP/s}", "peak: {bf16: 1 TFLOP/s}", 1)
	sc, err := loadOn(slow, "name: x\ntopology: topo.yaml\ninference: {gpus: all, model: gpt3-125m, batch: 2, prompt: 100, tokens: 2}\n", 1e7)
	if err != nil {
		t.Fatal(err)
	}
	const d, b, s = 768.0, 2.0, 100.0
	want := map[string]float64{ // us, at 1e12 FLOP/s
		"infer/gpu0/prefill/L0/attn":  b * (8*d*d*s + 2*d*s*(s+1)) / 1e6,
		"infer/gpu0/prefill/L11/attn": b * (8*d*d*s + 2*d*s*(s+1)) / 1e6,
		"infer/gpu0/t1/L0/attn":       b * (8*d*d + 4*d*(s+1)) / 1e6,
	}
	found := 0
	for _, op := range sc.Program.Threads[0].Ops {
		if w, ok := want[op.ID]; ok {
			found++
			if got := op.Duration.Seconds() * 1e6; abs(got-w) > 1e-3 {
				t.Errorf("%s: %.4f us, want %.4f us", op.ID, got, w)
			}
		}
	}
	if found != len(want) {
		t.Errorf("found %d of the ops %v", found, want)
	}
}

// TestContextBeyondThePresets: the GPT-3 presets have a 2048-token context;
// a training's seq or an inference's context (the prompt and the tokens
// but the last) beyond it is warned of where it is written, and up to it
// is not.
func TestContextBeyondThePresets(t *testing.T) {
	for _, c := range []struct{ block, want string }{
		{"training: {gpus: all, model: gpt3-125m, seq: 4096}", "s.yaml:3:46: training.seq: 4096 tokens, more than the GPT-3 presets' context of 2048"},
		{"training: {gpus: all, model: gpt3-125m, seq: 2048}", ""},
		{"inference: {gpus: all, model: gpt3-125m, prompt: 2000, tokens: 50}", "s.yaml:3:50: inference: a context of 2049 tokens (the prompt and the tokens but the last), more than the GPT-3 presets' 2048"},
		{"inference: {gpus: all, model: gpt3-125m, prompt: 2000, tokens: 49}", ""},
		// The default prompt, 512: at tokens.
		{"inference: {gpus: all, model: gpt3-125m, tokens: 2000}", "s.yaml:3:50: inference: a context of 2511 tokens"},
	} {
		sc, err := loadOn(fourGPUs, "name: x\ntopology: topo.yaml\n"+c.block+"\n", 1e7)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, w := range sc.Program.Warnings {
			if strings.Contains(w, "2048") {
				got = append(got, w)
			}
		}
		switch {
		case c.want == "" && len(got) > 0:
			t.Errorf("%s: warned %q", c.block, got)
		case c.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], c.want)):
			t.Errorf("%s: warnings %q, want one starting %q", c.block, got, c.want)
		}
	}
}

// FP8 serving quantizes weights and GEMMs, not what GPUs send: a block's
// all-reduce of one sequence's 128 prompt tokens is 128 x 768 values of
// bf16, 196,608 bytes, and the logits' gather 50,257 x 2 = 100,514 bytes,
// as in bf16.
func TestInferenceSendsAtLeastBF16(t *testing.T) {
	topo := strings.ReplaceAll(fourGPUs, "peak: {bf16: 1000 TFLOP/s}", "peak: {bf16: 1000 TFLOP/s, fp8: 2000 TFLOP/s}")
	for _, dt := range []string{"bf16", "fp8"} {
		sc, err := loadOn(topo, "name: x\ntopology: topo.yaml\ninference: {gpus: all, model: gpt3-125m, tensor: 2, prompt: 128, tokens: 1, dtype: "+dt+"}\n", 1e7)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, op := range sc.Program.Threads[0].Ops {
			if op.Kind == sim.OpCollective {
				got[op.ID] = op.Coll.Bytes
			}
		}
		if got["infer/r0/prefill/L0/attn/all-reduce"] != 196_608 || got["infer/r0/prefill/logits"] != 100_514 {
			t.Errorf("%s: a block's all-reduce %d bytes, the logits %d; want 196608 and 100514 (of %v)", dt, got["infer/r0/prefill/L0/attn/all-reduce"], got["infer/r0/prefill/logits"], got)
		}
	}
}
