package hw

import (
	"errors"
	"fmt"
)

// Handles the driver gives out. They are opaque: the real driver's are C
// pointers (or, for device memory, addresses in the GPU's address space);
// the fake driver's are small integers.
type (
	Context   uintptr
	Stream    uintptr
	Event     uintptr
	Module    uintptr
	Function  uintptr
	DevicePtr uint64
	HostPtr   uintptr
)

// Attr is a device attribute (CUdevice_attribute).
type Attr int32

// The device attributes the backend and calibration read, with the values of
// CUdevice_attribute in cuda.h (CUDA 12 and 13 agree).
const (
	AttrSMs              Attr = 16 // CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT
	AttrClockKHz         Attr = 13 // CU_DEVICE_ATTRIBUTE_CLOCK_RATE
	AttrPCIBus           Attr = 33 // CU_DEVICE_ATTRIBUTE_PCI_BUS_ID
	AttrPCIDevice        Attr = 34 // CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID
	AttrMemoryClockKHz   Attr = 36 // CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE
	AttrMemoryBusWidth   Attr = 37 // CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH
	AttrCopyEngines      Attr = 40 // CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT
	AttrPCIDomain        Attr = 50 // CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID
	AttrCCMajor          Attr = 75 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR
	AttrCCMinor          Attr = 76 // CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR
	AttrSharedPerSM      Attr = 81 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR
	AttrSharedPerBlockIn Attr = 97 // CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN
)

// Driver is the part of the CUDA driver API that gpusim calls: what the
// backend and calibration need, nothing more. Every call that takes no
// context works on the calling OS thread's current context (SetCurrent), as
// in CUDA. The real implementation is Open's; NewFake's runs the same calls
// against a timing model, for tests without a GPU.
type Driver interface {
	// Version is the CUDA version the driver supports (12080 for 12.8).
	Version() (int, error)
	DeviceCount() (int, error)
	DeviceName(dev int) (string, error)
	Attribute(dev int, a Attr) (int, error)
	TotalMem(dev int) (uint64, error)
	// PrimaryCtxRetain returns dev's primary context (the runtime's); each
	// retain needs a PrimaryCtxRelease.
	PrimaryCtxRetain(dev int) (Context, error)
	PrimaryCtxRelease(dev int) error
	SetCurrent(Context) error
	CtxSynchronize() error
	MemGetInfo() (free, total uint64, err error)
	MemAlloc(bytes uint64) (DevicePtr, error)
	MemFree(DevicePtr) error
	// MemHostAlloc allocates pinned (page-locked) host memory, portable to
	// every context.
	MemHostAlloc(bytes uint64) (HostPtr, error)
	MemFreeHost(HostPtr) error
	CanAccessPeer(dev, peer int) (bool, error)
	// EnablePeerAccess lets the current context access peer's memory.
	EnablePeerAccess(peer Context) error
	MemcpyHtoDAsync(dst DevicePtr, src HostPtr, bytes uint64, s Stream) error
	MemcpyDtoHAsync(dst HostPtr, src DevicePtr, bytes uint64, s Stream) error
	MemcpyDtoDAsync(dst, src DevicePtr, bytes uint64, s Stream) error
	MemcpyPeerAsync(dst DevicePtr, dstCtx Context, src DevicePtr, srcCtx Context, bytes uint64, s Stream) error
	// MemcpyHtoD and MemcpyDtoH copy between Go memory and the device,
	// returning when done (for the backend's bookkeeping, not timed).
	MemcpyHtoD(dst DevicePtr, src []byte) error
	MemcpyDtoH(dst []byte, src DevicePtr) error
	// StreamCreate makes a non-blocking stream in the current context.
	StreamCreate() (Stream, error)
	StreamDestroy(Stream) error
	StreamSynchronize(Stream) error
	StreamWaitEvent(Stream, Event) error
	// EventCreate makes an event with timing in the current context.
	EventCreate() (Event, error)
	EventDestroy(Event) error
	EventRecord(Event, Stream) error
	EventSynchronize(Event) error
	// EventElapsed is the time from start to end in milliseconds (the
	// driver's resolution is about half a microsecond).
	EventElapsed(start, end Event) (float32, error)
	// ModuleLoad JIT-compiles a NUL-terminated PTX image in the current
	// context; a failure carries the compiler's log.
	ModuleLoad(image []byte) (Module, error)
	ModuleFunction(Module, string) (Function, error)
	ModuleUnload(Module) error
	// SetMaxDynamicShared lets f be launched with up to bytes of dynamic
	// shared memory (needed above 48 KiB).
	SetMaxDynamicShared(f Function, bytes int) error
	// BlocksPerSM is how many blocks of block threads, each with shared
	// bytes of dynamic shared memory, of f an SM holds at once (its
	// registers, threads and shared memory allow; cuOccupancy).
	BlocksPerSM(f Function, block, shared uint32) (int, error)
	// Launch runs f on grid blocks of block threads with shared bytes of
	// dynamic shared memory; args are its parameters, each 4 or 8 bytes.
	Launch(f Function, grid, block, shared uint32, s Stream, args ...Arg) error
	// Close releases the library (the real driver's handle stays loaded for
	// the process, as dlclose of libcuda is unsafe).
	Close() error
}

// Arg is one kernel parameter.
type Arg struct {
	Value uint64
	Size  int // 4 or 8
}

// U64 and U32 are kernel parameters of 8 and 4 bytes.
func U64(v uint64) Arg { return Arg{v, 8} }
func U32(v uint32) Arg { return Arg{uint64(v), 4} }

// UnavailableError says gpusim cannot reach a GPU: no driver library, no
// device, or no permission. The command line exits with status 3 on it.
type UnavailableError struct {
	// What is missing, in words ("no NVIDIA driver found: ...").
	What string
}

func (e *UnavailableError) Error() string { return e.What }

// IsUnavailable reports whether err says no GPU can be used.
func IsUnavailable(err error) bool {
	var u *UnavailableError
	return errors.As(err, &u)
}

// CUDAError is a CUresult other than CUDA_SUCCESS from a named call.
type CUDAError struct {
	Call string
	Code int
	Name string // "CUDA_ERROR_OUT_OF_MEMORY", when known
	Log  string // the JIT compiler's log, for module loads
}

func (e *CUDAError) Error() string {
	name := e.Name
	if name == "" {
		name = errorNames[e.Code]
	}
	if name == "" {
		name = "unknown error"
	}
	s := fmt.Sprintf("%s: %s (%d)", e.Call, name, e.Code)
	if kernelFailed[e.Code] {
		s += ": a kernel failed on the GPU (CUDA reports it at a call after the failed kernel's launch, and every CUDA call after it in this process fails)"
	}
	if e.Log != "" {
		s += ": " + e.Log
	}
	return s
}

// CUresult codes gpusim acts on (cuda.h).
const (
	errOutOfMemory   = 2
	errNoDevice      = 100
	errInvalidPTX    = 218
	errNotPermitted  = 800
	errPeerAlreadyOn = 704
)

// kernelFailed are the CUresults of a kernel that failed while it ran (a
// bad address, an illegal instruction, the watchdog): the failure is found
// after its launch returned, so CUDA returns it from a later call, often a
// synchronize, and the context is unusable from then on (cuda.h: "the
// process must be terminated and relaunched").
var kernelFailed = map[int]bool{700: true, 702: true, 714: true, 715: true, 716: true, 717: true, 718: true, 719: true}

var errorNames = map[int]string{
	1: "CUDA_ERROR_INVALID_VALUE", 2: "CUDA_ERROR_OUT_OF_MEMORY", 3: "CUDA_ERROR_NOT_INITIALIZED",
	4: "CUDA_ERROR_DEINITIALIZED", 34: "CUDA_ERROR_STUB_LIBRARY", 46: "CUDA_ERROR_DEVICE_UNAVAILABLE",
	100: "CUDA_ERROR_NO_DEVICE", 101: "CUDA_ERROR_INVALID_DEVICE", 214: "CUDA_ERROR_ECC_UNCORRECTABLE",
	200: "CUDA_ERROR_INVALID_IMAGE", 201: "CUDA_ERROR_INVALID_CONTEXT", 209: "CUDA_ERROR_NO_BINARY_FOR_GPU",
	218: "CUDA_ERROR_INVALID_PTX", 222: "CUDA_ERROR_UNSUPPORTED_PTX_VERSION", 400: "CUDA_ERROR_INVALID_HANDLE",
	500: "CUDA_ERROR_NOT_FOUND", 600: "CUDA_ERROR_NOT_READY", 700: "CUDA_ERROR_ILLEGAL_ADDRESS",
	701: "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES", 702: "CUDA_ERROR_LAUNCH_TIMEOUT", 704: "CUDA_ERROR_PEER_ACCESS_ALREADY_ENABLED",
	705: "CUDA_ERROR_PEER_ACCESS_NOT_ENABLED", 714: "CUDA_ERROR_HARDWARE_STACK_ERROR", 715: "CUDA_ERROR_ILLEGAL_INSTRUCTION",
	716: "CUDA_ERROR_MISALIGNED_ADDRESS", 717: "CUDA_ERROR_INVALID_ADDRESS_SPACE", 718: "CUDA_ERROR_INVALID_PC",
	711: "CUDA_ERROR_TOO_MANY_PEERS", 719: "CUDA_ERROR_LAUNCH_FAILED", 800: "CUDA_ERROR_NOT_PERMITTED",
	801: "CUDA_ERROR_NOT_SUPPORTED", 802: "CUDA_ERROR_SYSTEM_NOT_READY", 803: "CUDA_ERROR_SYSTEM_DRIVER_MISMATCH",
	804: "CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE", 999: "CUDA_ERROR_UNKNOWN",
}
