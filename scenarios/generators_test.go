package scenarios

import (
	"math"
	"strings"
	"testing"

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
hosts: [{name: cpu0, api_overhead: 0 us, graph_launch: 10 us}]
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
	// Each layer: forward 1e12 FLOP at 1000 TFLOP/s = 1 ms, backward 2 ms;
	// its 50 MB of bf16 gradients close a bucket. A ring all-reduce of 50 MB
	// over 4 GPUs at 100 GB/s: 8.4 us, then 6 steps of 3.4 us and 12.5 MB.
	// The kernels leave the all-reduce the SMs it claims, so they do not
	// slow each other. With overlap, three buckets hide under the backward
	// pass: the step is 4 + 8 ms of compute plus the last bucket.
	ar := 8.4 + 6*(3.4+12.5e6/100e9*1e6)
	res := runWith(t, fourGPUs, scen, nil)
	want := sim.Time((12000 + ar) * 1e6)
	if d := res.Makespan - want; d < -2 || d > 2 {
		t.Errorf("overlapped step %s, want compute plus the last bucket, %s", res.Makespan, want)
	}
	// Without overlap, all four buckets follow the backward pass.
	res = runWith(t, fourGPUs, scen, map[string]string{"overlap": "false"})
	want = sim.Time((12000 + 4*ar) * 1e6)
	if d := res.Makespan - want; d < -8 || d > 8 {
		t.Errorf("step without overlap %s, want compute plus four buckets, %s", res.Makespan, want)
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
	kinds := map[string]int{}
	for _, r := range res.Ops {
		if r.Coll != nil && r.GPU == 0 {
			kinds[r.Coll.Name]++
		}
	}
	// Gathers before each layer's forward and backward; one bucket of
	// gradients reduce-scattered.
	if kinds["allgather"] != 6 || kinds["reducescatter"] != 1 || kinds["allreduce"] != 0 {
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
