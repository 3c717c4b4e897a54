#!/usr/bin/env python3
"""Device check for hw/kernels/kernels.ptx: JIT-load it with the driver
(libcuda via ctypes, no toolkit, no numpy) and run each kernel once.

Usage (repo root on the GPU host):  python3 hw/kernels/ptx_check.py hw/kernels/kernels.ptx
Exits non-zero on the first failure. Takes a few seconds.
"""
import ctypes as C
import os
import struct
import sys
import time
from fractions import Fraction

cu = C.CDLL("libcuda.so.1")


def ck(r, what):
    if r != 0:
        s = C.c_char_p()
        cu.cuGetErrorString(r, C.byref(s))
        sys.exit(f"FAIL {what}: CUresult {r} {s.value}")


def attr(a, dev):
    v = C.c_int()
    ck(cu.cuDeviceGetAttribute(C.byref(v), a, dev), f"attr {a}")
    return v.value


ck(cu.cuInit(0), "cuInit")
dev = C.c_int()
ck(cu.cuDeviceGet(C.byref(dev), 0), "cuDeviceGet")
dev = dev.value
ver = C.c_int()
cu.cuDriverGetVersion(C.byref(ver))
ctx = C.c_void_p()
ck(cu.cuDevicePrimaryCtxRetain(C.byref(ctx), dev), "ctx retain")
ck(cu.cuCtxSetCurrent(ctx), "ctx set")
sms = attr(16, dev)            # MULTIPROCESSOR_COUNT
smem_optin = attr(97, dev)     # MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
cc = (attr(75, dev), attr(76, dev))
print(f"driver {ver.value} cc {cc} SMs {sms} smem optin {smem_optin}")

text = open(sys.argv[1], "rb").read() + b"\0"
LOG = 1 << 16
ebuf, ibuf = C.create_string_buffer(LOG), C.create_string_buffer(LOG)
opts = (C.c_int * 5)(5, 6, 3, 4, 12)  # ERROR_LOG, size, INFO_LOG, size, LOG_VERBOSE
vals = (C.c_void_p * 5)(C.cast(ebuf, C.c_void_p), C.c_void_p(LOG),
                        C.cast(ibuf, C.c_void_p), C.c_void_p(LOG), C.c_void_p(1))
mod = C.c_void_p()
t = time.perf_counter()
r = cu.cuModuleLoadDataEx(C.byref(mod), C.c_char_p(text), 5, opts, vals)
print(f"JIT {1e3*(time.perf_counter()-t):.1f} ms")
print("info log:", ibuf.value.decode(errors="replace"))
if r:
    print("error log:", ebuf.value.decode(errors="replace"))
ck(r, "cuModuleLoadDataEx")


def fn(name):
    f = C.c_void_p()
    ck(cu.cuModuleGetFunction(C.byref(f), mod, name.encode()), name)
    return f


def launch(f, grid, block, shmem, *args):
    ptrs = (C.c_void_p * len(args))(*[C.cast(C.pointer(a), C.c_void_p) for a in args])
    t = time.perf_counter()
    ck(cu.cuLaunchKernel(f, grid, 1, 1, block, 1, 1, shmem, None, ptrs, None), "launch")
    ck(cu.cuCtxSynchronize(), "sync")
    return time.perf_counter() - t


def alloc(n):
    p = C.c_uint64()
    ck(cu.cuMemAlloc_v2(C.byref(p), C.c_size_t(n)), "alloc")
    return p


def h2d(p, b):
    ck(cu.cuMemcpyHtoD_v2(p, C.c_char_p(b), C.c_size_t(len(b))), "h2d")


def d2h(p, n):
    b = C.create_string_buffer(n)
    ck(cu.cuMemcpyDtoH_v2(b, p, C.c_size_t(n)), "d2h")
    return b.raw


# --- spin
spin = fn("gpusim_spin")
ck(cu.cuFuncSetAttribute(spin, 8, smem_optin), "set max dyn smem")
dt = launch(spin, sms, 32, smem_optin, C.c_uint64(0), C.c_uint64(0))
print(f"spin 0 ns: {1e3*dt:.3f} ms")
dt = launch(spin, sms, 32, smem_optin, C.c_uint64(200_000_000), C.c_uint64(0))
print(f"spin 200 ms on {sms} SMs: {1e3*dt:.1f} ms")
if not 0.195 < dt < 0.5:
    sys.exit("FAIL spin duration")
# Stamps: every block's thread 0 takes start[0] down and start[1] up. Two
# blocks a SM (grid 2 x SMs, each block holding more than half an SM's
# shared memory) run in two waves, so the stamps span about two spins: the
# first wave's start to the second's stop (block 0 alone spanned one).
stamps = alloc(16)
for grid, waves in ((sms, 1), (2 * sms, 2)):
    h2d(stamps, struct.pack("<QQ", 2**64 - 1, 0))
    launch(spin, grid, 32, smem_optin, C.c_uint64(2_000_000), stamps)
    t0, t1 = struct.unpack("<QQ", d2h(stamps, 16))
    span = (t1 - t0) / 1e6 if t0 <= t1 else -1
    print(f"spin 2 ms on {grid} blocks: stamps span {span:.3f} ms")
    if not 2 * waves - 0.1 < span < 2 * waves + 1:
        sys.exit(f"FAIL spin stamps: {grid} blocks span {span:.3f} ms, want about {2*waves} ms ({waves} wave(s) of 2 ms)")
cu.cuMemFree_v2(stamps)

# --- copy
cp = fn("gpusim_copy")
# 1001 on 768 threads: the one-at-a-time tail alone; 3077: one trip of four
# a thread (to 3071), then the tail's five; 2^24: many trips.
for n16, grid in ((0, 4), (1001, 3), (3077, 3), (1 << 24, sms * 4)):
    nb = 16 * n16
    src_h = os.urandom(nb) if n16 < 4096 else (os.urandom(1 << 20) * (nb >> 20))
    src, dst = alloc(max(nb, 16)), alloc(max(nb, 16))
    if nb:
        h2d(src, src_h)
    launch(cp, grid, 256, 0, dst, src, C.c_uint64(n16))  # warm
    dt = launch(cp, grid, 256, 0, dst, src, C.c_uint64(n16))
    if nb and d2h(dst, nb) != src_h:
        sys.exit(f"FAIL copy n16={n16}")
    print(f"copy n16={n16} grid={grid}: ok, {2*nb/dt/1e9:.0f} GB/s (incl. launch)")
    cu.cuMemFree_v2(src)
    cu.cuMemFree_v2(dst)

# --- fma
fma = fn("gpusim_fma")
X = Fraction(struct.unpack("<f", bytes.fromhex("ffff7f3f"))[0])
Y = Fraction(struct.unpack("<f", bytes.fromhex("6f12833a"))[0])


def f32(v):  # round a non-negative Fraction to the nearest float32, ties to even
    v = Fraction(v)
    if v == 0:
        return v
    e = v.numerator.bit_length() - v.denominator.bit_length() - 24
    while v / Fraction(2) ** e >= 2 ** 24:
        e += 1
    while v / Fraction(2) ** e < 2 ** 23:
        e -= 1
    m = v / Fraction(2) ** e
    q, r = divmod(m.numerator, m.denominator)
    if 2 * r > m.denominator or (2 * r == m.denominator and q & 1):
        q += 1
    return Fraction(q) * Fraction(2) ** e


def ref(tid, iters):
    a = [f32(tid + k) for k in range(1, 9)]
    for _ in range(iters):
        a = [f32(ak * X + Y) for ak in a]  # single rounding of exact a*x+y
    s = [f32(a[0] + a[1]), f32(a[2] + a[3]), f32(a[4] + a[5]), f32(a[6] + a[7])]
    return float(f32(f32(s[0] + s[1]) + f32(s[2] + s[3])))


grid = sms * 8
nthr = grid * 256
out = alloc(4 * nthr)
for iters in (0, 50):
    launch(fma, grid, 256, 0, out, C.c_uint32(iters))
    got = struct.unpack(f"<{nthr}f", d2h(out, 4 * nthr))
    for g in (0, 1, 255, 256, nthr - 1):
        want = ref(g % 256, iters)
        if got[g] != want:
            sys.exit(f"FAIL fma iters={iters} thread {g}: got {got[g]!r} want {want!r}")
    print(f"fma iters={iters}: ok ({got[0]!r})")
iters = 100_000
dt = launch(fma, grid, 256, 0, out, C.c_uint32(iters))
got = struct.unpack(f"<{nthr}f", d2h(out, 4 * nthr))
if not all(v == v and abs(v) < 1e30 for v in got):
    sys.exit("FAIL fma non-finite")
print(f"fma iters={iters}: {16*iters*nthr/dt/1e12:.1f} TFLOP/s fp32 (incl. launch), out[0]={got[0]!r}")
print("ALL OK")
