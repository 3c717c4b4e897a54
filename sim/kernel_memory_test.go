package sim_test

import (
	"testing"
)

// oneGPUMemory: a GPU whose memory moves exactly 1000 GB/s and whose bf16
// peak is exactly 1000 TFLOP/s, no overheads.
const oneGPUMemory = `
name: one
hosts: [` + bareHost + `]
gpus: [{name: gpu0, model: H100-SXM, host: cpu0, peak: {bf16: 1000 TFLOP/s}, compute_efficiency: 1, memory_bandwidth: 1000 GB/s, memory_efficiency: 1, kernel_overhead: 0 us, copy_overhead: 0 us}]
links: [{ends: [gpu0, cpu0], bandwidth: 10 GB/s}]
`

// A memory-bound kernel (1 GB: 1 ms alone) and a device-local copy (0.5 GB,
// read and written: 1 ms alone) share the GPU's memory. Max-min fairness
// raises the kernel's speed (a fraction of the memory, 1 TB/s at full
// speed) and the copy's rate (bytes/s, two of traffic each) alike: x + 2x =
// 1 TB/s, x = 1/3 TB/s. The copy's 0.5 GB end at 1.5 ms, when the kernel
// has done half its work; alone, it ends the other half at 2 ms: 2 GB of
// traffic at 1 TB/s.
func TestKernelAndCopyShareTheGPUMemory(t *testing.T) {
	res := simulate(t, oneGPUMemory, `
name: share
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/a, bytes: 1 GB}
      - copy: {id: c, from: gpu0, to: gpu0, bytes: 0.5 GB, stream: gpu0/b}
`)
	near(t, "copy end", op(t, res, "c").End, us(1500), 2)
	near(t, "kernel end", op(t, res, "k").End, us(2000), 2)
	if got := res.GPUMemory[0].Used; got < 2e9-1 || got > 2e9+1 {
		t.Errorf("gpu0's memory carried %g bytes, want 2e9", got)
	}
}

// Two memory-bound kernels on half the SMs each do not oversubscribe the
// SMs, but share the memory: each at half speed, 2 ms for 1 GB each. Two
// compute-bound kernels on half the SMs take twice their whole-GPU time
// (0.5 TFLOP at 500 TFLOP/s: 1 ms) and run side by side: 1 ms.
func TestHalfShareKernelsShareMemoryAndCompute(t *testing.T) {
	res := simulate(t, oneGPUMemory, `
name: halves
threads:
  - name: main
    ops:
      - kernel: {id: m1, stream: gpu0/a, bytes: 1 GB, sm_share: 0.5}
      - kernel: {id: m2, stream: gpu0/b, bytes: 1 GB, sm_share: 0.5}
`)
	near(t, "m1 end", op(t, res, "m1").End, us(2000), 2)
	near(t, "m2 end", op(t, res, "m2").End, us(2000), 2)
	res = simulate(t, oneGPUMemory, `
name: halves
threads:
  - name: main
    ops:
      - kernel: {id: c1, stream: gpu0/a, flops: 0.5 TFLOP, dtype: bf16, sm_share: 0.5}
      - kernel: {id: c2, stream: gpu0/b, flops: 0.5 TFLOP, dtype: bf16, sm_share: 0.5}
`)
	near(t, "c1 end", op(t, res, "c1").End, us(1000), 2)
	near(t, "c2 end", op(t, res, "c2").End, us(1000), 2)
}

// A kernel given only a duration has no known traffic and leaves the
// memory to the copy: 0.5 GB read and written at 1 TB/s, 1 ms.
func TestDurationKernelLeavesTheMemory(t *testing.T) {
	res := simulate(t, oneGPUMemory, `
name: duration
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/a, duration: 5 ms}
      - copy: {id: c, from: gpu0, to: gpu0, bytes: 0.5 GB, stream: gpu0/b}
`)
	near(t, "copy end", op(t, res, "c").End, us(1000), 2)
	near(t, "kernel end", op(t, res, "k").End, us(5000), 2)
}
