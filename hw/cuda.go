//go:build linux

package hw

import (
	"fmt"
	"runtime"
	"strings"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// Library is the CUDA driver's file name: the versioned soname the driver
// package installs (libcuda.so without the version comes only with the
// development files).
const Library = "libcuda.so.1"

// cuda is the CUDA driver API bound through purego: no cgo, no CUDA headers
// at build time, and a clean error where no driver is installed.
type cuda struct {
	// The entry points' addresses, called with purego.SyscallN (each
	// argument a uintptr, the CUresult in the low half of the result):
	// purego.RegisterFunc's calls go through reflection, which cost
	// several times as much host time per op (BenchmarkKernelOpCalls,
	// docs/performance.md). Each field's C arguments are beside it; every
	// function returns a CUresult.
	cuInit                uintptr // (unsigned flags)
	cuDriverGetVersion    uintptr // (int *v)
	cuDeviceGetCount      uintptr // (int *n)
	cuDeviceGet           uintptr // (CUdevice *dev, int ordinal)
	cuDeviceGetName       uintptr // (char *name, int len, CUdevice dev)
	cuDeviceGetAttribute  uintptr // (int *v, CUdevice_attribute a, CUdevice dev)
	cuDeviceTotalMem      uintptr // (size_t *bytes, CUdevice dev)
	cuPrimaryCtxRetain    uintptr // (CUcontext *ctx, CUdevice dev)
	cuPrimaryCtxRelease   uintptr // (CUdevice dev)
	cuCtxSetCurrent       uintptr // (CUcontext ctx)
	cuCtxSynchronize      uintptr // (void)
	cuMemGetInfo          uintptr // (size_t *free, size_t *total)
	cuMemAlloc            uintptr // (CUdeviceptr *p, size_t n)
	cuMemFree             uintptr // (CUdeviceptr p)
	cuMemHostAlloc        uintptr // (void **p, size_t n, unsigned flags)
	cuMemFreeHost         uintptr // (void *p)
	cuDeviceCanAccessPeer uintptr // (int *ok, CUdevice dev, CUdevice peer)
	cuCtxEnablePeerAccess uintptr // (CUcontext peer, unsigned flags)
	cuMemcpyHtoDAsync     uintptr // (CUdeviceptr dst, const void *src, size_t n, CUstream s)
	cuMemcpyDtoHAsync     uintptr // (void *dst, CUdeviceptr src, size_t n, CUstream s)
	cuMemcpyDtoDAsync     uintptr // (CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream s)
	cuMemcpyPeerAsync     uintptr // (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t n, CUstream s)
	cuMemcpyHtoD          uintptr // (CUdeviceptr dst, const void *src, size_t n)
	cuMemcpyDtoH          uintptr // (void *dst, CUdeviceptr src, size_t n)
	cuStreamCreate        uintptr // (CUstream *s, unsigned flags)
	cuStreamDestroy       uintptr // (CUstream s)
	cuStreamSynchronize   uintptr // (CUstream s)
	cuStreamWaitEvent     uintptr // (CUstream s, CUevent e, unsigned flags)
	cuEventCreate         uintptr // (CUevent *e, unsigned flags)
	cuEventDestroy        uintptr // (CUevent e)
	cuEventRecord         uintptr // (CUevent e, CUstream s)
	cuEventSynchronize    uintptr // (CUevent e)
	cuEventElapsedTime    uintptr // (float *ms, CUevent start, CUevent end)
	cuModuleLoadDataEx    uintptr // (CUmodule *m, const void *image, unsigned n, CUjit_option *opts, void **vals)
	cuModuleGetFunction   uintptr // (CUfunction *f, CUmodule m, const char *name)
	cuModuleUnload        uintptr // (CUmodule m)
	cuFuncSetAttribute    uintptr // (CUfunction f, CUfunction_attribute a, int v)
	cuOccupancy           uintptr // cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block, size_t shared)
	cuLaunchKernel        uintptr // (CUfunction f, unsigned gx, gy, gz, bx, by, bz, shared, CUstream s, void **params, void **extra)
	cuGetErrorName        uintptr // (CUresult code, const char **name)
}

// symbols lists every function the binding needs: the field, then the
// symbols to try in order (the versioned _v2 entry points first: the
// unversioned names are the CUDA 3 ABI kept for old binaries, with 32-bit
// sizes for some).
func (c *cuda) symbols() []struct {
	addr  *uintptr
	names []string
} {
	type s = struct {
		addr  *uintptr
		names []string
	}
	return []s{
		{&c.cuInit, []string{"cuInit"}},
		{&c.cuDriverGetVersion, []string{"cuDriverGetVersion"}},
		{&c.cuDeviceGetCount, []string{"cuDeviceGetCount"}},
		{&c.cuDeviceGet, []string{"cuDeviceGet"}},
		{&c.cuDeviceGetName, []string{"cuDeviceGetName"}},
		{&c.cuDeviceGetAttribute, []string{"cuDeviceGetAttribute"}},
		{&c.cuDeviceTotalMem, []string{"cuDeviceTotalMem_v2"}},
		{&c.cuPrimaryCtxRetain, []string{"cuDevicePrimaryCtxRetain"}},
		{&c.cuPrimaryCtxRelease, []string{"cuDevicePrimaryCtxRelease_v2", "cuDevicePrimaryCtxRelease"}},
		{&c.cuCtxSetCurrent, []string{"cuCtxSetCurrent"}},
		{&c.cuCtxSynchronize, []string{"cuCtxSynchronize"}},
		{&c.cuMemGetInfo, []string{"cuMemGetInfo_v2"}},
		{&c.cuMemAlloc, []string{"cuMemAlloc_v2"}},
		{&c.cuMemFree, []string{"cuMemFree_v2"}},
		{&c.cuMemHostAlloc, []string{"cuMemHostAlloc"}},
		{&c.cuMemFreeHost, []string{"cuMemFreeHost"}},
		{&c.cuDeviceCanAccessPeer, []string{"cuDeviceCanAccessPeer"}},
		{&c.cuCtxEnablePeerAccess, []string{"cuCtxEnablePeerAccess"}},
		{&c.cuMemcpyHtoDAsync, []string{"cuMemcpyHtoDAsync_v2"}},
		{&c.cuMemcpyDtoHAsync, []string{"cuMemcpyDtoHAsync_v2"}},
		{&c.cuMemcpyDtoDAsync, []string{"cuMemcpyDtoDAsync_v2"}},
		{&c.cuMemcpyPeerAsync, []string{"cuMemcpyPeerAsync"}},
		{&c.cuMemcpyHtoD, []string{"cuMemcpyHtoD_v2"}},
		{&c.cuMemcpyDtoH, []string{"cuMemcpyDtoH_v2"}},
		{&c.cuStreamCreate, []string{"cuStreamCreate"}},
		{&c.cuStreamDestroy, []string{"cuStreamDestroy_v2"}},
		{&c.cuStreamSynchronize, []string{"cuStreamSynchronize"}},
		{&c.cuStreamWaitEvent, []string{"cuStreamWaitEvent"}},
		{&c.cuEventCreate, []string{"cuEventCreate"}},
		{&c.cuEventDestroy, []string{"cuEventDestroy_v2"}},
		{&c.cuEventRecord, []string{"cuEventRecord"}},
		{&c.cuEventSynchronize, []string{"cuEventSynchronize"}},
		// CUDA 12.8 added cuEventElapsedTime_v2 (same arguments); CUDA 13
		// headers map the plain name to it.
		{&c.cuEventElapsedTime, []string{"cuEventElapsedTime_v2", "cuEventElapsedTime"}},
		{&c.cuModuleLoadDataEx, []string{"cuModuleLoadDataEx"}},
		{&c.cuModuleGetFunction, []string{"cuModuleGetFunction"}},
		{&c.cuModuleUnload, []string{"cuModuleUnload"}},
		{&c.cuFuncSetAttribute, []string{"cuFuncSetAttribute"}},
		{&c.cuOccupancy, []string{"cuOccupancyMaxActiveBlocksPerMultiprocessor"}},
		{&c.cuLaunchKernel, []string{"cuLaunchKernel"}},
		{&c.cuGetErrorName, []string{"cuGetErrorName"}},
	}
}

// bind looks every symbol up before registering any, so a driver missing one
// gives an error that names it instead of a crash at the first call.
func (c *cuda) bind(lookup func(string) (uintptr, error)) error {
	syms := c.symbols()
	addrs := make([]uintptr, len(syms))
	for i, s := range syms {
		var err error
		for _, n := range s.names {
			if addrs[i], err = lookup(n); err == nil && addrs[i] != 0 {
				break
			}
		}
		if addrs[i] == 0 {
			return &UnavailableError{What: fmt.Sprintf("the NVIDIA driver in %s has no %s: it is older than gpusim needs (CUDA 11 or later)", Library, strings.Join(s.names, " or "))}
		}
	}
	for i, s := range syms {
		*s.addr = addrs[i]
	}
	return nil
}

// Open loads the CUDA driver, initializes it and checks there is a device.
// Without a driver, a device or permission it returns an *UnavailableError.
func Open() (Driver, error) { return OpenLibrary(Library) }

// OpenLibrary is Open with the driver library at path (a file name alone is
// searched for as dlopen does).
func OpenLibrary(path string) (Driver, error) {
	c, err := open(path)
	if err != nil {
		return nil, err
	}
	return c, nil
}

// open is Open with the library at path (a test's stand-in driver).
func open(path string) (*cuda, error) {
	h, err := purego.Dlopen(path, purego.RTLD_NOW|purego.RTLD_GLOBAL)
	if err != nil {
		return nil, &UnavailableError{What: fmt.Sprintf("no NVIDIA driver found: %s could not be loaded (%v)", path, err)}
	}
	c := &cuda{}
	if err := c.bind(func(n string) (uintptr, error) { return purego.Dlsym(h, n) }); err != nil {
		return nil, err
	}
	if r := ret(purego.SyscallN(c.cuInit, 0)); r != 0 {
		e := c.err("cuInit", r)
		switch r {
		case errNoDevice:
			return nil, &UnavailableError{What: "the NVIDIA driver is loaded but reports no CUDA device (" + e.Error() + ")"}
		case errNotPermitted:
			return nil, &UnavailableError{What: "no permission to use the GPU (" + e.Error() + "); check access to /dev/nvidia*"}
		}
		return nil, &UnavailableError{What: "the NVIDIA driver failed to initialize: " + e.Error()}
	}
	n, err := c.DeviceCount()
	if err != nil {
		return nil, err
	}
	if n == 0 {
		return nil, &UnavailableError{What: "the NVIDIA driver is loaded but reports no CUDA device"}
	}
	return c, nil
}

func (c *cuda) err(call string, r int32) error {
	if r == 0 {
		return nil
	}
	e := &CUDAError{Call: call, Code: int(r)}
	var s *byte
	if c.cuGetErrorName != 0 && ret(purego.SyscallN(c.cuGetErrorName, uintptr(r), uintptr(unsafe.Pointer(&s)))) == 0 && s != nil {
		e.Name = goString(s)
	}
	return e
}

// ret is a call's CUresult: an int in the low half of the return register.
func ret(r1, _, _ uintptr) int32 { return int32(r1) }

func goString(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

func (c *cuda) Version() (int, error) {
	var v int32
	r := ret(purego.SyscallN(c.cuDriverGetVersion, uintptr(unsafe.Pointer(&v))))
	return int(v), c.err("cuDriverGetVersion", r)
}

func (c *cuda) DeviceCount() (int, error) {
	var n int32
	r := ret(purego.SyscallN(c.cuDeviceGetCount, uintptr(unsafe.Pointer(&n))))
	return int(n), c.err("cuDeviceGetCount", r)
}

func (c *cuda) device(ordinal int) (int32, error) {
	var d int32
	r := ret(purego.SyscallN(c.cuDeviceGet, uintptr(unsafe.Pointer(&d)), uintptr(int32(ordinal))))
	return d, c.err("cuDeviceGet", r)
}

func (c *cuda) DeviceName(dev int) (string, error) {
	d, err := c.device(dev)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	if err := c.err("cuDeviceGetName", ret(purego.SyscallN(c.cuDeviceGetName, uintptr(unsafe.Pointer(&buf[0])), uintptr(int32(len(buf))), uintptr(d)))); err != nil {
		return "", err
	}
	if i := strings.IndexByte(string(buf), 0); i >= 0 {
		buf = buf[:i]
	}
	return string(buf), nil
}

func (c *cuda) Attribute(dev int, a Attr) (int, error) {
	d, err := c.device(dev)
	if err != nil {
		return 0, err
	}
	var v int32
	r := ret(purego.SyscallN(c.cuDeviceGetAttribute, uintptr(unsafe.Pointer(&v)), uintptr(int32(a)), uintptr(d)))
	return int(v), c.err("cuDeviceGetAttribute", r)
}

func (c *cuda) TotalMem(dev int) (uint64, error) {
	d, err := c.device(dev)
	if err != nil {
		return 0, err
	}
	var b uint64
	r := ret(purego.SyscallN(c.cuDeviceTotalMem, uintptr(unsafe.Pointer(&b)), uintptr(d)))
	return b, c.err("cuDeviceTotalMem_v2", r)
}

func (c *cuda) PrimaryCtxRetain(dev int) (Context, error) {
	d, err := c.device(dev)
	if err != nil {
		return 0, err
	}
	var ctx uintptr
	r := ret(purego.SyscallN(c.cuPrimaryCtxRetain, uintptr(unsafe.Pointer(&ctx)), uintptr(d)))
	return Context(ctx), c.err("cuDevicePrimaryCtxRetain", r)
}

func (c *cuda) PrimaryCtxRelease(dev int) error {
	d, err := c.device(dev)
	if err != nil {
		return err
	}
	return c.err("cuDevicePrimaryCtxRelease", ret(purego.SyscallN(c.cuPrimaryCtxRelease, uintptr(d))))
}

func (c *cuda) SetCurrent(ctx Context) error {
	return c.err("cuCtxSetCurrent", ret(purego.SyscallN(c.cuCtxSetCurrent, uintptr(ctx))))
}

func (c *cuda) CtxSynchronize() error {
	return c.err("cuCtxSynchronize", ret(purego.SyscallN(c.cuCtxSynchronize)))
}

func (c *cuda) MemGetInfo() (uint64, uint64, error) {
	var free, total uint64
	err := c.err("cuMemGetInfo_v2", ret(purego.SyscallN(c.cuMemGetInfo, uintptr(unsafe.Pointer(&free)), uintptr(unsafe.Pointer(&total)))))
	return free, total, err
}

func (c *cuda) MemAlloc(n uint64) (DevicePtr, error) {
	var p uint64
	r := ret(purego.SyscallN(c.cuMemAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n)))
	return DevicePtr(p), c.err("cuMemAlloc_v2", r)
}

func (c *cuda) MemFree(p DevicePtr) error {
	return c.err("cuMemFree_v2", ret(purego.SyscallN(c.cuMemFree, uintptr(uint64(p)))))
}

// cuMemHostAlloc flags (cuda.h).
const memHostAllocPortable = 1

func (c *cuda) MemHostAlloc(n uint64) (HostPtr, error) {
	var p uintptr
	r := ret(purego.SyscallN(c.cuMemHostAlloc, uintptr(unsafe.Pointer(&p)), uintptr(n), uintptr(memHostAllocPortable)))
	return HostPtr(p), c.err("cuMemHostAlloc", r)
}

func (c *cuda) MemFreeHost(p HostPtr) error {
	return c.err("cuMemFreeHost", ret(purego.SyscallN(c.cuMemFreeHost, uintptr(p))))
}

func (c *cuda) CanAccessPeer(dev, peer int) (bool, error) {
	d, err := c.device(dev)
	if err != nil {
		return false, err
	}
	q, err := c.device(peer)
	if err != nil {
		return false, err
	}
	var ok int32
	err = c.err("cuDeviceCanAccessPeer", ret(purego.SyscallN(c.cuDeviceCanAccessPeer, uintptr(unsafe.Pointer(&ok)), uintptr(d), uintptr(q))))
	return ok != 0, err
}

func (c *cuda) EnablePeerAccess(peer Context) error {
	r := ret(purego.SyscallN(c.cuCtxEnablePeerAccess, uintptr(peer), 0))
	if r == errPeerAlreadyOn {
		return nil
	}
	return c.err("cuCtxEnablePeerAccess", r)
}

func (c *cuda) MemcpyHtoDAsync(dst DevicePtr, src HostPtr, n uint64, s Stream) error {
	return c.err("cuMemcpyHtoDAsync_v2", ret(purego.SyscallN(c.cuMemcpyHtoDAsync, uintptr(uint64(dst)), uintptr(src), uintptr(n), uintptr(s))))
}

func (c *cuda) MemcpyDtoHAsync(dst HostPtr, src DevicePtr, n uint64, s Stream) error {
	return c.err("cuMemcpyDtoHAsync_v2", ret(purego.SyscallN(c.cuMemcpyDtoHAsync, uintptr(dst), uintptr(uint64(src)), uintptr(n), uintptr(s))))
}

func (c *cuda) MemcpyDtoDAsync(dst, src DevicePtr, n uint64, s Stream) error {
	return c.err("cuMemcpyDtoDAsync_v2", ret(purego.SyscallN(c.cuMemcpyDtoDAsync, uintptr(uint64(dst)), uintptr(uint64(src)), uintptr(n), uintptr(s))))
}

func (c *cuda) MemcpyPeerAsync(dst DevicePtr, dctx Context, src DevicePtr, sctx Context, n uint64, s Stream) error {
	return c.err("cuMemcpyPeerAsync", ret(purego.SyscallN(c.cuMemcpyPeerAsync, uintptr(uint64(dst)), uintptr(dctx), uintptr(uint64(src)), uintptr(sctx), uintptr(n), uintptr(s))))
}

func (c *cuda) MemcpyHtoD(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	var pin runtime.Pinner
	pin.Pin(&src[0])
	defer pin.Unpin()
	return c.err("cuMemcpyHtoD_v2", ret(purego.SyscallN(c.cuMemcpyHtoD, uintptr(uint64(dst)), uintptr(unsafe.Pointer(&src[0])), uintptr(uint64(len(src))))))
}

func (c *cuda) MemcpyDtoH(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	var pin runtime.Pinner
	pin.Pin(&dst[0])
	defer pin.Unpin()
	return c.err("cuMemcpyDtoH_v2", ret(purego.SyscallN(c.cuMemcpyDtoH, uintptr(unsafe.Pointer(&dst[0])), uintptr(uint64(src)), uintptr(uint64(len(dst))))))
}

// Stream and event flags (cuda.h).
const (
	streamNonBlocking = 1
	eventDefault      = 0
)

func (c *cuda) StreamCreate() (Stream, error) {
	var s uintptr
	r := ret(purego.SyscallN(c.cuStreamCreate, uintptr(unsafe.Pointer(&s)), uintptr(streamNonBlocking)))
	return Stream(s), c.err("cuStreamCreate", r)
}

func (c *cuda) StreamDestroy(s Stream) error {
	return c.err("cuStreamDestroy_v2", ret(purego.SyscallN(c.cuStreamDestroy, uintptr(s))))
}

func (c *cuda) StreamSynchronize(s Stream) error {
	return c.err("cuStreamSynchronize", ret(purego.SyscallN(c.cuStreamSynchronize, uintptr(s))))
}

func (c *cuda) StreamWaitEvent(s Stream, e Event) error {
	return c.err("cuStreamWaitEvent", ret(purego.SyscallN(c.cuStreamWaitEvent, uintptr(s), uintptr(e), 0)))
}

func (c *cuda) EventCreate() (Event, error) {
	var e uintptr
	r := ret(purego.SyscallN(c.cuEventCreate, uintptr(unsafe.Pointer(&e)), uintptr(eventDefault)))
	return Event(e), c.err("cuEventCreate", r)
}

func (c *cuda) EventDestroy(e Event) error {
	return c.err("cuEventDestroy_v2", ret(purego.SyscallN(c.cuEventDestroy, uintptr(e))))
}

func (c *cuda) EventRecord(e Event, s Stream) error {
	return c.err("cuEventRecord", ret(purego.SyscallN(c.cuEventRecord, uintptr(e), uintptr(s))))
}

func (c *cuda) EventSynchronize(e Event) error {
	return c.err("cuEventSynchronize", ret(purego.SyscallN(c.cuEventSynchronize, uintptr(e))))
}

func (c *cuda) EventElapsed(start, end Event) (float32, error) {
	var ms float32
	r := ret(purego.SyscallN(c.cuEventElapsedTime, uintptr(unsafe.Pointer(&ms)), uintptr(start), uintptr(end)))
	return ms, c.err("cuEventElapsedTime", r)
}

// CUjit_option values (cuda.h).
const (
	jitErrorLogBuffer      = 5
	jitErrorLogBufferBytes = 6
)

func (c *cuda) ModuleLoad(image []byte) (Module, error) {
	if len(image) == 0 || image[len(image)-1] != 0 {
		return 0, fmt.Errorf("cuModuleLoadDataEx: the PTX image must end with a NUL byte")
	}
	logBuf := make([]byte, 8192)
	var pin runtime.Pinner
	pin.Pin(&logBuf[0])
	pin.Pin(&image[0])
	defer pin.Unpin()
	opts := []int32{jitErrorLogBuffer, jitErrorLogBufferBytes}
	vals := []uintptr{uintptr(unsafe.Pointer(&logBuf[0])), uintptr(len(logBuf))}
	var m uintptr
	r := ret(purego.SyscallN(c.cuModuleLoadDataEx, uintptr(unsafe.Pointer(&m)), uintptr(unsafe.Pointer(&image[0])), uintptr(uint32(len(opts))), uintptr(unsafe.Pointer(&opts[0])), uintptr(unsafe.Pointer(&vals[0]))))
	if r != 0 {
		e := c.err("cuModuleLoadDataEx", r).(*CUDAError)
		if i := strings.IndexByte(string(logBuf), 0); i >= 0 {
			logBuf = logBuf[:i]
		}
		e.Log = strings.TrimSpace(string(logBuf))
		return 0, e
	}
	return Module(m), nil
}

func (c *cuda) ModuleFunction(m Module, name string) (Function, error) {
	var f uintptr
	cname := append([]byte(name), 0)
	r := ret(purego.SyscallN(c.cuModuleGetFunction, uintptr(unsafe.Pointer(&f)), uintptr(m), uintptr(unsafe.Pointer(&cname[0]))))
	return Function(f), c.err("cuModuleGetFunction("+name+")", r)
}

func (c *cuda) ModuleUnload(m Module) error {
	return c.err("cuModuleUnload", ret(purego.SyscallN(c.cuModuleUnload, uintptr(m))))
}

// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (cuda.h).
const funcAttrMaxDynamicShared = 8

func (c *cuda) SetMaxDynamicShared(f Function, bytes int) error {
	return c.err("cuFuncSetAttribute", ret(purego.SyscallN(c.cuFuncSetAttribute, uintptr(f), uintptr(funcAttrMaxDynamicShared), uintptr(int32(bytes)))))
}

func (c *cuda) BlocksPerSM(f Function, block, shared uint32) (int, error) {
	var n int32
	r := ret(purego.SyscallN(c.cuOccupancy, uintptr(unsafe.Pointer(&n)), uintptr(f), uintptr(int32(block)), uintptr(shared)))
	return int(n), c.err("cuOccupancyMaxActiveBlocksPerMultiprocessor", r)
}

// launchArgs holds a launch's parameters and the array of pointers to them
// that cuLaunchKernel reads; pooled, so a launch allocates nothing.
type launchArgs struct {
	vals [maxArgs]uint64
	ptrs [maxArgs]unsafe.Pointer
	pin  runtime.Pinner
}

const maxArgs = 8

var argPool = sync.Pool{New: func() any { return new(launchArgs) }}

func (c *cuda) Launch(f Function, grid, block, shared uint32, s Stream, args ...Arg) error {
	if len(args) > maxArgs {
		return fmt.Errorf("cuLaunchKernel: %d parameters, at most %d", len(args), maxArgs)
	}
	// kernelParams is an array of pointers to the values; the driver copies
	// them during the call. Both live in Go memory pinned for the call.
	a := argPool.Get().(*launchArgs)
	defer argPool.Put(a)
	a.pin.Pin(a)
	defer a.pin.Unpin()
	for i, x := range args {
		a.vals[i] = x.Value // little-endian: a 4-byte parameter is the low half
		a.ptrs[i] = unsafe.Pointer(&a.vals[i])
	}
	var params unsafe.Pointer
	if len(args) > 0 {
		params = unsafe.Pointer(&a.ptrs[0])
	}
	return c.err("cuLaunchKernel", ret(purego.SyscallN(c.cuLaunchKernel, uintptr(f), uintptr(grid), 1, 1, uintptr(block), 1, 1, uintptr(shared), uintptr(s), uintptr(params), 0)))
}

func (c *cuda) Close() error { return nil }
