package sim_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"

	"gpusim/sim"
)

// Two GPUs load from one socket whose memory (12 GB/s) is slower than their
// two links (10 GB/s each, on their own switch ports to the host): the
// bottleneck names the memory, full, before the busiest link, at 6/10.
func TestBottleneckNamesABusierMemoryThanEveryLink(t *testing.T) {
	topo := `
name: shared-memory
hosts: [{name: cpu0, api_overhead: 0 us, memory_bandwidth: 12 GB/s}]
gpus: [{name: gpu0, model: H100-SXM, copy_overhead: 0 us}, {name: gpu1, model: H100-SXM, copy_overhead: 0 us}]
links:
  - {ends: [gpu0, cpu0], bandwidth: 10 GB/s}
  - {ends: [gpu1, cpu0], bandwidth: 10 GB/s}
`
	res := simulate(t, topo, `
name: loads
threads:
  - name: main
    ops:
      - copy: {id: a, from: cpu0, to: gpu0, bytes: 1.2 GB, stream: gpu0/s}
      - copy: {id: b, from: cpu0, to: gpu1, bytes: 1.2 GB, stream: gpu1/s}
`)
	// 2.4 GB through 12 GB/s: 200 ms, each link at 6 of its 10 GB/s.
	near(t, "makespan", res.Makespan, us(200_000), us(1))
	name, u := res.BusiestMemory()
	if name != "cpu0" || math.Abs(u-1) > 1e-6 {
		t.Errorf("busiest memory %s at %.4f, want cpu0 at 1", name, u)
	}
	want := "copy-bound: 100% of the critical path is copies (h2d); cpu0's memory at 100%; busiest link "
	if got := res.Bottleneck(); !strings.HasPrefix(got, want) || !strings.HasSuffix(got, " at 60%") {
		t.Errorf("bottleneck %q, want %q... at 60%%", got, want)
	}
	// With memory to spare the links bind, and the memory goes unnamed.
	res = simulate(t, strings.Replace(topo, "12 GB/s", "100 GB/s", 1), `
name: loads
threads:
  - name: main
    ops:
      - copy: {id: a, from: cpu0, to: gpu0, bytes: 1.2 GB, stream: gpu0/s}
`)
	if got := res.Bottleneck(); strings.Contains(got, "memory") || !strings.HasSuffix(got, " at 100%") {
		t.Errorf("bottleneck %q, want the link at 100%% and no memory", got)
	}
}

// A device-local copy reads and writes its GPU's memory: twice its bytes in
// the JSON's gpu_memory, at the memory's whole bandwidth while it runs.
func TestJSONGPUMemoryCountsADeviceLocalCopyTwice(t *testing.T) {
	topo := `
name: one
hosts: [` + bareHost + `]
gpus: [{name: gpu0, model: H100-SXM, copy_overhead: 0 us, memory_bandwidth: 1000 GB/s}]
links: [{ends: [gpu0, cpu0], bandwidth: 10 GB/s}]
`
	res := simulate(t, topo, `
name: local
threads:
  - name: main
    ops:
      - copy: {id: d, from: gpu0, to: gpu0, bytes: 1 GB, stream: gpu0/s}
`)
	var b bytes.Buffer
	if err := sim.WriteJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		GPUMemory []struct {
			Name        string  `json:"name"`
			Bytes       float64 `json:"bytes"`
			Utilization float64 `json:"utilization"`
			Busy        float64 `json:"busy_ns"`
		} `json:"gpu_memory"`
	}
	if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	// H100's memory efficiency (0.87) applies to the bandwidth given:
	// 870 GB/s, 2 GB of traffic in 2.299 ms, busy all of the run.
	if len(doc.GPUMemory) != 1 || doc.GPUMemory[0].Name != "gpu0" || doc.GPUMemory[0].Bytes != 2e9 ||
		math.Abs(doc.GPUMemory[0].Utilization-1) > 1e-6 || math.Abs(doc.GPUMemory[0].Busy-2e9/870e9*1e9) > 1 {
		t.Errorf("gpu_memory %+v, want gpu0 with 2e9 bytes, utilization 1, busy %.0f ns", doc.GPUMemory, 2e9/870e9*1e9)
	}
}

// A run bound by a pageable copy is staging-bound, as model.md defines it
// (the driver stages the bytes through host memory), in both directions;
// a pinned one is copy-bound.
func TestPageableCopiesAreStagingBound(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, stagingHost, 1)
	for _, c := range []struct{ from, to, memory, want string }{
		{"cpu0", "gpu0", "pageable", "staging-bound: 100% of the critical path is pageable copies (h2d)"},
		{"gpu0", "cpu0", "pageable", "staging-bound: "},
		{"cpu0", "gpu0", "pinned", "copy-bound: 100% of the critical path is copies (h2d)"},
	} {
		res := simulate(t, topo, `
name: one-copy
threads:
  - name: main
    ops:
      - copy: {id: c, from: `+c.from+`, to: `+c.to+`, bytes: 64 MiB, memory: `+c.memory+`, stream: gpu0/s}
      - sync: {stream: gpu0/s}
`)
		if got := res.Bottleneck(); !strings.HasPrefix(got, c.want) {
			t.Errorf("%s copy %s -> %s: bottleneck %q, want %q...", c.memory, c.from, c.to, got, c.want)
		}
	}
}

// Kernels whose memory traffic sets their time (as the roofline gives them)
// make the run memory-bound, not compute-bound: 300 us of them against
// 100 us of compute-bound ones; the share named is all the kernels'.
func TestBottleneckNamesMemoryBoundKernels(t *testing.T) {
	topo := "name: one\nhosts: [{name: cpu0, api_overhead: 0 us}]\ngpus: [{name: gpu0, model: H100-SXM, kernel_overhead: 0 us}]\nlinks: [{ends: [gpu0, cpu0], type: pcie5x16}]\n"
	res := simulate(t, topo, `
name: decode
threads:
  - name: main
    ops:
      - kernel: {id: gemm, stream: gpu0/s, duration: 100 us}
      - kernel: {id: read, stream: gpu0/s, duration: 300 us}
`)
	if got := res.Bottleneck(); got != "compute-bound: 100% of the critical path is kernels" {
		t.Fatalf("without the mark: %q", got)
	}
	p := res.Program
	p.Threads[0].Ops[1].MemoryBound = true
	res, err := sim.Run(res.Machine, p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := res.Bottleneck(), "memory-bound: 100% of the critical path is kernels, 75% memory-bound ones"; got != want {
		t.Errorf("bottleneck %q, want %q", got, want)
	}
	// The JSON says which kernels were.
	var buf bytes.Buffer
	if err := sim.WriteJSON(&buf, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Ops []struct {
			ID          string `json:"id"`
			MemoryBound bool   `json:"memory_bound"`
		} `json:"ops"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	marked := map[string]bool{}
	for _, o := range doc.Ops {
		marked[o.ID] = o.MemoryBound
	}
	if !marked["read"] || marked["gemm"] {
		t.Errorf("memory_bound in the JSON: %v, want read's alone", marked)
	}
	// Kernels are weighed together: 60 us of them (half memory-bound)
	// outweigh 50 us of host work, though each kind alone does not.
	res = simulate(t, topo, `
name: mixed
threads:
  - name: main
    ops:
      - host: {id: prep, duration: 50 us}
      - kernel: {id: gemm, stream: gpu0/s, duration: 30 us}
      - kernel: {id: read, stream: gpu0/s, duration: 30 us}
`)
	p = res.Program
	p.Threads[0].Ops[2].MemoryBound = true
	if res, err = sim.Run(res.Machine, p); err != nil {
		t.Fatal(err)
	}
	if got, want := res.Bottleneck(), "compute-bound: 55% of the critical path is kernels, 27% memory-bound ones"; got != want {
		t.Errorf("bottleneck %q, want %q", got, want)
	}
}

// A pageable copy's staging and its DMAs, and pageable copies of both
// directions, are weighed together, as kernels are: a 64 MiB pageable
// copy in, a 20 ms kernel, a 64 MiB pageable copy out, one after another
// on one stream. Each copy runs at the host's 5 GB/s memcpy (13.4 ms),
// under a third of the path each; the kernel's 20 ms is the largest
// single share (43%), but the copies together take more (57%).
func TestPageableSharesAreWeighedTogether(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, stagingHost, 1)
	res := simulate(t, topo, `
name: in-out
threads:
  - name: main
    ops:
      - copy: {id: in, from: cpu0, to: gpu0, bytes: 64 MiB, memory: pageable, stream: gpu0/s}
      - kernel: {id: k, stream: gpu0/s, duration: 20 ms}
      - copy: {id: out, from: gpu0, to: cpu0, bytes: 64 MiB, memory: pageable, stream: gpu0/s}
      - sync: {stream: gpu0/s}
`)
	var kernels, paged, most float64
	for _, s := range res.PathShares() {
		switch {
		case s.What == "kernels":
			kernels = s.Share
		case strings.HasPrefix(s.What, "pageable"):
			paged += s.Share
			most = max(most, s.Share)
		}
	}
	if most > 0.34 {
		t.Errorf("a pageable share of %.3f of the path, want each under a third", most)
	}
	if math.Abs(kernels-20/46.8) > 0.01 || math.Abs(paged-26.8/46.8) > 0.01 {
		t.Fatalf("kernels %.3f, pageable copies %.3f of the path; want 0.43 and 0.57", kernels, paged)
	}
	want := fmt.Sprintf("staging-bound: %.0f%% of the critical path is pageable copies", 100*paged)
	if got := res.Bottleneck(); !strings.HasPrefix(got, want) {
		t.Errorf("bottleneck %q, want %q...", got, want)
	}
}
