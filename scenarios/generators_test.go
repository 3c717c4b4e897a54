package scenarios

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gpusim/models"
	"gpusim/sim"
)

// run loads a scenario whose topology is given inline as topo.yaml.
func runWith(t *testing.T, topo, scen string, set map[string]string) *sim.Result {
	t.Helper()
	sc, err := Load("s.yaml", []byte(scen), Options{Set: set, ReadFile: func(string) ([]byte, error) { return []byte(topo), nil }})
	if err != nil {
		t.Fatalf("load: %v", err)
	}
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatalf("run: %v", err)
	}
	return res
}

// fourGPUs: an NVSwitch with 100 GB/s links; GPUs that compute exactly
// 1000 TFLOP/s in bf16 and whose memory is never the bound; no overheads.
const fourGPUs = `
name: four
hosts: [{name: cpu0, api_overhead: 0 us, sync_latency: 0 us, graph_launch: 10 us}]
gpus:
  - {name: gpu0, model: H100-SXM, peak: {bf16: 1000 TFLOP/s}, compute_efficiency: 1, memory_bandwidth: 1000000 GB/s, memory_efficiency: 1, kernel_overhead: 0 us, copy_overhead: 0 us}
  - {name: gpu1, model: H100-SXM, peak: {bf16: 1000 TFLOP/s}, compute_efficiency: 1, memory_bandwidth: 1000000 GB/s, memory_efficiency: 1, kernel_overhead: 0 us, copy_overhead: 0 us}
  - {name: gpu2, model: H100-SXM, peak: {bf16: 1000 TFLOP/s}, compute_efficiency: 1, memory_bandwidth: 1000000 GB/s, memory_efficiency: 1, kernel_overhead: 0 us, copy_overhead: 0 us}
  - {name: gpu3, model: H100-SXM, peak: {bf16: 1000 TFLOP/s}, compute_efficiency: 1, memory_bandwidth: 1000000 GB/s, memory_efficiency: 1, kernel_overhead: 0 us, copy_overhead: 0 us}
switches: [{name: nvs, kind: nvswitch}, {name: pcie}]
links:
  - {ends: [pcie, cpu0], bandwidth: 50 GB/s}
  - {ends: [gpu0, pcie], bandwidth: 50 GB/s}
  - {ends: [gpu1, pcie], bandwidth: 50 GB/s}
  - {ends: [gpu2, pcie], bandwidth: 50 GB/s}
  - {ends: [gpu3, pcie], bandwidth: 50 GB/s}
  - {ends: [gpu0, nvs], bandwidth: 100 GB/s}
  - {ends: [gpu1, nvs], bandwidth: 100 GB/s}
  - {ends: [gpu2, nvs], bandwidth: 100 GB/s}
  - {ends: [gpu3, nvs], bandwidth: 100 GB/s}
`

func TestOverlappedStepIsComputePlusTheLastBucket(t *testing.T) {
	scen := `
name: dp
topology: topo.yaml
training:
  gpus: all
  model: [{params: 25e6, flops: 10 GFLOP, count: 4}]
  batch: 100
  steps: 1
  bucket: 50 MB
  overlap: ${overlap}
  algorithm: ring
  protocol: simple
  optimizer_bytes_per_param: 0
  kernel_sm_share: 0.8
  comm_sm_share: 0.2
vars: {overlap: "true"}
`
	// Each layer: forward 1e12 FLOP on 0.8 of the SMs, at 800 TFLOP/s,
	// 1.25 ms, backward 2.5 ms; its 50 MB of bf16 gradients close a bucket. A ring all-reduce of 50 MB
	// over 4 GPUs at 100 GB/s: 8.4 us, then 6 steps of 3.4 us and 12.5 MB.
	// The kernels leave the all-reduce the SMs it claims, so they do not
	// slow each other. With overlap, three buckets hide under the backward
	// pass: the step is 5 + 10 ms of compute plus the last bucket.
	ar := 8.4 + 6*(3.4+12.5e6/100e9*1e6)
	res := runWith(t, fourGPUs, scen, nil)
	want := sim.Time((15000 + ar) * 1e6)
	if d := res.Makespan - want; d < -2 || d > 2 {
		t.Errorf("overlapped step %s, want compute plus the last bucket, %s", res.Makespan, want)
	}
	// Without overlap, all four buckets follow the backward pass.
	res = runWith(t, fourGPUs, scen, map[string]string{"overlap": "false"})
	want = sim.Time((15000 + 4*ar) * 1e6)
	if d := res.Makespan - want; d < -8 || d > 8 {
		t.Errorf("step without overlap %s, want compute plus four buckets, %s", res.Makespan, want)
	}
}

// grad_dtype sets what the gradients' collectives move, not the weights'
// gathers. As in TestShardedOptimizerStep (15 ms of layers, the optimizer
// 1.25 ms, or 0.3125 for a quarter), but with fp32 gradients each layer's
// are 100 MB: a bucket each, whose ring all-reduce over 4 GPUs is 8.4 us
// and 6 steps of 3.4 us and 25 MB at 100 GB/s, and reduce-scatter 3 such
// steps; ZeRO-1's all-gathers of the updated bf16 weights still move 50
// MB. FP8 training reduces its gradients in bf16 by default: 50 MB a
// layer, a bucket each (fp8's 25 MB would close one every two layers).
func TestGradDType(t *testing.T) {
	scen := `
name: grads
topology: topo.yaml
training:
  gpus: all
  model: [{params: 25e6, flops: 10 GFLOP, count: 4}]
  batch: 100
  steps: 1
  bucket: 50 MB
  dtype: ${dtype}
  grad_dtype: ${grad}
  sharding: ${sharding}
  algorithm: ring
  protocol: simple
  optimizer_bytes_per_param: 1e4
  kernel_sm_share: 0.8
  comm_sm_share: 0.2
vars: {sharding: none, dtype: bf16, grad: fp32}
`
	step := func(chunk float64, steps int) float64 { return 8.4 + float64(steps)*(3.4+chunk/100e9*1e6) }
	topo := strings.ReplaceAll(fourGPUs, "peak: {bf16: 1000 TFLOP/s}", "peak: {bf16: 1000 TFLOP/s, fp8: 1000 TFLOP/s}")
	noGrad := strings.Replace(scen, "  grad_dtype: ${grad}\n", "", 1) // the default
	for _, c := range []struct {
		what, scen string
		set        map[string]string
		want       float64 // us
	}{
		{"fp32 gradients", scen, nil, 15000 + step(25e6, 6) + 1250},
		{"zero1, fp32 gradients", scen, map[string]string{"sharding": "zero1"}, 15000 + step(25e6, 3) + 312.5 + 4*step(12.5e6, 3)},
		{"fp8, gradients by default", noGrad, map[string]string{"dtype": "fp8"}, 15000 + step(12.5e6, 6) + 1250},
	} {
		checkGradStep(t, runWith(t, topo, c.scen, c.set), c.what, c.want, 4)
	}
	for _, c := range []struct{ grad, want string }{
		{"fp8", `training.grad_dtype: fp8: gradients are reduced in fp32, bf16, fp16 or fp64 (FP8 training reduces its gradients in bf16, the default)`},
		{"tf32", `training.grad_dtype: tf32 is stored as fp32; use fp32`},
		{"fp31", `training.grad_dtype: unknown dtype "fp31"; gradients are reduced in fp32, bf16, fp16 or fp64`},
	} {
		_, err := Load("s.yaml", []byte(scen), Options{Set: map[string]string{"grad": c.grad}, ReadFile: func(string) ([]byte, error) { return []byte(topo), nil }})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("grad_dtype %s: error %v, want %q", c.grad, err, c.want)
		}
	}
}

// checkGradStep checks a one-step training's makespan (us) and the
// gradient collectives (all-reduces or reduce-scatters) gpu0 issues.
func checkGradStep(t *testing.T, res *sim.Result, what string, want float64, buckets int) {
	t.Helper()
	if d := res.Makespan - sim.Time(want*1e6); d < -20 || d > 20 {
		t.Errorf("%s: step %s, want %s", what, res.Makespan, sim.Time(want*1e6))
	}
	n := 0
	for _, op := range res.Program.Threads[0].Ops {
		if op.Kind == sim.OpCollective && (op.Coll.Name == models.AllReduce || op.Coll.Name == models.ReduceScatter) {
			n++
		}
	}
	if n != buckets {
		t.Errorf("%s: gpu0 reduces %d buckets, want %d", what, n, buckets)
	}
}

// ZeRO-1 and ZeRO-2 (a sharded optimizer) reduce-scatter the buckets
// instead of all-reducing them, update a quarter of the parameters on each
// of the 4 GPUs, and all-gather each bucket's updated parameters after the
// optimizer, before the next step. As above, the layers take 15 ms and
// close a 50 MB bucket each; a ring reduce-scatter or all-gather of 50 MB
// over 4 GPUs is 8.4 us and 3 steps of 3.4 us and 12.5 MB at 100 GB/s;
// the optimizer reads and writes 1e4 bytes for each of the 1e8 parameters
// at 0.8 of 1000 TB/s (the kernels' share of the SMs reaches that share of
// the bandwidth): 1.25 ms, or 0.3125 ms for a quarter. The last bucket's
// reduce-scatter, the optimizer and the four all-gathers follow the
// backward pass one after another.
func TestShardedOptimizerStep(t *testing.T) {
	scen := `
name: zero
topology: topo.yaml
training:
  gpus: all
  model: [{params: 25e6, flops: 10 GFLOP, count: 4}]
  batch: 100
  steps: 1
  bucket: 50 MB
  sharding: ${sharding}
  algorithm: ring
  protocol: simple
  optimizer_bytes_per_param: 1e4
  kernel_sm_share: 0.8
  comm_sm_share: 0.2
vars: {sharding: none}
`
	ar, half := 8.4+6*(3.4+12.5e6/100e9*1e6), 8.4+3*(3.4+12.5e6/100e9*1e6)
	for _, c := range []struct {
		sharding string
		want     float64 // us
	}{{"none", 15000 + ar + 1250}, {"zero1", 15000 + half + 312.5 + 4*half}, {"zero2", 15000 + half + 312.5 + 4*half}} {
		res := runWith(t, fourGPUs, scen, map[string]string{"sharding": c.sharding})
		if d := res.Makespan - sim.Time(c.want*1e6); d < -20 || d > 20 {
			t.Errorf("%s: step %s, want %s", c.sharding, res.Makespan, sim.Time(c.want*1e6))
		}
		if c.sharding == "none" {
			continue
		}
		kinds := map[string]int{}
		for _, op := range res.Program.Threads[0].Ops {
			if op.Kind == sim.OpCollective {
				kinds[op.Coll.Name]++
			}
		}
		if kinds[models.ReduceScatter] != 4 || kinds[models.AllGather] != 4 || len(kinds) != 2 {
			t.Errorf("%s: gpu0 issues %v, want 4 reduce-scatters and 4 all-gathers", c.sharding, kinds)
		}
	}
	// Over two steps without a sync between them, the second step's first
	// kernel waits for the first's all-gathers; over two micro-steps ZeRO-2
	// reduce-scatters each one's gradients (it keeps only its shard),
	// ZeRO-1 the sum after the second.
	for _, z := range []string{"zero1", "zero2"} {
		two := strings.Replace(strings.Replace(scen, "steps: 1", "steps: 2\n  sync_every_step: false\n  accumulation: 2", 1), "${sharding}", z, 1)
		res := runWith(t, fourGPUs, two, nil)
		var gathered, next sim.Time
		scatters := 0
		for _, r := range res.Ops {
			switch {
			case strings.HasPrefix(r.ID, "train/s0/gather") && r.GPU == 0:
				gathered = max(gathered, r.End)
			case r.ID == "train/gpu0/s1/m0/fwd/L0.0":
				next = r.Start
			case strings.Contains(r.ID, "bucket") && r.GPU == 0 && strings.HasPrefix(r.ID, "train/s0/"):
				scatters++
			}
		}
		if gathered == 0 || next < gathered {
			t.Errorf("%s: step 1 starts at %s, its parameters gathered at %s", z, next, gathered)
		}
		if want := map[string]int{"zero1": 4, "zero2": 8}[z]; scatters != want {
			t.Errorf("%s: %d reduce-scatters in step 0 over two micro-steps, want %d", z, scatters, want)
		}
	}
	// Two steps of one micro-step without a sync: each is 15 ms of
	// compute, the last reduce-scatter and the optimizer, and the gathers
	// follow; the second step's waits for all four, or with
	// overlap_param_gather only for the first (its first layer's, gathered
	// first): the other three hide under its forward pass, and the last
	// step's four end the run.
	two := strings.Replace(strings.Replace(scen, "steps: 1", "steps: 2\n  sync_every_step: false\n  overlap_param_gather: ${og}", 1), "vars: {sharding: none}", "vars: {sharding: zero1, og: \"false\"}", 1)
	for og, want := range map[string]float64{"false": 30625 + 10*half, "true": 30625 + 7*half} {
		res := runWith(t, fourGPUs, two, map[string]string{"og": og})
		if d := res.Makespan - sim.Time(want*1e6); d < -40 || d > 40 {
			t.Errorf("overlap_param_gather: %s: two steps %s, want %s", og, res.Makespan, sim.Time(want*1e6))
		}
	}
}

// overlap_param_gather with interleaved chunks, buckets of two layers and
// two micro-steps, and the default sync after each step: stage 0's chunks
// hold L0.0-L0.1 (25e6 parameters each: one 100 MB bucket) and L2.0-L2.1
// (15e6: 60 MB). In step 1 every forward of a chunk's layers starts after
// its bucket's gather of step 0 ends, and the first starts before the
// other bucket's gather ends: the gathers are issued as step 1 begins,
// after the sync, and the second hides under the first layers' forward.
// Without overlap_param_gather step 1 waits for both.
func TestOverlappedParamGather(t *testing.T) {
	scen := `
name: og
topology: topo.yaml
training:
  gpus: all
  pipeline: 2
  pipeline_chunks: 2
  pipeline_bytes: 10 B
  model: [{params: 25e6, flops: 10 GFLOP, count: 2}, {params: 20e6, flops: 10 GFLOP, count: 2}, {params: 15e6, flops: 10 GFLOP, count: 2}, {params: 10e6, flops: 10 GFLOP, count: 2}]
  batch: 100
  accumulation: 2
  steps: 2
  bucket: 100 MB
  sharding: zero1
  overlap_param_gather: ${og}
  kernel_sm_share: 0.8
  comm_sm_share: 0.2
vars: {og: "true"}
`
	for _, og := range []string{"true", "false"} {
		res := runWith(t, fourGPUs, scen, map[string]string{"og": og})
		bytes := map[string]int64{}
		for _, op := range res.Program.Threads[0].Ops {
			if op.Kind == sim.OpCollective {
				bytes[op.ID] = op.Coll.Bytes
			}
		}
		gathered := map[int64]sim.Time{} // by bucket size, step 0's
		for _, r := range res.Ops {
			if id, _, _ := strings.Cut(r.ID, "@"); strings.HasPrefix(id, "train/s0/gather") && r.GPU == 0 {
				gathered[bytes[id]] = r.End // a part's record is ID@GPU
			}
		}
		if len(gathered) != 2 || gathered[100e6] == 0 || gathered[60e6] == 0 {
			t.Fatalf("og %s: step 0's gathers on gpu0 end at %v, want a 100 MB and a 60 MB one", og, gathered)
		}
		var first sim.Time
		for _, r := range res.Ops {
			bucket := int64(0)
			switch {
			case !strings.HasPrefix(r.ID, "train/gpu0/s1/m"):
			case strings.Contains(r.ID, "/c0/fwd/L0."):
				bucket = 100e6
			case strings.Contains(r.ID, "/c1/fwd/L2."):
				bucket = 60e6
			}
			if bucket == 0 {
				continue
			}
			if r.Start < gathered[bucket] {
				t.Errorf("og %s: %s starts at %s, before its bucket's gather ends at %s", og, r.ID, r.Start, gathered[bucket])
			}
			if r.ID == "train/gpu0/s1/m0/c0/fwd/L0.0" {
				first = r.Start
			}
		}
		if hidden := first < gathered[60e6]; first == 0 || hidden != (og == "true") {
			t.Errorf("og %s: step 1's first forward starts at %s, the 60 MB gather ends at %s", og, first, gathered[60e6])
		}
	}
}

func TestEnoughLoaderWorkersKeepTheGPUBusy(t *testing.T) {
	scen := `
name: loader
topology: topo.yaml
vars: {workers: 8}
training:
  gpus: 1
  model: [{params: 1e6, flops: 1 GFLOP, count: 10}]
  batch: 100
  steps: 200
  sync_every_step: false
  dataloader: {workers: "${workers}", sample_time: 50 us, sample_bytes: 100 KiB}
`
	// A step computes 3e12 FLOP: 3 ms. A worker prepares a batch in 100 x
	// 50 us = 5 ms; 8 workers deliver one every 0.6 ms, faster than the GPU
	// uses them: only the first batch (5 ms of 600 ms) keeps the GPU waiting.
	res := runWith(t, fourGPUs, scen, nil)
	g := res.GPUs[0]
	if idle := float64(g.Idle()) / float64(res.Makespan); idle >= 0.01 {
		t.Errorf("with 8 workers gpu0 idles %.2f%% (input %s), want under 1%%", 100*idle, g.IdleInput)
	}
	// One worker delivers a batch every 5 ms; the GPU copies it in (10.24 MB
	// at 50 GB/s, 0.2 ms) and computes 3 ms: it waits on input the other
	// 1.8 ms of each 5 ms, 36%.
	res = runWith(t, fourGPUs, scen, map[string]string{"workers": "1"})
	g = res.GPUs[0]
	want := 1 - (3+102400.0*100/50e9*1e3)/5
	if in := float64(g.IdleInput) / float64(res.Makespan); math.Abs(in-want) > 0.005 {
		t.Errorf("with 1 worker gpu0 waits on input %.2f%%, want %.2f%%", 100*in, 100*want)
	}
}

func TestGPipeBubbleFraction(t *testing.T) {
	for _, tc := range []struct {
		schedule string
		p, m     int
	}{{"gpipe", 4, 8}, {"gpipe", 4, 1}, {"gpipe", 2, 16}, {"1f1b", 4, 8}, {"1f1b", 3, 5}} {
		scen := `
name: pipe
topology: topo.yaml
pipeline:
  gpus: ` + string(rune('0'+tc.p)) + `
  schedule: ` + tc.schedule + `
  microbatches: ` + itoa(tc.m) + `
  forward: 10 ms
  backward: 20 ms
`
		res := runWith(t, fourGPUs, scen, nil)
		// Equal stages: each stage computes m x 30 ms of the
		// (m + p - 1) x 30 ms the schedule takes; the rest is the bubble.
		want := float64(tc.p-1) / float64(tc.m+tc.p-1)
		g := res.GPUs[0]
		got := 1 - float64(g.Compute)/float64(res.Makespan)
		if math.Abs(got-want) > 0.002 {
			t.Errorf("%s p=%d m=%d: bubble %.4f, want (p-1)/(m+p-1) = %.4f", tc.schedule, tc.p, tc.m, got, want)
		}
	}
}

// Megatron-LM's interleaved order for 2 stages of 2 chunks and 4
// micro-batches, worked by hand from its rules (interleavedSteps): stage 0
// warms up with (2-0-1) x 2 + (2-1) x 2 = 4 forwards, stage 1 with 2; the
// k-th forward runs chunk (k mod 4) / 2 on micro-batch (k / 4) x 2 + k mod
// 2, and the k-th backward the other chunk.
func TestInterleavedOrder(t *testing.T) {
	F := func(c, m int) pipeStep { return pipeStep{true, c, m} }
	B := func(c, m int) pipeStep { return pipeStep{false, c, m} }
	want := [][]pipeStep{
		{F(0, 0), F(0, 1), F(1, 0), F(1, 1), F(0, 2), B(1, 0), F(0, 3), B(1, 1), F(1, 2), B(0, 0), F(1, 3), B(0, 1), B(1, 2), B(1, 3), B(0, 2), B(0, 3)},
		{F(0, 0), F(0, 1), F(1, 0), B(1, 0), F(1, 1), B(1, 1), F(0, 2), B(0, 0), F(0, 3), B(0, 1), F(1, 2), B(1, 2), F(1, 3), B(1, 3), B(0, 2), B(0, 3)},
	}
	for r, w := range want {
		if got := interleavedSteps(2, 2, 4, r); !slices.Equal(got, w) {
			t.Errorf("stage %d: %v, want %v", r, got, w)
		}
	}
	// With as many micro-batches as stages, every forward runs first.
	got := interleavedSteps(2, 2, 2, 1)
	if w := []pipeStep{F(0, 0), F(0, 1), F(1, 0), F(1, 1), B(1, 0), B(1, 1), B(0, 0), B(0, 1)}; !slices.Equal(got, w) {
		t.Errorf("m = p: %v, want %v", got, w)
	}
}

// The interleaved schedule's bubble is (p-1)(tf+tb)/v of a step that
// computes m(tf+tb) (Narayanan et al. 2021, section 2.2.2), where 1F1B's
// is (p-1)(tf+tb). The transfers' kernels hold 2 of the 132 SMs each and
// slow compute beside them, but only from a pass before they are needed
// (as Megatron-LM posts them) and mostly not for long: the makespan and
// each GPU's compute lie within 1% above the schedule's.
func TestInterleavedBubble(t *testing.T) {
	for _, tc := range []struct{ p, v, m int }{{4, 2, 8}, {4, 4, 8}, {2, 2, 4}, {4, 3, 12}, {3, 2, 6}, {4, 2, 4}, {2, 5, 2}} {
		scen := `
name: pipe
topology: topo.yaml
pipeline: {gpus: ` + itoa(tc.p) + `, schedule: interleaved, chunks: ` + itoa(tc.v) + `, microbatches: ` + itoa(tc.m) + `, forward: 10 ms, backward: 20 ms}
`
		res := runWith(t, fourGPUs, scen, nil)
		p, v, m := float64(tc.p), float64(tc.v), float64(tc.m)
		ideal := sim.Time((m + (p-1)/v) * 30 * float64(sim.Millisecond))
		if res.Makespan < ideal || float64(res.Makespan) > float64(ideal)*1.01 {
			t.Errorf("p=%d v=%d m=%d: step %s, want %s to 1%% more", tc.p, tc.v, tc.m, res.Makespan, ideal)
		}
		if tc.v == 2 && tc.m == 8 {
			// One chunk is 1F1B.
			one := runWith(t, fourGPUs, strings.Replace(scen, "chunks: 2", "chunks: 1", 1), nil)
			plain := runWith(t, fourGPUs, strings.Replace(scen, "schedule: interleaved, chunks: 2", "schedule: 1f1b", 1), nil)
			if one.Makespan != plain.Makespan || one.Makespan == res.Makespan {
				t.Errorf("chunks: 1 takes %s, 1f1b %s, 2 chunks %s; want the first two equal", one.Makespan, plain.Makespan, res.Makespan)
			}
		}
		compute := m * 30 * float64(sim.Millisecond)
		for g := range tc.p {
			if got := float64(res.GPUs[g].Compute); got < compute || got > compute*1.01 {
				t.Errorf("p=%d v=%d m=%d: gpu%d computes %s, want %s to 1%% more", tc.p, tc.v, tc.m, g, res.GPUs[g].Compute, sim.Time(compute))
			}
		}
	}
}

func itoa(n int) string {
	s := ""
	for {
		s = string(rune('0'+n%10)) + s
		n /= 10
		if n == 0 {
			return s
		}
	}
}

func TestShardedTrainingGathersAndScatters(t *testing.T) {
	scen := `
name: zero3
topology: topo.yaml
training:
  gpus: all
  model: [{params: 1e6, flops: 1 GFLOP, count: 3}]
  batch: 4
  steps: 1
  sharding: zero3
`
	res := runWith(t, fourGPUs, scen, nil)
	kinds := collKindsOn(res, 0)
	// Gathers before each layer's forward and backward but the last
	// layer's backward, which follows its forward with its weights still
	// gathered; one bucket of gradients reduce-scattered.
	if kinds["allgather"] != 5 || kinds["reducescatter"] != 1 || kinds["allreduce"] != 0 {
		t.Errorf("collectives on gpu0: %v", kinds)
	}
}

func TestCUDAGraphsRemoveLaunchOverhead(t *testing.T) {
	topo := strings.Replace(fourGPUs, "api_overhead: 0 us", "api_overhead: 3 us", 1)
	scen := `
name: graphs
topology: topo.yaml
vars: {graph: "false"}
threads:
  - name: main
    ops:
      - repeat:
          count: 50
          graph: ${graph}
          ops:
            - repeat: {count: 10, ops: [{kernel: {stream: gpu0/s, duration: 1 us}}]}
`
	// Launched one by one: 500 launches of 3 us, the GPU waiting on each;
	// the last kernel ends 1 us after the last launch.
	if got := runWith(t, topo, scen, nil).Makespan; got != 1501*sim.Microsecond {
		t.Errorf("without graphs %s, want 1501 us", got)
	}
	// As 50 graphs of 10 kernels: a graph launches every 10 us, the GPU runs
	// each in 10 us: the last graph ends at 10 + 50 x 10 us.
	if got := runWith(t, topo, scen, map[string]string{"graph": "true"}).Makespan; got != 510*sim.Microsecond {
		t.Errorf("with graphs %s, want 510 us", got)
	}
}

// TestGeneratedThreadsAreSizedOnce checks that a training or a pipeline of
// several steps sizes each thread's op list after its first step: every
// step issues as many ops as the first, so the list ends full, with no
// spare capacity (appending grew a 10^6-op program a quarter at a time,
// copying each op about four times while it loaded).
func TestGeneratedThreadsAreSizedOnce(t *testing.T) {
	for _, scen := range []string{`
name: train
topology: topo.yaml
training:
  gpus: all
  model: [{params: 25e6, flops: 10 GFLOP, count: 4}]
  batch: 100
  steps: 7
  accumulation: 2
  bucket: 50 MB
  overlap: true
`, `
name: pipe
topology: topo.yaml
pipeline:
  gpus: 4
  schedule: 1f1b
  microbatches: 6
  forward: 10 ms
  backward: 20 ms
  steps: 5
`} {
		sc, err := Load("s.yaml", []byte(scen), Options{ReadFile: func(string) ([]byte, error) { return []byte(fourGPUs), nil }})
		if err != nil {
			t.Fatalf("load: %v", err)
		}
		for _, th := range sc.Program.Threads {
			if len(th.Ops) == 0 || cap(th.Ops) != len(th.Ops) {
				t.Errorf("%s: %d ops in a list of capacity %d", th.Name, len(th.Ops), cap(th.Ops))
			}
		}
	}
}

func loadOn(topo, scen string, maxOps int64) (*Scenario, error) {
	return Load("s.yaml", []byte(scen), Options{MaxOps: maxOps, ReadFile: func(string) ([]byte, error) { return []byte(topo), nil }})
}

// TestGeneratorOpCountsMatchTheirExpansion checks the op counts the
// generators are refused by (trainingStageOps, pipelineOps) against the ops
// they expand to, over small parameter sets of every kind.
func TestGeneratorOpCountsMatchTheirExpansion(t *testing.T) {
	n := 0
	pipes := []string{"all\n  pipeline: 2\n  pipeline_bytes: 1 kB", "all\n  pipeline: 4\n  pipeline_bytes: 1 kB", "all\n  pipeline: 2\n  tensor: 2\n  pipeline_bytes: 1 kB", "all\n  pipeline: 4\n  pipeline_split: balanced\n  pipeline_bytes: 1 kB",
		"all\n  pipeline: 2\n  pipeline_chunks: 2\n  pipeline_bytes: 1 kB", "all\n  pipeline: 2\n  tensor: 2\n  pipeline_chunks: 2\n  pipeline_bytes: 1 kB"}
	for _, gpus := range append([]string{"1", "all", "all\n  tensor: 2", "all\n  tensor: 4", "all\n  tensor: 2\n  sequence_parallel: true", "all\n  experts: {count: 4, parallel: 2, every: 5}", "2\n  experts: {count: 2}"}, pipes...) {
		for _, model := range []string{"[{params: 25e6, flops: 10 GFLOP, tensor_bytes: 1 MB, count: 5}]", "gpt3-125m"} {
			if strings.Contains(gpus, "experts") && model[0] == '[' {
				continue // experts split a preset's MLPs
			}
			for _, bucket := range []string{"50 MB", "120 MB", "1 GB"} {
				for _, loader := range []string{"", "\n  dataloader: {workers: 3, sample_time: 1 ms, sample_bytes: 1 MiB}"} {
					for _, steps := range []string{"1", "3"} {
						for _, accum := range []string{"1", "2"} {
							for _, other := range []string{"overlap: true", "overlap: false", "sharding: zero3", "sync_every_step: false", "recompute: full", "recompute: full\n  sharding: zero3", "sharding: zero1", "sharding: zero2\n  overlap: false", "sharding: zero1\n  overlap_param_gather: true", "sharding: zero3\n  sync_every_step: false"} {
								if strings.Contains(gpus, "experts") && strings.Contains(other, "sharding: zero") || strings.Contains(gpus, "pipeline") && strings.Contains(other, "sharding: zero3") {
									continue // not modelled together
								}
								chunks := int64(1)
								if strings.Contains(gpus, "pipeline_chunks: 2") {
									chunks = 2
									if accum == "1" {
										continue // interleaving needs a multiple of the stages
									}
								}
								scen := `
name: t
topology: topo.yaml
training:
  gpus: ` + gpus + `
  model: ` + model + `
  bucket: ` + bucket + `
  steps: ` + steps + `
  accumulation: ` + accum + `
  ` + other + loader + "\n"
								sc, err := loadOn(fourGPUs, scen, 0)
								if err != nil {
									t.Fatalf("%s: %v", scen, err)
								}
								// The parameters back from the program: the
								// threads, and each stage's layers and buckets
								// (those of its first thread).
								var threads []*sim.Thread
								for i := range sc.Program.Threads {
									if x := &sc.Program.Threads[i]; !strings.Contains(x.Name, "loader") {
										threads = append(threads, x)
									}
								}
								nst := 1
								if strings.Contains(gpus, "pipeline: 2") {
									nst = 2
								} else if strings.Contains(gpus, "pipeline: 4") {
									nst = 4
								}
								st, acc := int64(1), int64(1)
								if steps == "3" {
									st = 3
								}
								if accum == "2" {
									acc = 2
								}
								per := len(threads) / nst
								var stages []stageCount
								moeLayers := int64(0)
								for k := 0; k < nst; k++ {
									th := threads[k*per]
									c := stageCount{gpus: int64(per), loader: loader != "" && k == 0}
									moeLayers = 0
									fwdExtra := int64(0) // the forward pass's ops beyond a kernel a layer
									for _, op := range th.Ops {
										// A layer's pass is one kernel, or a
										// kernel and a collective per block
										// (attn and mlp, or the embedding's
										// and the head's one, each in one
										// pass only when in stages): the ops
										// beyond one kernel a layer and pass
										// are tensor's. An MoE layer's
										// forward is attn and experts
										// kernels.
										id := op.ID
										if chunks > 1 { // a chunk's ids name it
											id = strings.Replace(strings.Replace(id, "/m0/c0/", "/m0/", 1), "/m0/c1/", "/m0/", 1)
										}
										fwd := strings.HasPrefix(id, th.Name+"/s0/m0/fwd/")
										bwd := strings.HasPrefix(id, th.Name+"/s0/m0/bwd/")
										switch {
										case fwd && strings.HasSuffix(op.ID, "/experts"):
											moeLayers++
										case (fwd || bwd) && strings.HasSuffix(op.ID, "/mlp"):
											c.tpExtra++
											if fwd {
												fwdExtra++
											}
										case fwd:
											c.layers++
										}
										if strings.HasPrefix(op.ID, "train/s0/m0/tp") {
											if strings.Contains(op.ID, "/fwd/") {
												c.tpExtra++
												fwdExtra++
											}
											if strings.Contains(op.ID, "/bwd/") {
												c.tpExtra++
											}
										}
										if strings.HasPrefix(op.ID, "train/s0/bucket") || strings.HasPrefix(op.ID, "train/s0/m0/bucket") {
											c.buckets++ // once a step, or (ZeRO-2, -3) a micro-batch
										}
									}
									if strings.Contains(other, "sharding: zero3") {
										// The rate limiter: a wait before each
										// forward gather but the first two, a
										// record after each forward but the last
										// two (zero3 runs no pipeline: one chunk).
										c.limits = 2 * max(0, c.layers-2)
									}
									preset := model == "gpt3-125m"
									if nst > 1 {
										c.comm = stageOps(int64(nst), int64(k), acc, pipeSchedule(chunks), chunks) - 2*acc*chunks - 1
										if preset && (k == 0 || k == nst-1) {
											c.comm += 3 // the tied embedding's gradients
										}
									}
									if strings.Contains(other, "recompute: full") {
										// A forward pass again of every layer
										// but a preset's embedding (in stages,
										// the first's, with its collective in
										// the forward under tensor: one, or
										// two with sequence parallelism) and
										// head (the last's, with one only
										// without stages).
										c.recompute = c.layers + fwdExtra + 3*moeLayers
										tpOps := int64(0)
										switch {
										case strings.Contains(gpus, "sequence_parallel"):
											tpOps = 2
										case strings.Contains(gpus, "tensor"):
											tpOps = 1
										}
										if preset && k == nst-1 {
											c.recompute--
											if nst == 1 {
												c.recompute -= tpOps
											}
										}
										if preset && nst > 1 && k == 0 {
											c.recompute -= 1 + tpOps
										}
									}
									stages = append(stages, c)
								}
								sharding := "none"
								for _, z := range []string{"zero1", "zero2", "zero3"} {
									if strings.Contains(other, "sharding: "+z) {
										sharding = z
									}
								}
								want := trainingStageOps(stages, st, acc, moeLayers, sharding, !strings.Contains(other, "overlap: false"), strings.Contains(other, "overlap_param_gather"), !strings.Contains(other, "sync_every_step: false"))
								if got := int64(sc.Program.NumOps()); got != want {
									t.Errorf("%s: %d ops, trainingStageOps says %d", scen, got, want)
								}
								n++
							}
						}
					}
				}
			}
		}
	}
	for p := 1; p <= 4; p++ {
		for _, micro := range []int{1, 2, 3, 5, 8} {
			for _, steps := range []int{1, 2} {
				for _, schedule := range []string{"gpipe", "1f1b"} {
					scen := `
name: p
topology: topo.yaml
pipeline: {gpus: ` + itoa(p) + `, schedule: ` + schedule + `, microbatches: ` + itoa(micro) + `, forward: 1 ms, steps: ` + itoa(steps) + `}
`
					sc, err := loadOn(fourGPUs, scen, 0)
					if err != nil {
						t.Fatalf("%s: %v", scen, err)
					}
					want := pipelineOps(int64(p), int64(micro), int64(steps), schedule, 1)
					if got := int64(sc.Program.NumOps()); got != want {
						t.Errorf("%s: %d ops, pipelineOps says %d", scen, got, want)
					}
					n++
				}
			}
		}
	}
	for p := 2; p <= 4; p++ {
		for _, groups := range []int{1, 2, 3} {
			for _, chunks := range []int{2, 3} {
				scen := `
name: p
topology: topo.yaml
pipeline: {gpus: ` + itoa(p) + `, schedule: interleaved, chunks: ` + itoa(chunks) + `, microbatches: ` + itoa(groups*p) + `, forward: 1 ms, steps: 2}
`
				sc, err := loadOn(fourGPUs, scen, 0)
				if err != nil {
					t.Fatalf("%s: %v", scen, err)
				}
				want := pipelineOps(int64(p), int64(groups*p), 2, "interleaved", int64(chunks))
				if got := int64(sc.Program.NumOps()); got != want {
					t.Errorf("%s: %d ops, pipelineOps says %d", scen, got, want)
				}
				n++
			}
		}
	}
	if n != 5*2*3*2*2*2*10+2*3*2*2*2*4+4*2*3*2*2*2*7+2*2*3*2*2*7+4*5*2*2+3*3*2 {
		t.Errorf("checked %d cases", n)
	}
}

// TestGeneratorsAreRefusedByTheirCount: a generator that would expand past
// the op limit is refused at its key before it expands, with the count it
// would reach.
func TestGeneratorsAreRefusedByTheirCount(t *testing.T) {
	// 4 GPUs, 4 layers of 25e6 parameters (50 MB of bf16 gradients each: a
	// bucket each), 2 steps of 3 micro-steps, overlapped, a sync a step.
	// A micro-step: 4 forward and 4 backward kernels (8). A step: 3 x 8,
	// a record, wait and all-reduce per bucket on the last (4 x 3 = 12),
	// a record and wait before the optimizer, the optimizer and the sync
	// (4): 40. Per GPU 2 x 40 = 80; in all 320.
	train := `
name: t
topology: topo.yaml
training: {gpus: all, model: [{params: 25e6, flops: 10 GFLOP, count: 4}], bucket: 50 MB, steps: 2, accumulation: 3}
`
	// 4 stages, 1F1B, 6 micro-batches, 5 steps. Stage 0: 3 warm-up
	// forwards and sends (6), 3 steady forward, exchange, backward (9),
	// 3 cool-down receives and backwards (6), a sync: 22. Stage 1: 2 x 3
	// warm-up, a receive, 4 steady of 4 (16), 2 x 3 cool-down, a sync: 30.
	// Stage 2: 3, 1, 5 x 4 (20), 3, 1: 28. Stage 3: a receive, 6 steady
	// forward, backward, send or exchange (18), a sync: 20. A step 100;
	// 500 in all.
	pipe := `
name: p
topology: topo.yaml
pipeline: {gpus: 4, schedule: 1f1b, microbatches: 6, forward: 1 ms, steps: 5}
`
	// 10 host ops before the pipeline: 510 ops in all.
	both := `
name: p
topology: topo.yaml
threads:
  - name: m
    ops: [{repeat: {count: 10, ops: [{host: {duration: 1 us}}]}}]
pipeline: {gpus: 4, schedule: 1f1b, microbatches: 6, forward: 1 ms, steps: 5}
`
	// 100,000 layers of 1e6 parameters (2 MB each), the default 25 MiB
	// bucket (26,214,400 B: 14 layers close one), 100,000 steps of 10,000
	// micro-steps: 7,142 buckets of 14 layers and one of the last 12,
	// 7,143. A step: 10,000 x 200,000 kernels + 3 x 7,143 + 4 =
	// 2,000,021,433; x 100,000 steps x 4 GPUs = 800,008,573,200,000.
	huge := `
name: g
topology: topo.yaml
training: {gpus: all, model: [{params: 1e6, flops: 1 GFLOP, activations: 1 MiB, count: 100000}], batch: 4, steps: 100000, accumulation: 10000}
`
	for _, tc := range []struct {
		name, scen string
		limit      int64
		err        string // "" for none
	}{
		{"training at the limit", train, 320, ""},
		{"training past it", train, 319, "s.yaml:4:1: training: expands to 320 ops, more than the limit of 319; lower a count or raise the limit (--max-ops)"},
		{"pipeline at the limit", pipe, 500, ""},
		{"pipeline past it", pipe, 499, "s.yaml:4:1: pipeline: expands to 500 ops, more than the limit of 499; lower a count or raise the limit (--max-ops)"},
		{"pipeline after a thread", both, 509, "s.yaml:7:1: pipeline: the scenario expands to 510 ops, more than the limit of 509; lower a count or raise the limit (--max-ops)"},
		{"huge training", huge, 0, "s.yaml:4:1: training: expands to 800008573200000 ops, more than the limit of 10000000; lower a count or raise the limit (--max-ops)"},
		// More layers than half the limit are not even listed.
		{"huge model", huge, 1000, "s.yaml:4:1: training: expands to more than 1000 ops, the limit, with a model of 100000 layers; lower a count or raise the limit (--max-ops)"},
	} {
		sc, err := loadOn(fourGPUs, tc.scen, tc.limit)
		switch {
		case tc.err == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.err == "" && sc.Program.NumOps() != int(tc.limit):
			t.Errorf("%s: %d ops, want %d", tc.name, sc.Program.NumOps(), tc.limit)
		case tc.err != "" && (err == nil || err.Error() != tc.err):
			t.Errorf("%s: err = %v, want %s", tc.name, err, tc.err)
		}
	}
}

// collKindsOn counts the collective parts that ran on GPU g, by kind.
func collKindsOn(res *sim.Result, g int32) map[string]int {
	kinds := map[string]int{}
	for _, r := range res.Ops {
		if r.Coll != nil && r.GPU == g {
			kinds[r.Coll.Name]++
		}
	}
	return kinds
}

// collRanks maps each collective op's id to its GPUs.
func collRanks(p *sim.Program) map[string][]int {
	ranks := map[string][]int{}
	for _, th := range p.Threads {
		for _, op := range th.Ops {
			if op.Kind == sim.OpCollective {
				ranks[op.ID] = op.Coll.Ranks
			}
		}
	}
	return ranks
}

// tensorPairs trains two layers with tensor parallelism over pairs of the
// four GPUs, one step, with no optimizer time.
const tensorPairs = `
name: tp
topology: topo.yaml
training:
  gpus: all
  tensor: 2
  model: [{params: 25e6, flops: 10 GFLOP, tensor_bytes: 1 MB, count: 2}]
  batch: 100
  steps: 1
  bucket: 50 MB
  algorithm: ring
  protocol: simple
  optimizer_bytes_per_param: 0
`

// Tensor parallelism over pairs of the four GPUs (groups gpu0-gpu1 and
// gpu2-gpu3; data parallelism between gpu0-gpu2 and gpu1-gpu3), each layer
// split in two blocks that each end with an all-reduce of its output on the
// compute stream, as Megatron-LM does.
func TestTensorParallelStep(t *testing.T) {
	scen := tensorPairs
	// A GPU computes half of each layer: forward 100 x 10 GFLOP / 2 at 1000
	// TFLOP/s = 0.5 ms, as two kernels of 0.25 ms; backward twice that.
	// Each block's all-reduce moves 100 x 1 MB over its pair: a ring of 2
	// ranks, 8.4 us, then 2 steps of 3.4 us and 50 MB at 100 GB/s. Nothing
	// overlaps them: 3 ms of kernels and 8 all-reduces. A GPU holds half of
	// each layer's 25e6 bf16 parameters, 25 MB: the two layers fill one
	// 50 MB bucket after the backward pass, all-reduced over the data-parallel
	// pair (8.4 us, then 2 x (3.4 us + 25 MB at 100 GB/s)).
	tp := 8.4 + 2*(3.4+50e6/100e9*1e6)
	dp := 8.4 + 2*(3.4+25e6/100e9*1e6)
	want := sim.Time((3000 + 8*tp + dp) * 1e6)
	sc, err := loadOn(fourGPUs, scen, 0)
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Makespan - want; d < -10 || d > 10 {
		t.Errorf("step %s, want %s", res.Makespan, want)
	}
	// The groups: which GPUs each collective ran on.
	ranks := collRanks(sc.Program)
	for id, want := range map[string][]int{
		"train/s0/m0/tp0/fwd/L0.0/attn": {0, 1},
		"train/s0/m0/tp1/bwd/L0.1/mlp":  {2, 3},
		"train/s0/bucket0/dp0":          {0, 2},
		"train/s0/bucket0/dp1":          {1, 3},
	} {
		if got := ranks[id]; len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
			t.Errorf("%s on GPUs %v, want %v (ids: %d)", id, got, want, len(ranks))
		}
	}
}

// With full recomputation each layer's forward runs again before its
// backward, its all-reduces too: TestTensorParallelStep's step plus 1 ms of
// kernels and 4 all-reduces (two layers of two blocks), in the order
// forward L0.0, L0.1; recompute L0.1, backward L0.1; recompute L0.0,
// backward L0.0.
func TestFullRecomputationStep(t *testing.T) {
	scen := tensorPairs + "  recompute: full\n"
	tp := 8.4 + 2*(3.4+50e6/100e9*1e6)
	dp := 8.4 + 2*(3.4+25e6/100e9*1e6)
	want := sim.Time((4000 + 12*tp + dp) * 1e6)
	res := runWith(t, fourGPUs, scen, nil)
	if d := res.Makespan - want; d < -10 || d > 10 {
		t.Errorf("step %s, want %s", res.Makespan, want)
	}
	var kernels []string
	for _, op := range res.Program.Threads[0].Ops {
		if op.Kind == sim.OpKernel {
			kernels = append(kernels, strings.TrimPrefix(op.ID, "train/gpu0/s0/m0/"))
		}
	}
	wantOrder := "fwd/L0.0/attn fwd/L0.0/mlp fwd/L0.1/attn fwd/L0.1/mlp recompute/L0.1/attn recompute/L0.1/mlp bwd/L0.1/mlp bwd/L0.1/attn recompute/L0.0/attn recompute/L0.0/mlp bwd/L0.0/mlp bwd/L0.0/attn train/gpu0/s0/optimizer"
	if got := strings.Join(kernels, " "); got != wantOrder {
		t.Errorf("kernels\n%s\nwant\n%s", got, wantOrder)
	}
}

// Full recomputation reruns the blocks, not the head (it keeps its
// logits): under tensor 2, GPT-3 125M recomputes its 12 blocks with their
// two all-reduces each, and an MoE layer's recomputation runs in forward
// order (attention, dispatch, experts, combine).
func TestRecomputationSkipsTheHead(t *testing.T) {
	sc, err := loadOn(fourGPUs, "name: r\ntopology: topo.yaml\ntraining: {gpus: 2, tensor: 2, model: gpt3-125m, seq: 128, steps: 1, recompute: full}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	kernels, colls := 0, 0
	for _, op := range sc.Program.Threads[0].Ops {
		if !strings.Contains(op.ID, "/recompute/") {
			continue
		}
		if strings.Contains(op.ID, "/head") {
			t.Errorf("%s: the head is not recomputed", op.ID)
		}
		if op.Kind == sim.OpKernel {
			kernels++
		} else {
			colls++
		}
	}
	if kernels != 24 || colls != 24 {
		t.Errorf("%d kernels and %d all-reduces recomputed, want 24 and 24 (12 blocks of attention and MLP)", kernels, colls)
	}
	sc, err = loadOn(fourGPUs, "name: r\ntopology: topo.yaml\ntraining: {gpus: 2, model: gpt3-125m, seq: 128, steps: 1, recompute: full, experts: {count: 2, top_k: 1, every: 12}}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	var order []string
	for _, op := range sc.Program.Threads[0].Ops {
		if i := strings.Index(op.ID, "/recompute/L0/"); i >= 0 {
			order = append(order, op.ID[i+len("/recompute/L0/"):])
		}
	}
	if got := strings.Join(order, " "); got != "attn dispatch experts combine" {
		t.Errorf("L0's recomputation: %s, want attn dispatch experts combine", got)
	}
}

// With sequence parallelism each block's all-reduce of 100 MB over its
// pair becomes an all-gather before its kernel and a reduce-scatter after
// it, each a ring of 2 ranks: 8.4 us, then one step of 3.4 us and 50 MB at
// 100 GB/s. The rest is TestTensorParallelStep's: 3 ms of kernels, 8 blocks
// a step, one 50 MB data-parallel bucket.
func TestSequenceParallelStep(t *testing.T) {
	scen := tensorPairs + "  sequence_parallel: true\n"
	half := 8.4 + 3.4 + 50e6/100e9*1e6
	dp := 8.4 + 2*(3.4+25e6/100e9*1e6)
	want := sim.Time((3000 + 8*2*half + dp) * 1e6)
	res := runWith(t, fourGPUs, scen, nil)
	if d := res.Makespan - want; d < -10 || d > 10 {
		t.Errorf("step %s, want %s", res.Makespan, want)
	}
	kinds := collKindsOn(res, 0)
	if kinds["allgather"] != 8 || kinds["reducescatter"] != 8 || kinds["allreduce"] != 1 {
		t.Errorf("collectives on gpu0: %v, want 8 all-gathers, 8 reduce-scatters and the bucket's all-reduce", kinds)
	}
	// Each block's kernel between its gather and its scatter, in both passes.
	var order []string
	for _, r := range res.Ops {
		if r.GPU == 0 && (r.Coll != nil || r.Kind == sim.OpKernel) && strings.Contains(r.ID, "L0.0") {
			order = append(order, r.ID)
		}
	}
	wantOrder := []string{
		"train/s0/m0/tp0/fwd/L0.0/attn/gather@gpu0", "train/gpu0/s0/m0/fwd/L0.0/attn", "train/s0/m0/tp0/fwd/L0.0/attn/scatter@gpu0",
		"train/s0/m0/tp0/fwd/L0.0/mlp/gather@gpu0", "train/gpu0/s0/m0/fwd/L0.0/mlp", "train/s0/m0/tp0/fwd/L0.0/mlp/scatter@gpu0",
		"train/s0/m0/tp0/bwd/L0.0/mlp/gather@gpu0", "train/gpu0/s0/m0/bwd/L0.0/mlp", "train/s0/m0/tp0/bwd/L0.0/mlp/scatter@gpu0",
		"train/s0/m0/tp0/bwd/L0.0/attn/gather@gpu0", "train/gpu0/s0/m0/bwd/L0.0/attn", "train/s0/m0/tp0/bwd/L0.0/attn/scatter@gpu0",
	}
	if strings.Join(order, " ") != strings.Join(wantOrder, " ") {
		t.Errorf("gpu0's work for L0.0:\n%s\nwant\n%s", strings.Join(order, "\n"), strings.Join(wantOrder, "\n"))
	}
}

func TestTensorParallelErrors(t *testing.T) {
	for _, c := range []struct{ tensor, model, want string }{
		{"3", "gpt3-125m", "s.yaml:6:11: training.tensor: 3 does not divide the 4 GPUs training into tensor-parallel groups; use one of 1, 2, 4"},
		{"2", "[{params: 1e6, flops: 1 GFLOP}]", "s.yaml:7:11: training.model[0]: with tensor: 2 each layer needs tensor_bytes"},
		{"8", "gpt3-125m", "s.yaml:6:11: training.tensor: "},
		{"1\n  sequence_parallel: true", "gpt3-125m", "s.yaml:7:22: training.sequence_parallel: needs tensor: 2 or more"},
	} {
		scen := `
name: tp
topology: topo.yaml
training:
  gpus: all
  tensor: ` + c.tensor + `
  model: ` + c.model + "\n"
		_, err := loadOn(fourGPUs, scen, 0)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("tensor %s, model %s: %v; want one line starting %q", c.tensor, c.model, err, c.want)
		}
	}
}

// What GPT-3 125M (12 layers, d 768, vocabulary 50257) issues on gpu0 under
// tensor parallelism over pairs with ZeRO-3 across them (groups gpu0-gpu1,
// gpu2-gpu3; data-parallel gpu0-gpu2), 2 samples of 2048 tokens:
//   - per layer and pass an all-reduce after each of 2 blocks, and one for
//     the embedding and head: 4 x 12 + 2 = 50, each 2 x 2048 x 768 bf16
//     values, over gpu0-gpu1;
//   - an all-gather of the layer's half before each pass (25: the head's
//     backward follows its forward, its weights still gathered), 12 d^2 / 2
//     or 50257 d / 2 parameters of 2 bytes, over gpu0-gpu2;
//   - the gradients, (12 x 12 d^2 + 50257 d) / 2 x 2 bytes, reduce-scattered
//     in one bucket of under 1 GB over gpu0-gpu2;
//   - an optimizer over a quarter of the parameters (half by tensor, half
//     by ZeRO-3) at 32 bytes each, on memory of 10^15 B/s.
func TestTensorParallelWithZeRO3(t *testing.T) {
	scen := `
name: tp
topology: topo.yaml
training:
  gpus: all
  tensor: 2
  sharding: zero3
  model: gpt3-125m
  batch: 2
  steps: 1
  bucket: 1 GB
`
	sc, err := loadOn(fourGPUs, scen, 0)
	if err != nil {
		t.Fatal(err)
	}
	const d, vocab = 768.0, 50257.0
	block, head := 12*d*d, vocab*d
	type coll struct {
		kind  string
		bytes int64
		ranks string
	}
	want := map[coll]int{
		{"allreduce", int64(2 * 2048 * d * 2), "[0 1]"}:              50,
		{"allgather", int64(block / 2 * 2), "[0 2]"}:                 24,
		{"allgather", int64(head / 2 * 2), "[0 2]"}:                  1,
		{"reducescatter", int64((12*block + head) / 2 * 2), "[0 2]"}: 1,
	}
	got := map[coll]int{}
	var th *sim.Thread
	for i := range sc.Program.Threads {
		if sc.Program.Threads[i].Name == "train/gpu0" {
			th = &sc.Program.Threads[i]
		}
	}
	var opt sim.Time
	for _, op := range th.Ops {
		if op.Kind == sim.OpCollective {
			got[coll{op.Coll.Name, op.Coll.Bytes, fmt.Sprint(op.Coll.Ranks)}]++
		}
		if op.ID == "train/gpu0/s0/optimizer" {
			opt = op.Duration
		}
	}
	if len(got) != len(want) {
		t.Errorf("collectives on gpu0: %v, want %v", got, want)
	}
	for c, n := range want {
		if got[c] != n {
			t.Errorf("%d x %s of %d bytes over %s, want %d", got[c], c.kind, c.bytes, c.ranks, n)
		}
	}
	wantOpt := (12*block + head) / 4 * 32 / 1e15 // seconds
	if d := opt.Seconds() - wantOpt; d < -1e-12 || d > 1e-12 {
		t.Errorf("optimizer %v, want %.6g s", opt, wantOpt)
	}
}

// GPT-3 125M (12 blocks, d 768, vocabulary 50257) with every second block's
// MLP (L0, L2, ..., L10) made 4 experts, 2 per token, over expert-parallel
// pairs (gpu0-gpu1, gpu2-gpu3; gpu0 and gpu2 hold the same experts, as do
// gpu1 and gpu3), 2 samples of 2048 tokens, on GPUs of exactly 10^15
// FLOP/s and B/s. On each GPU, per MoE layer and pass: an all-to-all sending
// 2 samples x 2 experts x 2048 tokens x 768 bf16 values to the experts and
// one back, over its pair, on its compute stream (24 in all); per MoE layer
// the gradients of its 2 local experts (8 d^2 parameters each) all-reduced
// with the other GPU holding them; the dense gradients (4 d^2 per MoE block,
// 12 d^2 per other block, 50257 d in the head) in one bucket over all four;
// the same with the gradients overlapped or not. The forward of an MoE
// layer: attention 2 x (8 d^2 s + 2 s^2 d) FLOPs (causal: the kernels do
// half of the 4 s^2 d products the model FLOPs count), experts 2 x 2 x
// 16 d^2 s;
// the optimizer reads and writes 32 bytes of every parameter a GPU holds.
func TestMixtureOfExperts(t *testing.T) {
	const d, vocab, s = 768.0, 50257.0, 2048.0
	dense := 6*4*d*d + 6*12*d*d + vocab*d
	type coll struct {
		kind, stream string
		bytes        int64
		ranks        string
	}
	for _, overlap := range []string{"true", "false"} {
		sc, err := loadOn(fourGPUs, `
name: moe
topology: topo.yaml
training:
  gpus: all
  model: gpt3-125m
  experts: {count: 4, top_k: 2, parallel: 2, every: 2}
  batch: 2
  steps: 1
  bucket: 1 GB
  overlap: `+overlap+"\n", 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, gpu := range []struct {
			name          string
			pair, holders string
		}{{"gpu0", "[0 1]", "[0 2]"}, {"gpu1", "[0 1]", "[1 3]"}} {
			want := map[coll]int{
				{"alltoall", gpu.name + "/compute", int64(2 * 2 * s * d * 2), gpu.pair}:  24,
				{"allreduce", gpu.name + "/comm", int64(2 * 8 * d * d * 2), gpu.holders}: 6,
				{"allreduce", gpu.name + "/comm", int64(dense * 2), "[0 1 2 3]"}:         1,
			}
			got := map[coll]int{}
			durations := map[string]sim.Time{}
			for _, th := range sc.Program.Threads {
				if th.Name != "train/"+gpu.name {
					continue
				}
				for _, op := range th.Ops {
					if op.Kind == sim.OpCollective {
						stream := sc.Program.StreamName(sc.Topology.Machine, op.Streams[op.Rank])
						got[coll{op.Coll.Name, stream, op.Coll.Bytes, fmt.Sprint(op.Coll.Ranks)}]++
					}
					durations[op.ID] = op.Duration
				}
			}
			if len(got) != len(want) {
				t.Errorf("overlap %s: collectives of %s: %v, want %v", overlap, gpu.name, got, want)
			}
			for c, n := range want {
				if got[c] != n {
					t.Errorf("overlap %s: %d x %s on %s of %d bytes over %s, want %d", overlap, got[c], c.kind, c.stream, c.bytes, c.ranks, n)
				}
			}
			p := "train/" + gpu.name + "/s0"
			for id, want := range map[string]float64{
				p + "/m0/fwd/L0/attn":    2 * (8*d*d*s + 2*s*s*d) / 1e15,
				p + "/m0/fwd/L0/experts": 2 * 2 * 16 * d * d * s / 1e15,
				p + "/m0/bwd/L0/experts": 2 * 2 * 2 * 16 * d * d * s / 1e15,
				p + "/m0/fwd/L1":         2 * (24*d*d*s + 2*s*s*d) / 1e15,
				p + "/optimizer":         (dense + 6*2*8*d*d) * 32 / 1e15,
			} {
				got, ok := durations[id]
				if !ok {
					t.Errorf("no op %s", id)
					continue
				}
				if diff := got.Seconds() - want; diff < -1e-12 || diff > 1e-12 {
					t.Errorf("%s: %v, want %.6g s", id, got, want)
				}
			}
		}
	}
}

func TestMixtureOfExpertsErrors(t *testing.T) {
	for _, c := range []struct{ extra, model, want string }{
		{"experts: {count: 8}", "[{params: 1e6, flops: 1 GFLOP}]", "s.yaml:5:12: training.experts: experts need a preset model"},
		{"experts: {count: 8}\n  tensor: 2", "gpt3-125m", "s.yaml:5:12: training.experts: experts with tensor: 2 are not modelled"},
		{"experts: {count: 8}\n  sharding: zero3", "gpt3-125m", "s.yaml:5:12: training.experts: experts with sharding: zero3 are not modelled"},
		{"experts: {count: 8}\n  sharding: zero1", "gpt3-125m", "s.yaml:5:12: training.experts: experts with a sharded optimizer (sharding: zero1 or zero2) are not modelled"},
		{"experts: {count: 6, parallel: 4}", "gpt3-125m", "s.yaml:5:33: training.experts.parallel: parallel 4 must divide both the 4 data-parallel ranks and the 6 experts; use one of 1, 2"},
		{"experts: {count: 8}\n  batch: 1000000\n  seq: 1000000", "gpt3-125m", "s.yaml:5:12: training.experts: each all-to-all would send "},
		{"experts: {count: 2, top_k: 3}", "gpt3-125m", "s.yaml:5:30: training.experts.top_k: top_k 3 is more than the 2 experts; want 1 to 2 (each token goes to top_k of the experts)"},
		// The default top_k, 2, over one expert: at count.
		{"experts: {count: 1}", "gpt3-125m", "s.yaml:5:20: training.experts.count: top_k 2 is more than the 1 expert; want 1 to 1 (each token goes to top_k of the experts)"},
	} {
		scen := "\nname: e\ntopology: topo.yaml\ntraining:\n  " + c.extra + "\n  gpus: all\n  model: " + c.model + "\n"
		_, err := loadOn(fourGPUs, scen, 0)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line starting %q", c.extra, err, c.want)
		}
	}
	// A forced algorithm is the all-reduces'; the all-to-alls keep theirs.
	sc, err := loadOn(fourGPUs, "name: e\ntopology: topo.yaml\ntraining: {gpus: all, model: gpt3-125m, experts: {count: 4}, algorithm: ring}\n", 0)
	if err != nil {
		t.Fatalf("experts with algorithm: ring: %v", err)
	}
	algos := map[string]bool{}
	for _, op := range sc.Program.Threads[0].Ops {
		if op.Kind == sim.OpCollective {
			algos[op.Coll.Name+"/"+op.Coll.Algorithm] = true
		}
	}
	// Four experts on four GPUs: each expert's gradients live on one GPU,
	// and NCCL discards a one-rank all-reduce in place (algorithm none).
	if len(algos) != 3 || !algos["allreduce/ring"] || !algos["alltoall/direct"] || !algos["allreduce/none"] {
		t.Errorf("experts with algorithm: ring: collectives %v, want allreduce/ring, allreduce/none and alltoall/direct", algos)
	}
}

// A training that cannot fit in GPU memory is run, with a warning. A GPU
// holds 16 bytes a parameter (mixed-precision Adam) of its share of the
// model, and one sample's activations: 34 s d a block (s d (10 + 24/t) with
// t-way tensor parallelism, 34 s d / t with sequence parallelism) and the
// head's 4 s (d + V) / t. An H100 has 80 GiB.
func TestTrainingMemoryWarning(t *testing.T) {
	const s, vocab, gib = 2048.0, 50257.0, float64(1 << 30)
	model := func(blocks, d float64) float64 { return blocks*12*d*d + vocab*d }
	head := func(d, tp float64) float64 { return 4 * s * (d + vocab) / tp }
	// GPT-3 13B (40 blocks, d 5140), one sample a GPU.
	p13 := model(40, 5140)
	a13 := 40*34*s*5140 + head(5140, 1)
	// GPT-3 6.7B (32 blocks, d 4096) over pairs, 6 samples: 22 s d a block
	// without sequence parallelism, 17 s d with it (90.0 and 81.9 GB).
	p67 := model(32, 4096) / 2
	a67 := 6 * (32*22*s*4096 + head(4096, 2))
	// With full recomputation a block keeps its input, 2 s d, and one
	// block's activations are live at a time; the head keeps its logits.
	a13r := 40*2*s*5140 + 34*s*5140 + head(5140, 1)
	// (So 6 samples of GPT-3 6.7B over pairs need 49.5 + 5.3 GiB: it fits.)
	// With sequence parallelism too, inputs and the live block split by
	// t = 2: 60 samples need 49.5 + 35.4 GiB.
	a67rsp60 := 60 * (32*2*s*4096/2 + 17*s*4096 + head(4096, 2))
	// GPT-3 350M (24 blocks, d 1024) with 64 experts of 8 d^2 in each block,
	// all on every GPU.
	p350 := 24*4*1024*1024 + vocab*1024 + 24*8*1024*1024*64.0
	a350 := 24*34*s*1024 + head(1024, 1)
	msgB := func(params, bytes, acts float64, advice string) string {
		return fmt.Sprintf("s.yaml:4:1: training: a GPU needs about %.4g GiB (model state %.4g GiB: %.4g billion parameters x %g bytes; activations %.4g GiB), more than the 80 GiB of gpu0 (H100-SXM) and 3 more GPUs: it would not fit; try %s",
			(params*bytes+acts)/gib, params*bytes/gib, params/1e9, bytes, acts/gib, advice)
	}
	msg := func(params, acts float64, advice string) string { return msgB(params, 16, acts, advice) }
	for _, c := range []struct {
		extra string
		want  string // "": no warning
	}{
		// The state alone is more than 80 GiB: only what shrinks it helps.
		{"model: gpt3-13b", msg(p13, a13, "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero1, zero2 or zero3")},
		{"model: gpt3-13b\n  recompute: full", msg(p13, a13r, "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero1, zero2 or zero3")},
		{"model: gpt3-13b\n  tensor: 4", ""},
		{"model: gpt3-13b\n  sharding: zero3", ""},
		// ZeRO-1 over 4 replicas keeps the bf16 weights and gradients
		// whole and a quarter of the 12 bytes of Adam: 7 bytes a
		// parameter, still 84 GiB; ZeRO-2 a quarter of the gradients too,
		// 5.5 bytes (66 GiB), which fits with recomputation's 1.5 GiB.
		{"model: gpt3-13b\n  sharding: zero1", msgB(p13, 7, a13, "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero2 or zero3")},
		{"model: gpt3-13b\n  sharding: zero2\n  recompute: full", ""},
		// FP8 training keeps its weights and gradients in bf16: 7 bytes.
		{"model: gpt3-13b\n  sharding: zero1\n  dtype: fp8", msgB(p13, 7, a13, "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero2 or zero3")},
		// fp32 training keeps its blocks' activations in 4 bytes: twice
		// the 34 s d of 16-bit training (the head's logits are fp32 in
		// both).
		{"model: gpt3-13b\n  dtype: fp32", msg(p13, 2*40*34*s*5140+head(5140, 1), "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero1, zero2 or zero3")},
		// Tensor 2 leaves 2 replicas: ZeRO-2 keeps the bf16 weights and
		// half of the other 14 bytes, 9 bytes for each of a GPU's half of
		// the parameters (54 GiB), and 4 samples' activations (35 GiB).
		{"model: gpt3-13b\n  tensor: 2\n  batch: 4\n  sharding: zero2", msgB(p13/2, 9, 4*(40*22*s*5140+head(5140, 2)), "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero3, sequence_parallel: true, recompute: full, a smaller batch")},
		{"model: gpt3-6.7b\n  tensor: 2\n  batch: 6", msg(p67, a67, "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero1, zero2 or zero3, sequence_parallel: true, recompute: full, a smaller batch")},
		{"model: gpt3-6.7b\n  tensor: 2\n  batch: 6\n  recompute: full", ""},
		{"model: gpt3-6.7b\n  tensor: 2\n  batch: 60\n  recompute: full\n  sequence_parallel: true", msg(p67, a67rsp60, "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero1, zero2 or zero3, a smaller batch")},
		{"model: gpt3-6.7b\n  tensor: 2\n  batch: 6\n  sequence_parallel: true", ""},
		{"model: gpt3-350m\n  experts: {count: 64, parallel: 1}", msg(p350, a350, "more expert-parallel ranks (experts: parallel)")},
		{"model: gpt3-350m\n  experts: {count: 64, parallel: 4}", ""},
	} {
		scen := "\nname: m\ntopology: topo.yaml\ntraining:\n  gpus: all\n  steps: 1\n  batch: 1\n  " + c.extra + "\n"
		scen = strings.Replace(scen, "  batch: 1\n", "", strings.Count(c.extra, "batch:"))
		checkMemoryWarning(t, c.extra, runWith(t, fourGPUs, scen, nil), c.want)
	}
}

// checkMemoryWarning requires the run's one memory warning to be want, or
// none for "".
func checkMemoryWarning(t *testing.T, what string, res *sim.Result, want string) {
	t.Helper()
	var warned []string
	for _, w := range res.Warnings {
		if strings.Contains(w, "would not fit") {
			warned = append(warned, w)
		}
	}
	switch {
	case want == "" && len(warned) > 0:
		t.Errorf("%q: %q, want no memory warning", what, warned)
	case want != "" && (len(warned) != 1 || warned[0] != want):
		t.Errorf("%q:\n%q\nwant\n%q", what, warned, want)
	}
}

// With GPUs of several sizes the warning names the smallest one that could
// not hold the training, and counts the others. GPT-3 2.7B (32 blocks, d
// 2560), two samples: 16 x 2.645e9 bytes of state and 2 x (32 x 34 s d + 4
// s (d + V)) of activations, 50.8 GiB: more than the L40S's 48 and the RTX
// 4090's 24, less than the H100's 80.
func TestTrainingMemoryWarningNamesTheSmallestGPU(t *testing.T) {
	topo := `
name: mixed
hosts: [{name: cpu0}]
gpus:
  - {name: big0, model: H100-SXM}
  - {name: mid1, model: L40S}
  - {name: big2, model: H100-SXM}
  - {name: small3, model: RTX-4090}
switches: [{name: sw}]
links:
  - {ends: [big0, sw], bandwidth: 50 GB/s}
  - {ends: [mid1, sw], bandwidth: 50 GB/s}
  - {ends: [big2, sw], bandwidth: 50 GB/s}
  - {ends: [small3, sw], bandwidth: 50 GB/s}
  - {ends: [sw, cpu0], bandwidth: 50 GB/s}
`
	res := runWith(t, topo, "name: m\ntopology: topo.yaml\ntraining: {gpus: all, model: gpt3-2.7b, batch: 2, steps: 1}\n", nil)
	const want = "more than the 24 GiB of small3 (RTX-4090) and 1 more GPU: it would not fit"
	if len(res.Warnings) == 0 || !strings.Contains(res.Warnings[0], want) {
		t.Errorf("warnings %q, want the first to say %q", res.Warnings, want)
	}
}

// A training states its work: on one GPU of 1000 TFLOP/s at full
// efficiency, with no memory time, optimizer or collectives to speak of,
// 4 layers of 10 GFLOP a sample make 3 x 40 GFLOP a sample of model FLOPs;
// 2 steps of 3 micro-steps of 8 samples are 48 samples, 5.76 TFLOP, which
// the GPU computes in 5.76 ms: MFU 1. Recomputing every layer adds a
// forward pass that model FLOPs do not count: MFU 3/4. A preset's tokens
// are its samples times seq.
func TestTrainingWork(t *testing.T) {
	for _, c := range []struct {
		extra string
		mfu   float64
	}{{"", 1}, {"\n  recompute: full", 0.75}} {
		scen := "name: w\ntopology: topo.yaml\ntraining:\n  gpus: 1\n  model: [{params: 25e6, flops: 10 GFLOP, count: 4}]\n  batch: 8\n  steps: 2\n  accumulation: 3\n  optimizer_bytes_per_param: 0" + c.extra + "\n"
		res := runWith(t, fourGPUs, scen, nil)
		w := res.Program.Work
		if w == nil || w.Steps != 2 || w.Samples != 48 || w.Tokens != 0 || w.ModelFLOPs != 5.76e12 || w.PeakFLOPs != 1e15 || w.DType != "bf16" || w.GPUs != 1 {
			t.Fatalf("%q: work %+v, want 2 steps, 48 samples, no tokens, 5.76e12 FLOP, 1e15 FLOP/s of bf16 on 1 GPU", c.extra, w)
		}
		if mfu, ok := w.MFU(res.Makespan); !ok || math.Abs(mfu-c.mfu) > 1e-6 {
			t.Errorf("%q: MFU %v (%v) over %s, want %v", c.extra, mfu, ok, res.Makespan, c.mfu)
		}
	}
	sc, err := loadOn(fourGPUs, "name: w\ntopology: topo.yaml\ntraining: {gpus: all, tensor: 2, model: gpt3-125m, seq: 1024, batch: 3, steps: 2}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	// Two replicas of 3 samples, two steps; GPT-3 125M: 12 blocks of d 768.
	const s, d, v = 1024.0, 768.0, 50257.0
	fwd := 12*(24*d*d*s+4*s*s*d) + 2*v*d*s
	if w := sc.Program.Work; w.Samples != 12 || w.Tokens != 12*1024 || math.Abs(w.ModelFLOPs/(3*12*fwd)-1) > 1e-12 || w.PeakFLOPs != 4e15 {
		t.Errorf("gpt3-125m: work %+v, want 12 samples, 12288 tokens, %g FLOP, 4e15 FLOP/s", w, 3*12*fwd)
	}
	// With every MLP (16 d^2 s FLOPs a sample) made experts of which each
	// token takes 2, the model FLOPs are the ones the tokens meet: twice
	// each MLP's. Four replicas of 3 samples, two steps.
	sc, err = loadOn(fourGPUs, "name: w\ntopology: topo.yaml\ntraining: {gpus: all, model: gpt3-125m, seq: 1024, batch: 3, steps: 2, experts: {count: 4, top_k: 2}}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	moe := fwd + 12*16*d*d*s
	if w := sc.Program.Work; w.Samples != 24 || math.Abs(w.ModelFLOPs/(3*24*moe)-1) > 1e-12 {
		t.Errorf("gpt3-125m with experts: work %+v, want 24 samples, %g FLOP", w, 3*24*moe)
	}
}

// Pipeline stages in a training run Megatron's 1F1B as pipeline: does: four
// stages of one layer of 10 GFLOP a sample, 100 samples a micro-batch, take
// 1 ms forward and 2 ms backward on 1000 TFLOP/s, so 8 micro-batches take
// (8 + 3) x 3 ms and each stage idles (p - 1) / (m + p - 1) = 3/11 of it;
// with one replica the gradients are not exchanged, and nothing else
// takes time. Sends of 1 kB cost microseconds, as pipeline:'s do.
func TestPipelinedTraining(t *testing.T) {
	scen := `
name: pp
topology: topo.yaml
training:
  gpus: all
  pipeline: 4
  pipeline_bytes: 10 B
  model: [{params: 25e6, flops: 10 GFLOP, count: 4}]
  batch: 100
  accumulation: 8
  steps: 1
  optimizer_bytes_per_param: 0
`
	res := runWith(t, fourGPUs, scen, nil)
	// The pipeline: generator runs the same schedule of kernels and sends.
	alone := runWith(t, fourGPUs, "name: p\ntopology: topo.yaml\npipeline: {gpus: 4, schedule: 1f1b, microbatches: 8, forward: 1 ms, backward: 2 ms, activation_bytes: 1000 B}\n", nil)
	if d := res.Makespan - 33*sim.Millisecond; d < 0 || d > 500*sim.Microsecond || res.Makespan != alone.Makespan {
		t.Errorf("step %s, want 33 ms and the sends' microseconds, as pipeline: takes (%s)", res.Makespan, alone.Makespan)
	}
	for g := range 4 {
		if got := 1 - float64(res.GPUs[g].Compute)/float64(res.Makespan); math.Abs(got-3.0/11) > 0.005 {
			t.Errorf("gpu%d idles %.4f, want 3/11", g, got)
		}
	}
	// Each stage holds one layer: gpu2 computes only L0.2.
	for _, op := range res.Program.Threads[2].Ops {
		if op.Kind == sim.OpKernel && op.Duration > 0 && !strings.Contains(op.ID, "/L0.2") {
			t.Errorf("%s on the third stage, which holds L0.2 only", op.ID)
		}
	}
}

// Interleaved, each stage's GPU holds two chunks of one layer each (1 ms
// forward and 2 ms backward a stage, as above, in halves): the step is
// the interleaved pipeline:'s, (8 + 3/2) x 3 ms and the transfers', and the
// bubble (p-1)/(vm+p-1) = 3/19. Stage 1 holds layers 1 and 5 of 8.
func TestInterleavedTraining(t *testing.T) {
	scen := `
name: pp
topology: topo.yaml
training:
  gpus: all
  pipeline: 4
  pipeline_chunks: 2
  pipeline_bytes: 10 B
  model: [{params: 25e6, flops: 5 GFLOP, count: 8}]
  batch: 100
  accumulation: 8
  steps: 1
  optimizer_bytes_per_param: 0
`
	res := runWith(t, fourGPUs, scen, nil)
	alone := runWith(t, fourGPUs, "name: p\ntopology: topo.yaml\npipeline: {gpus: 4, schedule: interleaved, chunks: 2, microbatches: 8, forward: 1 ms, backward: 2 ms, activation_bytes: 1000 B}\n", nil)
	ideal := 28500 * sim.Microsecond
	if res.Makespan < ideal || float64(res.Makespan) > float64(ideal)*(1+4.0/132)+float64(sim.Millisecond) || res.Makespan != alone.Makespan {
		t.Errorf("step %s, want 28.5 ms to 4/132 more, as pipeline: takes (%s)", res.Makespan, alone.Makespan)
	}
	for g := range 4 {
		if got := 1 - float64(res.GPUs[g].Compute)/float64(res.Makespan); math.Abs(got-3.0/19) > 0.006 { // and the transfers' microseconds
			t.Errorf("gpu%d idles %.4f, want 3/19", g, got)
		}
	}
	for _, op := range res.Program.Threads[1].Ops {
		if op.Kind == sim.OpKernel && op.Duration > 0 && !strings.Contains(op.ID, "/L0.1") && !strings.Contains(op.ID, "/L0.5") {
			t.Errorf("%s on the second stage, which holds L0.1 and L0.5", op.ID)
		}
	}
	// With equal layers and nothing else, the step is the interleaved
	// pipeline:'s of the same stages, chunks and micro-batches.
	for _, c := range []struct{ p, v, m int }{{2, 2, 2}, {2, 4, 6}, {4, 4, 4}, {4, 2, 12}} {
		flops := fmt.Sprintf("%g GFLOP", 10.0/float64(c.v))
		train := runWith(t, fourGPUs, "name: t\ntopology: topo.yaml\ntraining: {gpus: "+itoa(c.p)+", pipeline: "+itoa(c.p)+", pipeline_chunks: "+itoa(c.v)+", pipeline_bytes: 10 B, model: [{params: 25e6, flops: "+flops+", count: "+itoa(c.p*c.v)+"}], batch: 100, accumulation: "+itoa(c.m)+", steps: 1, optimizer_bytes_per_param: 0}\n", nil)
		pipe := runWith(t, fourGPUs, "name: p\ntopology: topo.yaml\npipeline: {gpus: "+itoa(c.p)+", schedule: interleaved, chunks: "+itoa(c.v)+", microbatches: "+itoa(c.m)+", forward: 1 ms, backward: 2 ms, activation_bytes: 1000 B}\n", nil)
		if train.Makespan != pipe.Makespan {
			t.Errorf("p=%d v=%d m=%d: training %s, pipeline: %s", c.p, c.v, c.m, train.Makespan, pipe.Makespan)
		}
	}
	// Every layout runs to its end (a transfer matched out of order on a
	// channel, or a channel shared by two directions, would deadlock),
	// and every GPU computes.
	for _, layout := range []string{"pipeline: 2, pipeline_chunks: 2", "pipeline: 2, pipeline_chunks: 3", "pipeline: 4, pipeline_chunks: 3", "pipeline: 2, pipeline_chunks: 2, tensor: 2", "pipeline: 2, pipeline_chunks: 4"} {
		for _, accum := range []string{"4", "8"} {
			for _, other := range []string{"overlap: true", "overlap: false, recompute: full"} {
				scen := "name: t\ntopology: topo.yaml\ntraining: {gpus: all, model: gpt3-125m, seq: 128, steps: 2, accumulation: " + accum + ", " + layout + ", " + other + "}\n"
				res := runWith(t, fourGPUs, scen, nil)
				for g := range 4 {
					if res.GPUs[g].Compute <= 0 {
						t.Errorf("%s: gpu%d computes nothing", scen, g)
					}
				}
			}
		}
	}
}

// With interleaved stages, gradients go out as in 1F1B: with overlap
// each bucket after its layers' last backward (a chunk's then), without
// it every chunk's after the stage's last backward (its first chunk's);
// the tied embedding's all-reduce after the stage's last backward on the
// first and last stages, after their buckets, never while they compute.
func TestInterleavedGradients(t *testing.T) {
	for _, overlap := range []string{"true", "false"} {
		scen := "name: t\ntopology: topo.yaml\ntraining: {gpus: all, model: gpt3-125m, seq: 512, pipeline: 2, pipeline_chunks: 2, accumulation: 4, steps: 1, bucket: 1 MB, overlap: " + overlap + "}\n"
		res := runWith(t, fourGPUs, scen, nil)
		for _, gpu := range []int{0, 2} { // the first and the last stage
			var lastBwd, firstBucket, embedding sim.Time
			firstBucket = math.MaxInt64
			buckets := 0
			for _, r := range res.Ops {
				switch {
				case strings.HasPrefix(r.ID, fmt.Sprintf("train/gpu%d/", gpu)) && strings.Contains(r.ID, "/bwd/"):
					lastBwd = max(lastBwd, r.End)
				case strings.HasPrefix(r.ID, "train/s0/bucket") && int(r.GPU) == gpu:
					firstBucket = min(firstBucket, r.Start)
					buckets++
				case strings.HasPrefix(r.ID, "train/s0/embedding") && int(r.GPU) == gpu:
					embedding = r.Start
				}
			}
			if buckets == 0 || embedding == 0 {
				t.Fatalf("overlap %s, gpu%d: %d buckets, embedding at %s", overlap, gpu, buckets, embedding)
			}
			if overlap == "false" && firstBucket < lastBwd || overlap == "true" && firstBucket >= lastBwd {
				t.Errorf("overlap %s, gpu%d: the first bucket starts at %s, the last backward ends at %s", overlap, gpu, firstBucket, lastBwd)
			}
			if embedding < lastBwd {
				t.Errorf("overlap %s, gpu%d: the embedding's all-reduce starts at %s, before the last backward ends at %s", overlap, gpu, embedding, lastBwd)
			}
		}
	}
}

// balancedSplit's runs, worked by hand: the least largest sum, and runs
// left over cut off the right.
func TestBalancedSplit(t *testing.T) {
	for _, c := range []struct {
		costs []sim.Time
		k     int
		want  []int
	}{
		{[]sim.Time{1, 1, 1, 1, 4}, 2, []int{0, 4, 5}},       // 4 | 4
		{[]sim.Time{5, 1, 1, 1, 1, 1}, 3, []int{0, 1, 2, 6}}, // 5 | 1 | 4: 5 at best, the first runs light
		{[]sim.Time{3, 3, 3}, 3, []int{0, 1, 2, 3}},          // one each
		{[]sim.Time{1, 1, 1, 1, 1, 1, 1, 1}, 4, []int{0, 2, 4, 6, 8}},
		{[]sim.Time{2, 7, 1, 1, 1, 6, 2}, 3, []int{0, 1, 4, 7}}, // 2 | 9 | 9: from the right
		{[]sim.Time{0, 0, 0, 9}, 2, []int{0, 1, 4}},             // 0 | 9
		{[]sim.Time{4e18, 4e18, 4e18}, 2, []int{0, 1, 3}},       // sums past int64 cap
		{[]sim.Time{sim.MaxTime, sim.MaxTime}, 1, []int{0, 2}},  // one run
	} {
		if got := balancedSplit(c.costs, c.k); !slices.Equal(got, c.want) {
			t.Errorf("%v in %d: %v, want %v", c.costs, c.k, got, c.want)
		}
	}
	// Against every split of up to 8 costs: k non-empty runs, the least
	// largest sum.
	rng := rand.New(rand.NewPCG(1, 2))
	var best func(costs []sim.Time, k int) sim.Time
	best = func(costs []sim.Time, k int) sim.Time {
		if k == 1 {
			sum := sim.Time(0)
			for _, c := range costs {
				sum += c
			}
			return sum
		}
		least := sim.MaxTime
		sum := sim.Time(0)
		for i := 0; i <= len(costs)-k; i++ {
			sum += costs[i]
			least = min(least, max(sum, best(costs[i+1:], k-1)))
		}
		return least
	}
	for range 3000 {
		costs := make([]sim.Time, 1+rng.IntN(8))
		for i := range costs {
			costs[i] = sim.Time(rng.IntN(6))
		}
		k := 1 + rng.IntN(len(costs))
		got := balancedSplit(costs, k)
		if len(got) != k+1 || got[0] != 0 || got[k] != len(costs) {
			t.Fatalf("%v in %d: %v", costs, k, got)
		}
		largest := sim.Time(0)
		for j := range k {
			if got[j+1] <= got[j] {
				t.Fatalf("%v in %d: %v has an empty run", costs, k, got)
			}
			sum := sim.Time(0)
			for _, c := range costs[got[j]:got[j+1]] {
				sum += c
			}
			largest = max(largest, sum)
		}
		if want := best(costs, k); largest != want {
			t.Fatalf("%v in %d: %v, largest run %d, the least is %d", costs, k, got, largest, want)
		}
	}
}

// pipeline_split: balanced gives the stages equal compute where the count
// does not: four layers of 10 GFLOP a sample and one of 40, 100 samples a
// micro-batch at 1000 TFLOP/s. Split evenly, stage 0 runs two small layers
// and stage 1 two and the big one (2 ms and 6 ms forward); balanced, stage
// 0 the four small ones and stage 1 the big one, 4 ms forward and 8 ms
// backward each: 8 micro-batches take (8 + 1) x 12 ms and the transfers'
// microseconds.
func TestBalancedPipelineSplit(t *testing.T) {
	scen := `
name: bal
topology: topo.yaml
training:
  gpus: 2
  pipeline: 2
  pipeline_split: ${split}
  pipeline_bytes: 10 B
  model: [{params: 1e6, flops: 10 GFLOP, count: 4}, {params: 1e6, flops: 40 GFLOP}]
  batch: 100
  accumulation: 8
  steps: 1
  optimizer_bytes_per_param: 0
vars: {split: even}
`
	res := runWith(t, fourGPUs, scen, map[string]string{"split": "balanced"})
	if d := res.Makespan - 108*sim.Millisecond; d < 0 || d > 500*sim.Microsecond {
		t.Errorf("balanced: step %s, want 108 ms and the transfers' microseconds", res.Makespan)
	}
	for _, op := range res.Program.Threads[1].Ops {
		if op.Kind == sim.OpKernel && op.Duration > 0 && !strings.Contains(op.ID, "/L4") {
			t.Errorf("%s on the second stage, which holds only L4 (the fifth layer)", op.ID)
		}
	}
	// Evenly, stage 1's 6 + 12 ms a micro-batch pace the pipeline.
	if even := runWith(t, fourGPUs, scen, nil); even.Makespan < 8*18*sim.Millisecond {
		t.Errorf("even: step %s, want at least 8 x 18 ms", even.Makespan)
	}
}

// pipeline_split: balanced weighs a preset's blocks by the FLOPs their
// causal attention kernels run, not the model FLOPs. gpt3-125m (d = 768,
// s = 2048, V = 50257) runs 24 d^2 s + 2 s^2 d = 35.43 GFLOP a block and
// sample of the 24 d^2 s + 4 s^2 d = 41.87 model GFLOP; its head 2 V d s =
// 158.1 GFLOP, 4.46 blocks as run (3.78 of model FLOPs). Three stages of 12
// blocks, the embedding (no FLOPs) and the head: as run, the least largest
// stage is 6 blocks (L11 and the head 5.46; L5-L10; the embedding and
// L0-L4), while by model FLOPs it is L10, L11 and the head (5.78 blocks)
// with L5-L9 and L0-L4 before, which would leave the middle stage 6 blocks
// as run (3.9% slower) and the last 6.46 (7.7%).
func TestBalancedSplitWeighsMaskedAttention(t *testing.T) {
	sc, err := loadOn(fourGPUs, "name: pp\ntopology: topo.yaml\ntraining: {gpus: 3, pipeline: 3, pipeline_split: balanced, model: gpt3-125m, batch: 8, accumulation: 3, steps: 1}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"embed L0 L1 L2 L3 L4", "L5 L6 L7 L8 L9 L10", "L11 head"}
	const d, s, v, batch = 768.0, 2048.0, 50257.0, 8.0
	fwd := map[string]float64{"L": batch * (24*d*d*s + 2*s*s*d) / 1e15, "head": batch * 2 * v * d * s / 1e15} // s at 1000 TFLOP/s
	for ti, th := range sc.Program.Threads {
		var got []string
		for _, op := range th.Ops {
			if op.Kind != sim.OpKernel || !strings.Contains(op.ID, "/m0/fwd/") {
				continue
			}
			name := op.ID[strings.LastIndex(op.ID, "/")+1:]
			got = append(got, name)
			kind := name
			if strings.HasPrefix(name, "L") {
				kind = "L"
			}
			if w, ok := fwd[kind]; ok && math.Abs(op.Duration.Seconds()-w) > 1e-12 { // times are whole picoseconds
				t.Errorf("%s: %.9g s, want %.9g s", op.ID, op.Duration.Seconds(), w)
			}
		}
		if ti >= len(want) {
			t.Errorf("stage %d (%s): want %d stages", ti, th.Name, len(want))
		} else if strings.Join(got, " ") != want[ti] {
			t.Errorf("stage %d (%s) runs %v forward, want %s", ti, th.Name, got, want[ti])
		}
	}
}

// Tensor groups within stages, and data-parallel groups within them: eight
// GPUs as 2 stages x 2 replicas x tensor 2 are, in the list's order (here
// gpu4 to gpu7, then gpu0 to gpu3), stage 0's replica 0 (gpu4, gpu5) and
// replica 1 (gpu6, gpu7), then stage 1's. Activations go to the same place
// of the next stage (with 2 micro-batches and 2 stages the second goes in
// the steady phase's exchange); each stage's gradients are all-reduced
// between its replicas.
func TestPipelineTensorAndDataGroups(t *testing.T) {
	eight := strings.Replace(fourGPUs, "gpus:\n", "gpus:\n  - {name: gpu4, model: H100-SXM}\n  - {name: gpu5, model: H100-SXM}\n  - {name: gpu6, model: H100-SXM}\n  - {name: gpu7, model: H100-SXM}\n", 1)
	for g := 4; g < 8; g++ {
		eight += "  - {ends: [gpu" + itoa(g) + ", nvs], bandwidth: 100 GB/s}\n  - {ends: [gpu" + itoa(g) + ", pcie], bandwidth: 50 GB/s}\n"
	}
	sc, err := loadOn(eight, "name: pp\ntopology: topo.yaml\ntraining: {gpus: all, tensor: 2, pipeline: 2, model: gpt3-125m, seq: 256, accumulation: 2, steps: 1}\n", 0)
	if err != nil {
		t.Fatal(err)
	}
	ranks := collRanks(sc.Program)
	// gpt3-125m's 12 blocks: the word embedding and L0-L5 on stage 0,
	// L6-L11 and the head on 1. The embedding all-reduces its output under
	// tensor in the forward pass, the head its input gradient in the
	// backward, and the tied copies' gradients go between the stages'
	// GPUs of the same place, in a communicator of their own.
	if _, ok := ranks["train/s0/m0/tp2/fwd/head"]; ok {
		t.Error("the head all-reduces in its forward pass")
	}
	if _, ok := ranks["train/s0/m0/tp0/bwd/embed"]; ok {
		t.Error("the embedding all-reduces in its backward pass")
	}
	for _, op := range sc.Program.Threads[0].Ops {
		if strings.HasPrefix(op.ID, "train/s0/embedding") && (op.Comm == 0 || sc.Program.Comms[op.Comm-1] != "train/embedding") {
			t.Errorf("%s in communicator %d, want the one named train/embedding", op.ID, op.Comm)
		}
		// A micro-batch of 8 samples (the default batch) of 256 tokens
		// sends 8 x 256 x 768 bf16 values to the next stage (d_model 768).
		if strings.HasPrefix(op.ID, "train/s0/act1.") && op.Coll.Bytes != 8*256*768*2 {
			t.Errorf("%s sends %d bytes, want %d", op.ID, op.Coll.Bytes, 8*256*768*2)
		}
	}
	for id, want := range map[string][]int{
		"train/s0/m0/tp0/fwd/L0/attn": {4, 5},
		"train/s0/m0/tp1/fwd/L5/mlp":  {6, 7},
		"train/s0/m0/tp2/fwd/L6/attn": {0, 1},
		"train/s0/m1/tp3/bwd/head":    {2, 3},
		"train/s0/act1.0/m0":          {4, 0},
		"train/s0/xchg0.3/i0":         {7, 3},
		"train/s0/grad0.1/m1":         {1, 5},
		"train/s0/bucket0/dp0":        {4, 6},
		"train/s0/bucket0/dp3":        {1, 3},
		"train/s0/m0/tp0/fwd/embed":   {4, 5},
		"train/s0/embedding0":         {4, 0},
		"train/s0/embedding3":         {7, 3},
	} {
		got := ranks[id]
		if len(got) != len(want) {
			t.Errorf("%s on GPUs %v, want %v", id, got, want)
			continue
		}
		for i := range got {
			if sc.Topology.Machine.GPUs[got[i]].Name != "gpu"+itoa(want[i]) {
				t.Errorf("%s on GPUs %v, want gpu%v", id, got, want)
				break
			}
		}
	}
}

// With pipeline stages each GPU holds its stage's layers and, under 1F1B,
// the activations of min(stages - s, micro-batches) micro-batches on stage
// s (Narayanan et al. 2021): GPT-3 13B (40 blocks, d 5140) in 4 stages of
// 10 blocks, 8 micro-batches of 3 samples. Stage 0 keeps 4 micro-batches:
// 16 x (10 x 12 d^2 + V d) bytes of state (its blocks and the word
// embedding) and 3 x 4 x 10 x 34 s d of activations, 91.1 GiB, over 80;
// stage 1 keeps 3 (77.2 GiB), and the last holds the head but one
// micro-batch. With four stages on four GPUs nothing is left
// to split the state further: the warning suggests shrinking the
// activations. With full recomputation a block keeps its input, 2 s d,
// for each micro-batch in flight, and one block's 34 s d are live at a
// time: 16 samples fit on stage 0 (51.1 + 16 x (4 x 10 x 2 s d + 34 s d)
// = 69 GiB). On two GPUs, two stages of 20 blocks and one micro-batch:
// stage 1 (with the head) needs more than stage 0 and is the one named;
// its 16 bytes a parameter alone are more than 80 GiB, and no GPU is left
// to split them.
func TestPipelineMemory(t *testing.T) {
	const s, d, v, gib = 2048.0, 5140.0, 50257.0, float64(1 << 30)
	msg := func(stage int, params, acts float64, gpu, advice string) string {
		return fmt.Sprintf("s.yaml:4:1: training: a GPU of pipeline stage %d needs about %.4g GiB (model state %.4g GiB: %.4g billion parameters x 16 bytes; activations %.4g GiB), more than the 80 GiB of %s: it would not fit; try %s",
			stage, (16*params+acts)/gib, 16*params/gib, params/1e9, acts/gib, gpu, advice)
	}
	params := 10*12*d*d + v*d // and the word embedding
	last := 20*12*d*d + v*d
	for _, c := range []struct{ extra, want string }{
		{"gpus: all\n  batch: 3\n  accumulation: 8", msg(0, params, 3*4*10*34*s*d, "gpu0 (H100-SXM)", "recompute: full, a smaller batch")},
		{"gpus: all\n  batch: 16\n  accumulation: 8\n  recompute: full", ""},
		{"gpus: 2\n  pipeline: 2\n  batch: 1\n  accumulation: 1", msg(1, last, 20*34*s*d+4*s*(d+v), "gpu1 (H100-SXM) and 1 more GPU", "more GPUs, or GPUs with more memory")},
		// Two stages of two replicas: stage 0 holds two micro-batches (the
		// last's one and the head's logits: 7.1 GiB); ZeRO-1 and -2 could
		// shard the state over the replicas, ZeRO-3 is not modelled with
		// stages.
		{"gpus: all\n  pipeline: 2\n  batch: 1\n  accumulation: 2", msg(0, last, 2*20*34*s*d, "gpu0 (H100-SXM) and 3 more GPUs", "more tensor parallelism (tensor:), more pipeline stages (pipeline:), sharding: zero1 or zero2")},
		// Interleaved with 2 chunks: stage 0 holds blocks 0-4 and 20-24
		// (and the embedding) and has run (4-0-1) x 2 + (2-1) x 4 = 10
		// forwards of a chunk, each with 5 blocks' activations, when its
		// first backward starts, with one more in flight: 11 x 5 blocks.
		// Stages 1 and 2 (9 and 7 chunks in flight, 47.2 GiB of state)
		// need 92 and 82 GiB; stage 3 holds 4 passes of its first chunk
		// and one of its last, with the head's logits: 77.4 GiB.
		{"gpus: all\n  batch: 3\n  accumulation: 8\n  pipeline_chunks: 2", msg(0, params, 3*11*5*34*s*d, "gpu0 (H100-SXM) and 2 more GPUs", "recompute: full, a smaller batch")},
		// With as many micro-batches as stages every forward runs first:
		// each stage holds 4 micro-batches x 2 chunks of 5 blocks, and the
		// last the head's logits too.
		{"gpus: all\n  batch: 3\n  accumulation: 4\n  pipeline_chunks: 2", msg(3, params, 3*4*(10*34*s*d+4*s*(d+v)), "gpu3 (H100-SXM) and 3 more GPUs", "recompute: full, a smaller batch")},
	} {
		scen := "\nname: m\ntopology: topo.yaml\ntraining:\n  pipeline: 4\n  model: gpt3-13b\n  steps: 1\n  " + c.extra + "\n"
		if strings.Contains(c.extra, "pipeline:") {
			scen = strings.Replace(scen, "  pipeline: 4\n", "", 1)
		}
		checkMemoryWarning(t, c.extra, runWith(t, fourGPUs, scen, nil), c.want)
	}
}

// Interleaved stages hold their chunks' activations as the schedule runs
// them, not equal shares. GPT-3 2.7B (32 blocks, d 2560) in 4 stages of 3
// chunks splits into 12 virtual stages of 2 or 3 blocks (the embedding
// with the first, the head with the last): stage 0 holds 2, 3 and 3
// blocks, stage 1 3, 3 and 2, stage 2 3, 2 and 3. Worked by hand through
// the order of TestInterleavedOrder's rules with 8 micro-batches, the
// most each holds at once is 38, 39 and 30 blocks' 34 s d (stage 1 after
// its 17th forward: 8 passes of chunk 0 and 5 of chunk 1), and stage 3 23
// blocks and the head's logits. 16 samples: stage 1 needs 16 x 39 x 34 s
// d and 16 bytes for each of its 8 x 12 d^2 parameters, 113 GiB; stages
// 0 and 2 more than 80, stage 3 78.8 GiB. (An equal share of the 13
// passes the warm-up holds would put stage 1 at 34.7 blocks and stage 0,
// at 40, first.)
func TestInterleavedMemory(t *testing.T) {
	const s, d, gib = 2048.0, 2560.0, float64(1 << 30)
	params, acts := 8*12*d*d, 16*39*34*s*d
	want := fmt.Sprintf("s.yaml:4:1: training: a GPU of pipeline stage 1 needs about %.4g GiB (model state %.4g GiB: %.4g billion parameters x 16 bytes; activations %.4g GiB), more than the 80 GiB of gpu1 (H100-SXM) and 2 more GPUs: it would not fit; try recompute: full, a smaller batch",
		(16*params+acts)/gib, 16*params/gib, params/1e9, acts/gib)
	scen := "\nname: m\ntopology: topo.yaml\ntraining:\n  gpus: all\n  model: gpt3-2.7b\n  pipeline: 4\n  pipeline_chunks: 3\n  accumulation: 8\n  batch: 16\n  steps: 1\n"
	checkMemoryWarning(t, "gpt3-2.7b in 4 x 3", runWith(t, fourGPUs, scen, nil), want)
}

// What pipeline stages in a training refuse, each at the key's value
// (columns counted by hand in the one-line training below).
func TestPipelinedTrainingErrors(t *testing.T) {
	for _, c := range []struct{ extra, want string }{
		{"pipeline: 3", "s.yaml:4:53: training.pipeline: 3 stages of tensor-parallel groups of 1 do not divide the 4 GPUs training; use one of 1, 2, 4"},
		{"pipeline: 2, tensor: 4", "s.yaml:4:53: training.pipeline: 2 stages of tensor-parallel groups of 4 do not divide the 4 GPUs training; use one of 1"},
		{"pipeline: 2, sharding: zero3", "s.yaml:4:53: training.pipeline: pipeline stages with sharding: zero3 are not modelled"},
		{"pipeline: 2, experts: {count: 4}", "s.yaml:4:53: training.pipeline: pipeline stages with experts are not modelled"},
		{"pipeline: 2, model: [{params: 1e6, flops: 1 GFLOP, count: 2}]", "s.yaml:4:35: training.pipeline: with listed layers the pipeline needs pipeline_bytes"},
		{"pipeline_bytes: 1 MB", "s.yaml:4:59: training.pipeline_bytes: pipeline_bytes needs pipeline: 2 or more stages"},
		{"pipeline: 4, pipeline_bytes: 1 MB, model: [{params: 1e6, flops: 1 GFLOP, count: 3}]", "s.yaml:4:35: training.pipeline: 4 stages need at least as many layers; the model has 3"},
		{"pipeline_chunks: 2", "s.yaml:4:60: training.pipeline_chunks: pipeline_chunks needs pipeline: 2 or more stages"},
		{"pipeline_split: balanced", "s.yaml:4:59: training.pipeline_split: pipeline_split: balanced needs pipeline: 2 or more stages (with one, the even split is the only one)"},
		{"pipeline: 2, pipeline_split: uneven", "s.yaml:4:72: training.pipeline_split: "},
		{"pipeline: 2, tensor: 2, pipeline_split: balanced", "s.yaml:4:83: training.pipeline_split: pipeline_split: balanced needs tensor: 1"},
		{"pipeline: 2, pipeline_chunks: 2, accumulation: 2, pipeline_split: balanced", "s.yaml:4:109: training.pipeline_split: pipeline_split: balanced with pipeline_chunks is not modelled"},
		{"overlap_param_gather: true", "s.yaml:4:65: training.overlap_param_gather: overlap_param_gather needs sharding: zero1 or zero2"},
		{"pipeline: 2, pipeline_chunks: 2, accumulation: 3", "s.yaml:4:90: training.accumulation: the interleaved schedule (pipeline_chunks) runs micro-batches (accumulation) in groups of the 2 stages: 3 is not a multiple of 2; use 2 or 4"},
		{"pipeline: 4, pipeline_chunks: 2", "s.yaml:4:3: training: the interleaved schedule (pipeline_chunks) runs micro-batches (accumulation) in groups of the 4 stages: 1 is not a multiple of 4; use 4"},
		{"pipeline: 4, pipeline_chunks: 4, accumulation: 4", "s.yaml:4:73: training.pipeline_chunks: 4 stages of 4 chunks need at least 16 layers; the model has 12"},
		{"pipeline: 2, pipeline_chunks: 0", "s.yaml:4:73: training.pipeline_chunks: 0 is out of range"},
		// A tensor that is not a divisor is said once, at tensor (a
		// tensor of 0 divided by zero). 1e30 B is 9.095e17 TiB; 2 x 1 PB,
		// 1819 TiB.
		{"tensor: 0, pipeline: 2", "s.yaml:4:51: training.tensor: 0 is out of range"},
		{"tensor: 3, pipeline: 2", "s.yaml:4:51: training.tensor: 3 does not divide the 4 GPUs"},
		{"pipeline: 2, pipeline_bytes: 1e30 B", "s.yaml:4:72: training.pipeline_bytes: 9.095e+17 TiB a sample is more than gpusim's limit of 1 PB"},
		{"pipeline: 2, pipeline_bytes: 1 PB, batch: 2", "s.yaml:3:1: training: each pipeline send would move 1819 TiB, more than gpusim's limit of 1 PB"},
	} {
		scen := "name: e\ntopology: topo.yaml\ntraining:\n  {gpus: all, steps: 1, model: gpt3-125m, " + c.extra + "}\n"
		if strings.Contains(c.extra, "model:") {
			scen = strings.Replace(scen, "model: gpt3-125m, ", "", 1)
		}
		_, err := loadOn(fourGPUs, scen, 0)
		if err == nil || !strings.HasPrefix(err.Error(), c.want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: %v; want one line starting %q", c.extra, err, c.want)
		}
	}
	// The defaults said out loud, as the README's example does, load with
	// one stage.
	scen := "name: e\ntopology: topo.yaml\ntraining:\n  {gpus: all, steps: 1, model: gpt3-125m, pipeline: 1, pipeline_chunks: 1, pipeline_split: even}\n"
	if _, err := loadOn(fourGPUs, scen, 1e7); err != nil {
		t.Errorf("the defaults with one stage: %v", err)
	}
}

// ZeRO-3 prefetches as FSDP does: in the backward pass the next layer's
// gather is issued as a layer's backward begins, before its gradients'
// reduce-scatter (a bucket a layer here), so with gathers and
// reduce-scatters shorter than a layer's backward each backward kernel
// starts as the one before it ends; in the forward pass a layer's gather
// waits for the forward two layers back (the rate limiter), not running
// all at once at the start of the step.
func TestZero3PrefetchesALayerAhead(t *testing.T) {
	res := runWith(t, fourGPUs, `
name: zero3
topology: topo.yaml
training:
  gpus: all
  model: [{params: 1e6, flops: 100 GFLOP, count: 5}]
  batch: 4
  steps: 1
  bucket: 1 MB
  sharding: zero3
`, nil)
	rec := recordsByID(res)
	for i := 3; i >= 0; i-- {
		prev, cur := rec[fmt.Sprintf("train/gpu0/s0/m0/bwd/L0.%d", i+1)], rec[fmt.Sprintf("train/gpu0/s0/m0/bwd/L0.%d", i)]
		if cur.ID == "" || prev.ID == "" {
			t.Fatalf("no backward kernel of layer %d or %d", i, i+1)
		}
		if cur.Start != prev.End {
			t.Errorf("layer %d's backward starts %s after layer %d's ends: its gather did not hide", i, cur.Start-prev.End, i+1)
		}
	}
	for i := 2; i < 5; i++ {
		g, f := rec[fmt.Sprintf("train/s0/m0/gather-fwd/L0.%d@gpu0", i)], rec[fmt.Sprintf("train/gpu0/s0/m0/fwd/L0.%d", i-2)]
		if g.ID == "" || f.ID == "" {
			t.Fatalf("no gather of layer %d or forward of layer %d", i, i-2)
		}
		if g.Start < f.End {
			t.Errorf("layer %d's gather starts at %s, before layer %d's forward ends at %s", i, g.Start, i-2, f.End)
		}
	}
}

// A CUDA graph of one rank's part of a collective (vLLM's decode, one
// process a GPU) runs on that rank's stream alone: it was taken for the
// first rank's, so rank gpu1's graph joined gpu0's stream and its second
// launch deadlocked. Each thread issues 2 launches of a kernel and its
// part, and a sync after each: 6 ops, none added to join streams.
func TestGraphOfOneRanksCollective(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: g\ntopology: topo.yaml\nthreads:\n")
	for r := 0; r < 2; r++ {
		fmt.Fprintf(&b, `  - name: r%d
    ops:
      - repeat:
          count: 2
          ops:
            - repeat:
                count: 1
                graph: true
                ops:
                  - kernel: {id: k%d, stream: gpu%d/compute, duration: 10 us}
                  - allreduce: {id: ar, gpus: [gpu0, gpu1], rank: gpu%d, bytes: 16 KiB, stream: compute}
            - sync: {stream: gpu%d/compute}
`, r, r, r, r, r)
	}
	res := runWith(t, fourGPUs, b.String(), nil)
	if n := res.Program.NumOps(); n != 12 {
		t.Errorf("%d ops, want 12: a one-rank graph has one stream to join", n)
	}
}

// Without a sync between steps, ZeRO-3's next step gathers its first
// layers only after the optimizer has updated the shards: they ran under
// it, reading shards not yet updated.
func TestZero3GathersAfterTheUpdate(t *testing.T) {
	res := runWith(t, fourGPUs, `
name: zero3
topology: topo.yaml
training:
  gpus: all
  model: [{params: 1e6, flops: 100 GFLOP, count: 3}]
  batch: 4
  steps: 2
  sync_every_step: false
  sharding: zero3
`, nil)
	rec := recordsByID(res)
	opt := rec["train/gpu0/s0/optimizer"]
	if opt.ID == "" {
		t.Fatal("no optimizer of step 0")
	}
	for i := 0; i < 3; i++ {
		g := rec[fmt.Sprintf("train/s1/m0/gather-fwd/L0.%d@gpu0", i)]
		if g.ID == "" {
			t.Fatalf("no gather of layer %d in step 1", i)
		}
		if g.Start < opt.End {
			t.Errorf("step 1's gather of layer %d starts at %s, before step 0's optimizer ends at %s", i, g.Start, opt.End)
		}
	}
}

// recordsByID indexes a run's records by op id.
func recordsByID(res *sim.Result) map[string]sim.OpRecord {
	rec := map[string]sim.OpRecord{}
	for _, r := range res.Ops {
		rec[r.ID] = r
	}
	return rec
}

// The algorithms and protocols a refused forced choice offers are exactly
// those with which the block loads: each is tried on its own here, not
// through the message's code. A training's choice applies to its
// all-gathers and reduce-scatters too (tree and nvls run all-reduce only),
// and where neither forced key alone can change, the pairs are offered.
func TestForcedChoicesOfferedLoad(t *testing.T) {
	loads := func(topo, block, algo, proto string) error {
		src := fmt.Sprintf("name: f\ntopology: %s\n%s\n", topo, block)
		if algo != "" {
			src += "  algorithm: " + algo + "\n"
		}
		if proto != "" {
			src += "  protocol: " + proto + "\n"
		}
		_, err := Load("f.yaml", []byte(src), Options{})
		return err
	}
	zero2 := "training: \n  gpus: 8\n  model: gpt3-125m\n  sharding: zero2"
	infer := "inference:\n  gpus: 8\n  model: gpt3-125m\n  tensor: 4"
	for _, tc := range []struct {
		topo, block, algo, proto string
		wantKey                  string
	}{
		{"dgx-h100", zero2, "direct", "", "algorithm"},
		{"pcie-8x-4090", zero2, "nvls", "", "algorithm"},
		{"pcie-8x-4090", zero2, "nvls", "ll128", "algorithm"},
		{"dgx-h100", infer, "nvls", "ll", "algorithm"},
	} {
		err := loads(tc.topo, tc.block, tc.algo, tc.proto)
		if err == nil {
			t.Errorf("%s %s/%s: loads; want it refused", tc.topo, tc.algo, tc.proto)
			continue
		}
		msg := err.Error()
		kind := strings.Fields(tc.block)[0]
		if want := ": " + strings.TrimSuffix(kind, ":") + "." + tc.wantKey + ": "; !strings.Contains(msg, want) || strings.Count(msg, "\n") > 0 {
			t.Errorf("%s %s/%s: %q; want one line at %s", tc.topo, tc.algo, tc.proto, msg, want)
		}
		// What loads, one key changed at a time, then both.
		var algos, protos, pairs []string
		for _, a := range models.Algorithms {
			if tc.algo != "" && a != tc.algo && loads(tc.topo, tc.block, a, tc.proto) == nil {
				algos = append(algos, a)
			}
		}
		for _, p := range models.Protocols {
			if tc.proto != "" && p != tc.proto && loads(tc.topo, tc.block, tc.algo, p) == nil {
				protos = append(protos, p)
			}
		}
		var want string
		list := func(l []string) string {
			if len(l) == 1 {
				return l[0]
			}
			return "one of " + strings.Join(l, ", ")
		}
		switch {
		case algos != nil && protos != nil:
			want = "want algorithm " + list(algos) + ", or protocol " + list(protos) + " ("
		case algos != nil:
			want = "want algorithm " + list(algos) + " ("
		case protos != nil:
			want = "want protocol " + list(protos) + " ("
		default:
			var as, ps []string
			for _, a := range models.Algorithms {
				for _, p := range models.Protocols {
					if a != tc.algo && p != tc.proto && loads(tc.topo, tc.block, a, p) == nil {
						pairs = append(pairs, a+" with "+p)
						if !slices.Contains(as, a) {
							as = append(as, a)
						}
						if !slices.Contains(ps, p) {
							ps = append(ps, p)
						}
					}
				}
			}
			if len(pairs) != len(as)*len(ps) {
				t.Fatalf("%s %s/%s: the pairs that load, %v, are not every algorithm of %v with every protocol of %v: extend the test", tc.topo, tc.algo, tc.proto, pairs, as, ps)
			}
			want = "want another algorithm and protocol both: algorithm " + list(as) + " with protocol " + list(ps) + " ("
		}
		if !strings.Contains(msg, want) {
			t.Errorf("%s %s/%s: %q; want it to offer what loads: %q", tc.topo, tc.algo, tc.proto, msg, want)
		}
	}
}

// TestTrainingSendsAtLeastBF16: what GPUs send each other (tensor-parallel
// all-reduces of b s d values, pipeline activations, gathered weights) is
// in the dtype but at least bf16: FP8 training computes its GEMMs in FP8
// and keeps activations and weights in bf16. gpt3-125m (d 768, V 50257),
// one sample of 128 tokens: a block's all-reduce is 128 x 768 values,
// 196,608 bytes in bf16 and fp8, 393,216 in fp32; under ZeRO-1 over 4
// GPUs the head's bucket, its V d weights, is gathered as 77,194,752 bytes
// in bf16 and fp8.
func TestTrainingSendsAtLeastBF16(t *testing.T) {
	topo := strings.ReplaceAll(fourGPUs, "peak: {bf16: 1000 TFLOP/s}", "peak: {bf16: 1000 TFLOP/s, fp8: 2000 TFLOP/s, fp32: 100 TFLOP/s}")
	collBytes := func(extra, prefix string) map[int64]bool {
		t.Helper()
		sc, err := loadOn(topo, "name: d\ntopology: topo.yaml\ntraining:\n  gpus: all\n  model: gpt3-125m\n  seq: 128\n  batch: 1\n  steps: 1\n  "+extra+"\n", 1e7)
		if err != nil {
			t.Fatal(err)
		}
		got := map[int64]bool{}
		for _, op := range sc.Program.Threads[0].Ops {
			if op.Kind == sim.OpCollective && strings.Contains(op.ID, prefix) {
				got[op.Coll.Bytes] = true
			}
		}
		return got
	}
	for dtype, want := range map[string]int64{"bf16": 196_608, "fp8": 196_608, "fp32": 393_216} {
		got := collBytes("tensor: 2\n  dtype: "+dtype, "/L3/")
		if len(got) != 1 || !got[want] {
			t.Errorf("tensor 2, %s: a block's all-reduces move %v bytes, want %d", dtype, got, want)
		}
	}
	for _, dtype := range []string{"bf16", "fp8"} {
		if got := collBytes("sharding: zero1\n  dtype: "+dtype, "/gather"); !got[50257*768*2] {
			t.Errorf("zero1, %s: gathers of %v bytes, want the head's 77,194,752 among them", dtype, got)
		}
	}
}

// TestTensorParallelBlocksSplitByTheirWork: under tensor parallelism a
// preset block's attention and MLP kernels each run their own FLOPs, not
// half the layer's each. gpt3-125m (d 768), 128 tokens, tensor 2, at
// 10^15 FLOP/s with memory that never bounds: the MLP's 16 s d^2 / 2 =
// 603,979,776 FLOPs take 603.98 ns; attention's (8 s d^2 + 2 s^2 d) / 2 =
// 314,572,800 (the causal half of its products) take 314.57 ns; backward
// twice each.
func TestTensorParallelBlocksSplitByTheirWork(t *testing.T) {
	sc, err := loadOn(fourGPUs, "name: tp\ntopology: topo.yaml\ntraining:\n  gpus: all\n  tensor: 2\n  model: gpt3-125m\n  seq: 128\n  batch: 1\n  steps: 1\n", 1e7)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]sim.Time{}
	for _, op := range sc.Program.Threads[0].Ops {
		if op.Kind == sim.OpKernel && strings.Contains(op.ID, "/L3/") {
			got[op.ID[strings.LastIndex(op.ID, "/s0/")+4:]] = op.Duration
		}
	}
	near := func(d sim.Time, ns float64) bool { return math.Abs(d.Seconds()*1e9-ns) < 0.01 }
	for id, ns := range map[string]float64{"m0/fwd/L3/attn": 314.5728, "m0/fwd/L3/mlp": 603.979776, "m0/bwd/L3/attn": 629.1456, "m0/bwd/L3/mlp": 1207.959552} {
		if d, ok := got[id]; !ok || !near(d, ns) {
			t.Errorf("%s: %v (of %v), want %.4f ns", id, d, got, ns)
		}
	}
}

// TestMoEAttentionBytes: an MoE block's attention kernel moves its own
// weights (the block's 12 d^2 less the MLP's 8 d^2) and attention's 13 of
// the block's 34 s d activation bytes, the MLP's being the experts'.
// gpt3-125m (d 768), 128 tokens, bf16, on memory of 10^15 B/s with
// compute that never bounds: 2 x 4 x 768^2 + 13 x 128 x 768 = 5,996,544
// bytes, 5.9965 ns forward.
func TestMoEAttentionBytes(t *testing.T) {
	topo := strings.ReplaceAll(fourGPUs, "peak: {bf16: 1000 TFLOP/s}", "peak: {bf16: 1000000000 TFLOP/s}")
	sc, err := loadOn(topo, "name: moe\ntopology: topo.yaml\ntraining:\n  gpus: all\n  model: gpt3-125m\n  seq: 128\n  batch: 1\n  steps: 1\n  experts: {count: 4}\n", 1e7)
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, op := range sc.Program.Threads[0].Ops {
		if op.Kind == sim.OpKernel && strings.HasSuffix(op.ID, "/m0/fwd/L0/attn") {
			if ns := op.Duration.Seconds() * 1e9; math.Abs(ns-5.996544) > 0.001 {
				t.Errorf("%s: %.4f ns, want 5.9965", op.ID, ns)
			}
			return
		}
		if op.Kind == sim.OpKernel {
			ids = append(ids, op.ID)
		}
	}
	t.Errorf("no forward attention kernel of L0 among %q", ids)
}

// TestTensorSplitsHeadsWhole: tensor parallelism splits a preset's
// attention heads whole (GPT-3 125M has 12, Brown et al. 2020 Table 2.1):
// tensor 8 is refused for training and inference, with the degrees that
// divide both the 8 GPUs and the heads, as is the default tensor of all
// 8 GPUs for inference; tensor 4 runs.
func TestTensorSplitsHeadsWhole(t *testing.T) {
	var gpus, links strings.Builder
	for i := 0; i < 8; i++ {
		fmt.Fprintf(&gpus, "  - {name: gpu%d, model: H100-SXM}\n", i)
		fmt.Fprintf(&links, "  - {ends: [gpu%d, nvs], type: nvlink4, count: 18}\n  - {ends: [gpu%d, cpu0], type: pcie5x16}\n", i, i)
	}
	topo := "name: eight\nhosts: [{name: cpu0}]\ngpus:\n" + gpus.String() + "switches: [{name: nvs, kind: nvswitch}]\nlinks:\n" + links.String()
	for _, c := range []struct{ block, want string }{
		{"training: {gpus: all, model: gpt3-125m, tensor: 8}", "s.yaml:3:49: training.tensor: 8 does not divide gpt3-125m's 12 attention heads, which tensor parallelism splits whole (Megatron-LM and vLLM refuse it); use one of 1, 2, 4"},
		{"inference: {gpus: all, model: gpt3-125m, tensor: 8}", "s.yaml:3:50: inference.tensor: 8 does not divide gpt3-125m's 12 attention heads, which tensor parallelism splits whole (Megatron-LM and vLLM refuse it); use one of 1, 2, 4"},
		{"inference: {gpus: all, model: gpt3-125m}", "s.yaml:3:31: inference.model: with tensor: 8 (all the GPUs, the default), 8 does not divide gpt3-125m's 12 attention heads, which tensor parallelism splits whole (Megatron-LM and vLLM refuse it); use one of 1, 2, 4; give tensor:"},
		{"training: {gpus: all, model: gpt3-125m, tensor: 4}", ""},
		// Not divisible by the GPUs: that alone is said.
		{"training: {gpus: all, model: gpt3-125m, tensor: 5}", "s.yaml:3:49: training.tensor: 5 does not divide the 8 GPUs training into tensor-parallel groups; use one of 1, 2, 4, 8"},
		// Stages that do not fit: that alone is said.
		{"training: {gpus: all, model: gpt3-125m, pipeline: 2, tensor: 8}", "s.yaml:3:51: training.pipeline: 2 stages of tensor-parallel groups of 8 do not divide the 8 GPUs training; use one of 1"},
		{"inference: {gpus: all, model: gpt3-125m, tensor: 4}", ""},
	} {
		_, err := loadOn(topo, "name: x\ntopology: topo.yaml\n"+c.block+"\n", 1e7)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.block, err)
		case c.want != "" && (err == nil || err.Error() != c.want):
			t.Errorf("%s: %v\nwant %s", c.block, err, c.want)
		}
	}
}

// No framework trains in int8: a training's dtype: int8 is refused where
// it is written.
func TestTrainingRefusesInt8(t *testing.T) {
	_, err := loadOn(fourGPUs, "name: x\ntopology: topo.yaml\ntraining: {gpus: all, model: gpt3-125m, dtype: int8}\n", 1e7)
	if want := "s.yaml:3:48: training.dtype: int8 is for inference; a training computes in fp64, fp32, tf32, fp16, bf16 or fp8"; err == nil || err.Error() != want {
		t.Errorf("%v\nwant %s", err, want)
	}
}
