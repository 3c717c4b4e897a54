// Package kernels holds gpusim's GPU kernels as PTX, written by hand and
// embedded in the binary, so that the CUDA driver can JIT-compile them at run
// time (cuModuleLoadData) on a GPU host that has no CUDA toolkit.
//
// The module (kernels.ptx) targets PTX ISA 7.0, sm_70, 64-bit addressing, so
// the driver accepts it on every GPU from Volta to Hopper. kernels.cu is the
// equivalent CUDA C++ with the same entry names and parameters; it is not
// built by Go and serves as documentation and for cross-checking with
// `nvcc -ptx` on a host that has the toolkit.
//
// All pointer parameters are device addresses (CUdeviceptr, 64-bit). Each
// kernel uses only the x dimension of the grid and block.
//
// [Spin] — gpusim_spin(duration_ns u64, start u64): every thread reads
// %globaltimer once, then spins re-reading it until duration_ns nanoseconds
// have passed. duration_ns = 0 returns at once. If start is a device
// address (not 0), thread 0 of every block takes start[0] down to its
// first %globaltimer reading and start[1] up to its last (two u64, set to
// all ones and 0 before the launch; atom.global.min/max): when the kernel's
// first block began and its last stopped spinning, in the GPU's
// nanoseconds, though its blocks start apart. Launch with
// [SpinBlock] threads per block, one block per SM to occupy, and a dynamic
// shared memory size large enough that no two blocks fit on one SM (more than
// half the SM's shared memory; above 48 KiB the function's
// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES must be raised first). The
// kernel does not use the shared memory. It does no FLOPs and moves at most
// 16 bytes.
//
// [Copy] — gpusim_copy(dst u64, src u64, n16 u64): grid-stride loop over
// i in [blockIdx.x*blockDim.x + threadIdx.x, n16) with step
// gridDim.x*blockDim.x, copying the 16-byte element i (one ld.global.v4.u32,
// one st.global.v4.u32) from src to dst, four elements a trip (four loads,
// then four stores) while four are left. dst and src must be 16-byte aligned
// and not overlap. Launch with [CopyBlock] threads per block and any grid
// size; calibration's memory kernel and the hw backend's memory-bound
// kernels give it as many blocks as the GPU holds at once (an SM's share,
// cuOccupancyMaxActiveBlocksPerMultiprocessor, times the SMs: 8 an SM on
// Hopper, 6 on Ada), so that enough loads are in flight to keep the memory
// busy and no block waits for another to end. It moves [CopyBytesPerElem]*n16 bytes read plus the same written,
// 32*n16 bytes of DRAM traffic in all, and does no FLOPs.
//
// [FMA] — gpusim_fma(out u64, iters u32): each thread keeps 8 independent
// fp32 accumulators, runs iters iterations of 8 fma.rn.f32 (one per
// accumulator), then stores the sum of the accumulators as one float32 to
// out[blockIdx.x*blockDim.x + threadIdx.x]. Launch with [FMABlock] threads
// per block; out must hold 4 bytes per launched thread. It does
// [FMAFlopsPerIter]*iters FLOPs per thread (an FMA counts as 2), so
// FMAFlopsPerIter*iters*gridDim.x*blockDim.x in all, and writes 4 bytes per
// thread. iters = 0 is valid and stores the initial sum.
package kernels

import _ "embed"

//go:embed kernels.ptx
var ptx []byte

// Entry-point names in the PTX module, for cuModuleGetFunction.
const (
	Spin = "gpusim_spin"
	Copy = "gpusim_copy"
	FMA  = "gpusim_fma"
)

// Launch shape and accounting.
const (
	// SpinBlock is the number of threads per block for [Spin].
	SpinBlock = 32
	// CopyBlock is the number of threads per block for [Copy].
	CopyBlock = 256
	// FMABlock is the number of threads per block for [FMA].
	FMABlock = 256
	// FMAFlopsPerIter is the FLOPs one [FMA] thread does per iteration:
	// 8 fused multiply-adds of 2 FLOPs each.
	FMAFlopsPerIter = 16
	// CopyBytesPerElem is the size of one [Copy] element; a copy of n16
	// elements reads and writes CopyBytesPerElem*n16 bytes each.
	CopyBytesPerElem = 16
)

// PTX returns the module text, NUL-terminated as cuModuleLoadData wants.
// The result is a fresh copy that the caller may keep or modify.
func PTX() []byte {
	out := make([]byte, len(ptx)+1)
	copy(out, ptx)
	return out
}
