//go:build linux

package hw

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"gpusim/internal/fakecuda"
	"gpusim/sim"
)

// The CUDA binding against a C library with libcuda's entry points
// (internal/fakecuda/testdata/fakecuda.c at the top), loaded as the real driver is:
// these tests check what crosses the boundary (argument order and widths,
// out-parameters, strings, floats, error codes), which the Go fake driver
// cannot.

// fakeCUDA builds the C library (once per test binary) and returns its
// path; it skips where there is no C compiler.
func fakeCUDA(tb testing.TB) string { fake = fakecuda.Build(tb); return fake.Path }

var fake *fakecuda.Lib

func fakeSet(tb testing.TB, what string, v int64) { tb.Helper(); fake.Set(tb, what, v) }

func fakeGet(_ testing.TB, what string) int64 { return fake.Get(what) }

// cudaCode checks that err is a *CUDAError from call with code and its name
// as the library gave it.
func cudaCode(t *testing.T, err error, call string, code int, name string) {
	t.Helper()
	var e *CUDAError
	if !errors.As(err, &e) {
		t.Fatalf("error %v, want a CUDAError from %s", err, call)
	}
	if e.Call != call || e.Code != code || e.Name != name {
		t.Errorf("error from %s code %d name %q, want %s code %d name %q", e.Call, e.Code, e.Name, call, code, name)
	}
}

func TestBindingCallsTheLibrary(t *testing.T) {
	lib := fakeCUDA(t)
	// The current context belongs to the OS thread, in the fake as in CUDA.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := open(lib)
	if err != nil {
		t.Fatal(err)
	}
	allocated0, contextErrors0 := fakeGet(t, "allocated"), fakeGet(t, "context_errors")
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	wantGet := func(what string, want int64) {
		t.Helper()
		if got := fakeGet(t, what); got != want {
			t.Errorf("%s = %d (%#x), want %d (%#x)", what, got, got, want, want)
		}
	}

	// Devices: out-parameters of every width, and a string.
	if v, err := c.Version(); err != nil || v != 13000 {
		t.Errorf("Version = %d, %v; want 13000", v, err)
	}
	if n, err := c.DeviceCount(); err != nil || n != 2 {
		t.Errorf("DeviceCount = %d, %v; want 2", n, err)
	}
	if s, err := c.DeviceName(1); err != nil || s != "Fake GPU 1" {
		t.Errorf("DeviceName(1) = %q, %v", s, err)
	}
	if v, err := c.Attribute(1, AttrSMs); err != nil || v != 16*100+1 { // the fake answers a*100+dev
		t.Errorf("Attribute(1, AttrSMs) = %d, %v; want 1601", v, err)
	}
	if v, err := c.TotalMem(1); err != nil || v != 2<<34 {
		t.Errorf("TotalMem(1) = %d, %v; want %d", v, err, uint64(2<<34))
	}
	_, err = c.DeviceName(2)
	cudaCode(t, err, "cuDeviceGet", 101, "CUDA_ERROR_INVALID_DEVICE")

	// Contexts.
	ctx0, err := c.PrimaryCtxRetain(0)
	must(err)
	ctx1, err := c.PrimaryCtxRetain(1)
	must(err)
	if ctx0 != 0x1000 || ctx1 != 0x1001 {
		t.Errorf("contexts %#x %#x, want 0x1000 0x1001", ctx0, ctx1)
	}
	must(c.SetCurrent(ctx0))
	wantGet("current", 0x1000)
	must(c.CtxSynchronize())

	// Memory: sizes in, pointers out, bytes through.
	free0, total, err := c.MemGetInfo()
	must(err)
	if total != 80<<30 {
		t.Errorf("MemGetInfo total %d, want %d", total, uint64(80<<30))
	}
	const n = 4096
	p, err := c.MemAlloc(n)
	must(err)
	if free1, _, _ := c.MemGetInfo(); free0-free1 != n {
		t.Errorf("free memory fell by %d after allocating %d", free0-free1, n)
	}
	data := make([]byte, n)
	for i := range data {
		data[i] = byte(i*7 + 3)
	}
	must(c.MemcpyHtoD(p, data))
	back := make([]byte, n)
	must(c.MemcpyDtoH(back, p))
	if !bytes.Equal(back, data) {
		t.Error("MemcpyHtoD then MemcpyDtoH did not bring the bytes back")
	}
	h, err := c.MemHostAlloc(n)
	must(err)
	wantGet("host_alloc_flags", memHostAllocPortable)
	s, err := c.StreamCreate()
	must(err)
	wantGet("stream_flags", streamNonBlocking)
	must(c.MemcpyDtoHAsync(h, p, n, s))
	wantGet("copy.kind", 2)
	wantGet("copy.stream", int64(s))
	wantGet("copy.bytes", n)
	if !bytes.Equal(unsafe.Slice((*byte)(unsafe.Add(nil, uintptr(h))), n), data) {
		t.Error("MemcpyDtoHAsync did not copy into the pinned buffer")
	}
	q, err := c.MemAlloc(n)
	must(err)
	must(c.MemcpyDtoDAsync(q, p, 1000, s))
	wantGet("copy.kind", 3)
	wantGet("copy.bytes", 1000)
	must(c.MemcpyPeerAsync(q, ctx1, p, ctx0, 500, s))
	wantGet("copy.kind", 4)
	wantGet("copy.dctx", int64(ctx1))
	wantGet("copy.sctx", int64(ctx0))
	wantGet("copy.bytes", 500)
	must(c.MemcpyDtoH(back, q))
	if !bytes.Equal(back[:1000], data[:1000]) {
		t.Error("MemcpyDtoDAsync and MemcpyPeerAsync did not copy the bytes")
	}
	must(c.MemcpyHtoDAsync(q, h, 10, s))
	wantGet("copy.kind", 1)
	wantGet("copy.bytes", 10)
	_, err = c.MemAlloc(2 << 30) // over the fake's 1 GiB
	cudaCode(t, err, "cuMemAlloc_v2", 2, "CUDA_ERROR_OUT_OF_MEMORY")

	// Events: a float out-parameter. Each record advances the fake's clock
	// by 0.25 ms, so e2 recorded twice after e1 is 0.5 ms later.
	e1, err := c.EventCreate()
	must(err)
	wantGet("event_flags", eventDefault)
	e2, err := c.EventCreate()
	must(err)
	e3, err := c.EventCreate()
	must(err)
	must(c.EventRecord(e1, s))
	wantGet("record.stream", int64(s))
	must(c.EventRecord(e2, s))
	must(c.EventRecord(e2, s))
	if ms, err := c.EventElapsed(e1, e2); err != nil || ms != 0.5 {
		t.Errorf("EventElapsed = %v ms, %v; want 0.5", ms, err)
	}
	_, err = c.EventElapsed(e3, e1)
	cudaCode(t, err, "cuEventElapsedTime", 600, "CUDA_ERROR_NOT_READY")
	must(c.StreamWaitEvent(s, e1))
	wantGet("wait.stream", int64(s))
	wantGet("wait.event", int64(e1))
	wantGet("wait_flags", 0)
	must(c.EventSynchronize(e1))
	must(c.StreamSynchronize(s))

	// Modules: the JIT log comes back; function names go in as C strings.
	m, err := c.ModuleLoad([]byte(".version 8.0\n\x00"))
	must(err)
	_, err = c.ModuleLoad([]byte("FAKE_JIT_ERROR\x00"))
	cudaCode(t, err, "cuModuleLoadDataEx", 218, "CUDA_ERROR_INVALID_PTX")
	if err == nil || !strings.HasSuffix(err.Error(), ": ptxas fatal   : Unresolved extern function 'error'") {
		t.Errorf("module load error %v: want the JIT log at its end", err)
	}
	f, err := c.ModuleFunction(m, "gpusim_spin")
	must(err)
	if want := Function(uintptr(m)<<4 + 1); f != want {
		t.Errorf("ModuleFunction(gpusim_spin) = %#x, want %#x", f, want)
	}
	_, err = c.ModuleFunction(m, "nope")
	cudaCode(t, err, "cuModuleGetFunction(nope)", 500, "CUDA_ERROR_NOT_FOUND")
	must(c.SetMaxDynamicShared(f, 100000))
	wantGet("func_attr", funcAttrMaxDynamicShared)
	wantGet("func_attr_value", 100000)
	// The stand-in's SM holds 2048 threads: 8 blocks of 256 (the count
	// comes back through the pointer).
	if n, err := c.BlocksPerSM(f, 256, 0); err != nil || n != 8 {
		t.Errorf("BlocksPerSM(256 threads) = %d, %v; want 8", n, err)
	}
	_, err = c.BlocksPerSM(f, 0, 0)
	cudaCode(t, err, "cuOccupancyMaxActiveBlocksPerMultiprocessor", 400, "CUDA_ERROR_INVALID_HANDLE")

	// A launch: eleven arguments, five of them on the stack, and the
	// parameters as an array of pointers to their values.
	fakeSet(t, "nparams", 3)
	must(c.Launch(f, 132, 256, 4096, s, U64(0x1122334455667788), U32(7), U64(uint64(p))))
	for _, w := range []struct {
		what string
		v    int64
	}{
		{"launch.f", int64(f)}, {"launch.gx", 132}, {"launch.gy", 1}, {"launch.gz", 1},
		{"launch.bx", 256}, {"launch.by", 1}, {"launch.bz", 1}, {"launch.shared", 4096},
		{"launch.stream", int64(s)}, {"launch.extra_null", 1},
		{"launch.p0", 0x1122334455667788}, {"launch.p1", 7}, {"launch.p2", int64(p)},
	} {
		wantGet(w.what, w.v)
	}
	before := fakeGet(t, "launch.count")
	if err := c.Launch(f, 1, 1, 0, s, make([]Arg, maxArgs+1)...); err == nil {
		t.Error("a launch with 9 parameters was accepted")
	}
	wantGet("launch.count", before)

	// Peer access: enabling it twice is not an error.
	must(c.EnablePeerAccess(ctx1))
	must(c.EnablePeerAccess(ctx1))
	if ok, err := c.CanAccessPeer(0, 1); err != nil || !ok {
		t.Errorf("CanAccessPeer(0, 1) = %v, %v; want true", ok, err)
	}
	if ok, err := c.CanAccessPeer(1, 1); err != nil || ok {
		t.Errorf("CanAccessPeer(1, 1) = %v, %v; want false", ok, err)
	}

	// Everything is released.
	for _, err := range []error{c.ModuleUnload(m), c.EventDestroy(e1), c.EventDestroy(e2), c.EventDestroy(e3),
		c.StreamDestroy(s), c.MemFreeHost(h), c.MemFree(p), c.MemFree(q), c.PrimaryCtxRelease(0), c.PrimaryCtxRelease(1)} {
		must(err)
	}
	wantGet("retains0", 0)
	wantGet("allocated", allocated0)
	wantGet("context_errors", contextErrors0)
	cudaCode(t, c.PrimaryCtxRelease(0), "cuDevicePrimaryCtxRelease", 201, "CUDA_ERROR_INVALID_CONTEXT")
}

// TestOpenSaysWhyNoGPU: cuInit's failures become one-line UnavailableErrors
// that say what is missing.
func TestOpenSaysWhyNoGPU(t *testing.T) {
	lib := fakeCUDA(t)
	defer fakeSet(t, "init", 0)
	for _, tc := range []struct {
		code int64
		want string
	}{
		{100, "the NVIDIA driver is loaded but reports no CUDA device (cuInit: CUDA_ERROR_NO_DEVICE (100))"},
		{800, "no permission to use the GPU (cuInit: CUDA_ERROR_NOT_PERMITTED (800)); check access to /dev/nvidia*"},
		{3, "the NVIDIA driver failed to initialize: cuInit: CUDA_ERROR_NOT_INITIALIZED (3)"},
	} {
		fakeSet(t, "init", tc.code)
		_, err := open(lib)
		if !IsUnavailable(err) || err.Error() != tc.want {
			t.Errorf("cuInit failing with %d: error %v, want UnavailableError %q", tc.code, err, tc.want)
		}
	}
	_, err := open(filepath.Join(t.TempDir(), "libcuda.so.1"))
	if !IsUnavailable(err) || !strings.HasPrefix(err.Error(), "no NVIDIA driver found: ") {
		t.Errorf("a missing library: error %v", err)
	}
}

// BenchmarkKernelOpCalls is the binding's share of the host time of a
// kernel op as the hw backend issues it (a launch with two parameters and
// its timing event), against a library whose calls return at once: what
// gpusim adds to every op that a C program would not.
func BenchmarkKernelOpCalls(b *testing.B) {
	lib := fakeCUDA(b)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	c, err := open(lib)
	if err != nil {
		b.Fatal(err)
	}
	ctx, _ := c.PrimaryCtxRetain(0)
	defer c.PrimaryCtxRelease(0)
	c.SetCurrent(ctx)
	s, _ := c.StreamCreate()
	e, _ := c.EventCreate()
	m, _ := c.ModuleLoad([]byte(".version 8.0\n\x00"))
	f, _ := c.ModuleFunction(m, "gpusim_spin")
	fakeSet(b, "nparams", 2)
	b.ReportAllocs()
	for b.Loop() {
		if err := c.Launch(f, 132, 128, 0, s, U64(4000), U64(0x10)); err != nil {
			b.Fatal(err)
		}
		if err := c.EventRecord(e, s); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRunThroughTheCLibrary runs programs through the backend and the real
// binding against the C library in its real-clock mode, where the spin
// kernel spins during its launch call: every call from every host thread
// must find its context current on its OS thread, kernels must get the
// nanoseconds they are asked for, and everything allocated must be freed.
func TestRunThroughTheCLibrary(t *testing.T) {
	lib := fakeCUDA(t)
	fakeSet(t, "realclock", 1)
	defer fakeSet(t, "realclock", 0)
	fakeSet(t, "nparams", 2)
	drv, err := open(lib)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct{ name, src string }{
		{"one thread, two GPUs, a peer copy", oneThread},
		{"a thread per GPU", `
name: t
topology: two.yaml
threads:
  - name: a
    host: cpu0
    ops:
      - copy: {id: a-up, from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/s}
      - kernel: {id: a-k, stream: gpu0/s, duration: 200 us}
      - record: {event: a-done, stream: gpu0/s}
      - sync: {event: a-done}
  - name: b
    host: cpu0
    ops:
      - copy: {id: b-up, from: cpu0, to: gpu1, bytes: 1 MB, stream: gpu1/s, memory: pageable}
      - kernel: {id: b-k, stream: gpu1/s, duration: 200 us}
      - copy: {id: b-down, from: gpu1, to: cpu0, bytes: 1 MB, stream: gpu1/s}
      - sync: {device: gpu1}
`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := load(t, tc.src)
			dev0, host0, ctxErr0 := fakeGet(t, "allocated"), fakeGet(t, "host_allocated"), fakeGet(t, "context_errors")
			res, info, err := Run(context.Background(), drv, sc.Topology.Machine, sc.Program, Options{})
			if err != nil {
				t.Fatal(err)
			}
			want, asked := 0, map[string]sim.Time{}
			for _, th := range sc.Program.Threads {
				want += len(th.Ops)
				for _, op := range th.Ops {
					asked[op.ID] = op.Duration
				}
			}
			if len(res.Ops) != want {
				t.Errorf("%d op records, want %d", len(res.Ops), want)
			}
			for _, r := range res.Ops {
				if r.End < r.Start || r.HostEnd < r.Call {
					t.Errorf("%s: start %v end %v, call %v host end %v", r.ID, r.Start, r.End, r.Call, r.HostEnd)
				}
				if r.Kind != sim.OpKernel {
					continue
				}
				// The backend asks the spin for the op's duration less the
				// spin's fixed cost and overshoot, which it measured at
				// start: here the launch and event calls' host time, a few
				// microseconds, or much more on a loaded machine. The spin
				// runs at least what it is asked; its stamps are placed on
				// the host clock give or take the placement's noise.
				g := r.GPU
				least := asked[r.ID] - info.SpinOverhead[g] - info.SpinOvershoot[g] - 20*sim.Microsecond
				if d := r.End - r.Start; d < least || d > asked[r.ID]+5*sim.Millisecond {
					t.Errorf("kernel %s lasted %v, asked for %v (the spin's fixed cost %v, overshoot %v)", r.ID, d, asked[r.ID], info.SpinOverhead[g], info.SpinOvershoot[g])
				}
			}
			if got := fakeGet(t, "context_errors"); got != ctxErr0 {
				t.Errorf("%d calls were made without their context current on the calling thread", got-ctxErr0)
			}
			if got := fakeGet(t, "allocated"); got != dev0 {
				t.Errorf("device bytes allocated %d after the run, %d before", got, dev0)
			}
			if got := fakeGet(t, "host_allocated"); got != host0 {
				t.Errorf("pinned host bytes allocated %d after the run, %d before", got, host0)
			}
			if r0, r1 := fakeGet(t, "retains0"), fakeGet(t, "retains1"); r0 != 0 || r1 != 0 {
				t.Errorf("primary contexts still retained: %d, %d", r0, r1)
			}
		})
	}
}
