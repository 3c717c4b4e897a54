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
	cuInit                func(flags uint32) int32
	cuDriverGetVersion    func(v *int32) int32
	cuDeviceGetCount      func(n *int32) int32
	cuDeviceGet           func(dev *int32, ordinal int32) int32
	cuDeviceGetName       func(name *byte, n int32, dev int32) int32
	cuDeviceGetAttribute  func(v *int32, a int32, dev int32) int32
	cuDeviceTotalMem      func(b *uint64, dev int32) int32
	cuPrimaryCtxRetain    func(ctx *uintptr, dev int32) int32
	cuPrimaryCtxRelease   func(dev int32) int32
	cuCtxSetCurrent       func(ctx uintptr) int32
	cuCtxSynchronize      func() int32
	cuMemGetInfo          func(free, total *uint64) int32
	cuMemAlloc            func(p *uint64, n uint64) int32
	cuMemFree             func(p uint64) int32
	cuMemHostAlloc        func(p *uintptr, n uint64, flags uint32) int32
	cuMemFreeHost         func(p uintptr) int32
	cuDeviceCanAccessPeer func(ok *int32, dev, peer int32) int32
	cuCtxEnablePeerAccess func(peer uintptr, flags uint32) int32
	cuMemcpyHtoDAsync     func(dst uint64, src uintptr, n uint64, s uintptr) int32
	cuMemcpyDtoHAsync     func(dst uintptr, src uint64, n uint64, s uintptr) int32
	cuMemcpyDtoDAsync     func(dst, src uint64, n uint64, s uintptr) int32
	cuMemcpyPeerAsync     func(dst uint64, dctx uintptr, src uint64, sctx uintptr, n uint64, s uintptr) int32
	cuMemcpyHtoD          func(dst uint64, src unsafe.Pointer, n uint64) int32
	cuMemcpyDtoH          func(dst unsafe.Pointer, src uint64, n uint64) int32
	cuStreamCreate        func(s *uintptr, flags uint32) int32
	cuStreamDestroy       func(s uintptr) int32
	cuStreamSynchronize   func(s uintptr) int32
	cuStreamWaitEvent     func(s, e uintptr, flags uint32) int32
	cuEventCreate         func(e *uintptr, flags uint32) int32
	cuEventDestroy        func(e uintptr) int32
	cuEventRecord         func(e, s uintptr) int32
	cuEventSynchronize    func(e uintptr) int32
	cuEventElapsedTime    func(ms *float32, start, end uintptr) int32
	cuModuleLoadDataEx    func(m *uintptr, image unsafe.Pointer, n uint32, opts *int32, vals *uintptr) int32
	cuModuleGetFunction   func(f *uintptr, m uintptr, name string) int32
	cuModuleUnload        func(m uintptr) int32
	cuFuncSetAttribute    func(f uintptr, a int32, v int32) int32
	cuLaunchKernel        func(f uintptr, gx, gy, gz, bx, by, bz, shared uint32, s uintptr, params unsafe.Pointer, extra unsafe.Pointer) int32
	cuGetErrorName        func(code int32, s **byte) int32
}

// symbols lists every function the binding needs: the field, then the
// symbols to try in order (the versioned _v2 entry points first: the
// unversioned names are the CUDA 3 ABI kept for old binaries, with 32-bit
// sizes for some).
func (c *cuda) symbols() []struct {
	fptr  any
	names []string
} {
	type s = struct {
		fptr  any
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
		purego.RegisterFunc(s.fptr, addrs[i])
	}
	return nil
}

// Open loads the CUDA driver, initializes it and checks there is a device.
// Without a driver, a device or permission it returns an *UnavailableError.
func Open() (Driver, error) {
	c, err := open(Library)
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
	if r := c.cuInit(0); r != 0 {
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
	if c.cuGetErrorName != nil && c.cuGetErrorName(r, &s) == 0 && s != nil {
		e.Name = goString(s)
	}
	return e
}

func goString(p *byte) string {
	var b []byte
	for q := unsafe.Pointer(p); *(*byte)(q) != 0; q = unsafe.Add(q, 1) {
		b = append(b, *(*byte)(q))
	}
	return string(b)
}

func (c *cuda) Version() (int, error) {
	var v int32
	return int(v), c.err("cuDriverGetVersion", c.cuDriverGetVersion(&v))
}

func (c *cuda) DeviceCount() (int, error) {
	var n int32
	return int(n), c.err("cuDeviceGetCount", c.cuDeviceGetCount(&n))
}

func (c *cuda) device(ordinal int) (int32, error) {
	var d int32
	return d, c.err("cuDeviceGet", c.cuDeviceGet(&d, int32(ordinal)))
}

func (c *cuda) DeviceName(dev int) (string, error) {
	d, err := c.device(dev)
	if err != nil {
		return "", err
	}
	buf := make([]byte, 256)
	if err := c.err("cuDeviceGetName", c.cuDeviceGetName(&buf[0], int32(len(buf)), d)); err != nil {
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
	return int(v), c.err("cuDeviceGetAttribute", c.cuDeviceGetAttribute(&v, int32(a), d))
}

func (c *cuda) TotalMem(dev int) (uint64, error) {
	d, err := c.device(dev)
	if err != nil {
		return 0, err
	}
	var b uint64
	return b, c.err("cuDeviceTotalMem_v2", c.cuDeviceTotalMem(&b, d))
}

func (c *cuda) PrimaryCtxRetain(dev int) (Context, error) {
	d, err := c.device(dev)
	if err != nil {
		return 0, err
	}
	var ctx uintptr
	return Context(ctx), c.err("cuDevicePrimaryCtxRetain", c.cuPrimaryCtxRetain(&ctx, d))
}

func (c *cuda) PrimaryCtxRelease(dev int) error {
	d, err := c.device(dev)
	if err != nil {
		return err
	}
	return c.err("cuDevicePrimaryCtxRelease", c.cuPrimaryCtxRelease(d))
}

func (c *cuda) SetCurrent(ctx Context) error {
	return c.err("cuCtxSetCurrent", c.cuCtxSetCurrent(uintptr(ctx)))
}

func (c *cuda) CtxSynchronize() error { return c.err("cuCtxSynchronize", c.cuCtxSynchronize()) }

func (c *cuda) MemGetInfo() (uint64, uint64, error) {
	var free, total uint64
	err := c.err("cuMemGetInfo_v2", c.cuMemGetInfo(&free, &total))
	return free, total, err
}

func (c *cuda) MemAlloc(n uint64) (DevicePtr, error) {
	var p uint64
	return DevicePtr(p), c.err("cuMemAlloc_v2", c.cuMemAlloc(&p, n))
}

func (c *cuda) MemFree(p DevicePtr) error { return c.err("cuMemFree_v2", c.cuMemFree(uint64(p))) }

// cuMemHostAlloc flags (cuda.h).
const memHostAllocPortable = 1

func (c *cuda) MemHostAlloc(n uint64) (HostPtr, error) {
	var p uintptr
	return HostPtr(p), c.err("cuMemHostAlloc", c.cuMemHostAlloc(&p, n, memHostAllocPortable))
}

func (c *cuda) MemFreeHost(p HostPtr) error {
	return c.err("cuMemFreeHost", c.cuMemFreeHost(uintptr(p)))
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
	err = c.err("cuDeviceCanAccessPeer", c.cuDeviceCanAccessPeer(&ok, d, q))
	return ok != 0, err
}

func (c *cuda) EnablePeerAccess(peer Context) error {
	r := c.cuCtxEnablePeerAccess(uintptr(peer), 0)
	if r == errPeerAlreadyOn {
		return nil
	}
	return c.err("cuCtxEnablePeerAccess", r)
}

func (c *cuda) MemcpyHtoDAsync(dst DevicePtr, src HostPtr, n uint64, s Stream) error {
	return c.err("cuMemcpyHtoDAsync_v2", c.cuMemcpyHtoDAsync(uint64(dst), uintptr(src), n, uintptr(s)))
}

func (c *cuda) MemcpyDtoHAsync(dst HostPtr, src DevicePtr, n uint64, s Stream) error {
	return c.err("cuMemcpyDtoHAsync_v2", c.cuMemcpyDtoHAsync(uintptr(dst), uint64(src), n, uintptr(s)))
}

func (c *cuda) MemcpyDtoDAsync(dst, src DevicePtr, n uint64, s Stream) error {
	return c.err("cuMemcpyDtoDAsync_v2", c.cuMemcpyDtoDAsync(uint64(dst), uint64(src), n, uintptr(s)))
}

func (c *cuda) MemcpyPeerAsync(dst DevicePtr, dctx Context, src DevicePtr, sctx Context, n uint64, s Stream) error {
	return c.err("cuMemcpyPeerAsync", c.cuMemcpyPeerAsync(uint64(dst), uintptr(dctx), uint64(src), uintptr(sctx), n, uintptr(s)))
}

func (c *cuda) MemcpyHtoD(dst DevicePtr, src []byte) error {
	if len(src) == 0 {
		return nil
	}
	var pin runtime.Pinner
	pin.Pin(&src[0])
	defer pin.Unpin()
	return c.err("cuMemcpyHtoD_v2", c.cuMemcpyHtoD(uint64(dst), unsafe.Pointer(&src[0]), uint64(len(src))))
}

func (c *cuda) MemcpyDtoH(dst []byte, src DevicePtr) error {
	if len(dst) == 0 {
		return nil
	}
	var pin runtime.Pinner
	pin.Pin(&dst[0])
	defer pin.Unpin()
	return c.err("cuMemcpyDtoH_v2", c.cuMemcpyDtoH(unsafe.Pointer(&dst[0]), uint64(src), uint64(len(dst))))
}

// Stream and event flags (cuda.h).
const (
	streamNonBlocking = 1
	eventDefault      = 0
)

func (c *cuda) StreamCreate() (Stream, error) {
	var s uintptr
	return Stream(s), c.err("cuStreamCreate", c.cuStreamCreate(&s, streamNonBlocking))
}

func (c *cuda) StreamDestroy(s Stream) error {
	return c.err("cuStreamDestroy_v2", c.cuStreamDestroy(uintptr(s)))
}

func (c *cuda) StreamSynchronize(s Stream) error {
	return c.err("cuStreamSynchronize", c.cuStreamSynchronize(uintptr(s)))
}

func (c *cuda) StreamWaitEvent(s Stream, e Event) error {
	return c.err("cuStreamWaitEvent", c.cuStreamWaitEvent(uintptr(s), uintptr(e), 0))
}

func (c *cuda) EventCreate() (Event, error) {
	var e uintptr
	return Event(e), c.err("cuEventCreate", c.cuEventCreate(&e, eventDefault))
}

func (c *cuda) EventDestroy(e Event) error {
	return c.err("cuEventDestroy_v2", c.cuEventDestroy(uintptr(e)))
}

func (c *cuda) EventRecord(e Event, s Stream) error {
	return c.err("cuEventRecord", c.cuEventRecord(uintptr(e), uintptr(s)))
}

func (c *cuda) EventSynchronize(e Event) error {
	return c.err("cuEventSynchronize", c.cuEventSynchronize(uintptr(e)))
}

func (c *cuda) EventElapsed(start, end Event) (float32, error) {
	var ms float32
	return ms, c.err("cuEventElapsedTime", c.cuEventElapsedTime(&ms, uintptr(start), uintptr(end)))
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
	r := c.cuModuleLoadDataEx(&m, unsafe.Pointer(&image[0]), uint32(len(opts)), &opts[0], &vals[0])
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
	return Function(f), c.err("cuModuleGetFunction("+name+")", c.cuModuleGetFunction(&f, uintptr(m), name))
}

func (c *cuda) ModuleUnload(m Module) error {
	return c.err("cuModuleUnload", c.cuModuleUnload(uintptr(m)))
}

// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES (cuda.h).
const funcAttrMaxDynamicShared = 8

func (c *cuda) SetMaxDynamicShared(f Function, bytes int) error {
	return c.err("cuFuncSetAttribute", c.cuFuncSetAttribute(uintptr(f), funcAttrMaxDynamicShared, int32(bytes)))
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
	return c.err("cuLaunchKernel", c.cuLaunchKernel(uintptr(f), grid, 1, 1, block, 1, 1, shared, uintptr(s), params, nil))
}

func (c *cuda) Close() error { return nil }
