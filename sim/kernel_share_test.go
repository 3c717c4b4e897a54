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

// Kernels on half the SMs each reach half the peak and half the memory
// bandwidth, and run side by side: two memory-bound kernels of 1 GB take
// 2 ms (1 GB at 500 GB/s) each, as they would one after the other on the
// whole GPU; two compute-bound kernels of 0.5 TFLOP at 500 TFLOP/s, 1 ms.
// Together they never pass the GPU's peak or its bandwidth.
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
