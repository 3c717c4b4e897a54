// Reference CUDA C++ for the hand-written PTX in kernels.ptx.
//
// Not built by Go: the Go package embeds kernels.ptx, which the CUDA driver
// JIT-compiles at run time. This file documents what each PTX entry does and
// can be used to cross-check on a host with the toolkit:
//
//   nvcc -arch=sm_70 -ptx kernels.cu -o /tmp/ref.ptx
//
// Names and parameter lists match kernels.ptx exactly (extern "C", so the
// entry names are not mangled).

#include <stdint.h>

// gpusim_spin: busy-wait until duration_ns nanoseconds of %globaltimer have
// passed since the thread started; if start is not null, thread 0 of every
// block takes start[0] down to its start time and start[1] up to its last
// reading (the caller sets them to all ones and 0 first): the first block's
// start and the last block's stop. Launched with 32 threads per block, one
// block per SM to claim, and a large dynamic shared memory size so that a
// block occupies a whole SM.
extern "C" __global__ void gpusim_spin(uint64_t duration_ns, unsigned long long *start)
{
    uint64_t t0, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t0));
    bool tell = start != 0 && threadIdx.x == 0;
    if (tell)
        atomicMin(&start[0], (unsigned long long)t0);
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - t0 < duration_ns);
    if (tell)
        atomicMax(&start[1], (unsigned long long)now);
}

// gpusim_copy: grid-stride copy of n16 16-byte elements from src to dst
// (both 16-byte aligned, not overlapping). Streams 16*n16 bytes read +
// 16*n16 bytes written. Four elements a trip while four are left, their
// loads before their stores, so that each thread has four loads in flight.
extern "C" __global__ void gpusim_copy(uint4 *__restrict__ dst, const uint4 *__restrict__ src, uint64_t n16)
{
    uint64_t stride = (uint64_t)gridDim.x * (uint64_t)blockDim.x;
    uint64_t i = (uint64_t)blockIdx.x * (uint64_t)blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n16; i += 4 * stride) {
        uint4 a = src[i], b = src[i + stride], c = src[i + 2 * stride], d = src[i + 3 * stride];
        dst[i] = a;
        dst[i + stride] = b;
        dst[i + 2 * stride] = c;
        dst[i + 3 * stride] = d;
    }
    for (; i < n16; i += stride) {
        dst[i] = src[i];
    }
}

// gpusim_fma: 8 independent fp32 FMA chains per thread, iters iterations,
// 16 FLOPs per thread per iteration; the sum of the accumulators is stored to
// out[global thread index] so the work is not removed. out must hold one
// float per launched thread.
extern "C" __global__ void gpusim_fma(float *out, uint32_t iters)
{
    const float x = __int_as_float(0x3F7FFFFF); // 1 - 2^-24
    const float y = __int_as_float(0x3A83126F); // 0.001
    float t = (float)threadIdx.x;
    float a0 = t + 1.0f, a1 = t + 2.0f, a2 = t + 3.0f, a3 = t + 4.0f;
    float a4 = t + 5.0f, a5 = t + 6.0f, a6 = t + 7.0f, a7 = t + 8.0f;
    for (uint32_t i = 0; i < iters; i++) {
        a0 = __fmaf_rn(a0, x, y);
        a1 = __fmaf_rn(a1, x, y);
        a2 = __fmaf_rn(a2, x, y);
        a3 = __fmaf_rn(a3, x, y);
        a4 = __fmaf_rn(a4, x, y);
        a5 = __fmaf_rn(a5, x, y);
        a6 = __fmaf_rn(a6, x, y);
        a7 = __fmaf_rn(a7, x, y);
    }
    float sum = ((a0 + a1) + (a2 + a3)) + ((a4 + a5) + (a6 + a7));
    out[(uint64_t)blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
