package hw

import (
	"encoding/binary"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"gpusim/hw/kernels"
)

// FakePath is a copy path of the fake driver: time = Latency + bytes/Bandwidth
// (a Bandwidth of zero, or infinite: Latency alone).
type FakePath struct {
	Latency   time.Duration
	Bandwidth float64 // bytes/s
}

func (p FakePath) time(n uint64) time.Duration {
	if p.Bandwidth <= 0 || math.IsInf(p.Bandwidth, 1) {
		return p.Latency
	}
	return p.Latency + time.Duration(math.Round(float64(n)/p.Bandwidth*1e9))
}

// FakeConfig describes the machine a fake driver pretends to drive. Its
// timing model is deliberately simple (each stream runs its ops in order, no
// copy-engine or link sharing) and exactly known, so tests can compute what a
// run must measure by hand.
type FakeConfig struct {
	Devices int
	Name    string // device name, "Fake GPU" if empty
	SMs     int    // 132 if zero
	// MemoryBytes is each device's memory (80 GB if zero).
	MemoryBytes uint64
	// FreeMemory, if set, is what cuMemGetInfo reports free on device i
	// (FreeMemory[i], bytes; devices past its end: the last); else
	// MemoryBytes less 1 GiB.
	FreeMemory []uint64
	// APICost is the host time of every driver call.
	APICost time.Duration
	// Latency is the time from a call to its op reaching the GPU.
	Latency time.Duration
	// KernelOverhead is the fixed GPU time of every kernel.
	KernelOverhead time.Duration
	// H2D, D2H, D2D and Peer time copies; Pageable, if its bandwidth is
	// set, times host-to-device and device-to-host copies from pageable
	// memory (which block the calling thread until done).
	H2D, D2H, D2D, Peer, Pageable FakePath
	// MemoryBandwidth (bytes/s) times the copy kernel, FLOPS the FMA kernel.
	MemoryBandwidth, FLOPS float64
	// NoPeer makes CanAccessPeer say no.
	NoPeer bool
	// BlocksPerSM is how many copy-kernel blocks an SM holds (8 if zero:
	// Hopper's 2048 threads in 256-thread blocks; Ada's 1536 hold 6).
	BlocksPerSM int
	// Slow adds host time to every call of the named function (a host
	// thread held up in it), before the call takes effect.
	Slow map[string]time.Duration
	// Drift, if set, adds host time to every call made at fake time now: a
	// host whose speed changes over time (a shared or virtual machine).
	Drift func(now time.Duration) time.Duration
	// EventRate, if set, makes the event clock run that much faster than
	// the host clock (1e-4: 100 ppm): what cuEventElapsedTime says of an
	// interval is its host time times 1 + EventRate.
	EventRate float64
	// Fail makes the named call (as in CUDA: "cuMemAlloc_v2") fail with
	// the given CUresult, from its FailAfter-th call on (0: the first).
	Fail      map[string]int
	FailAfter map[string]int
	// NUMA, if set, is the NUMA node of each device (devices past its
	// end: -1, unknown): the fake is then a machine of that many nodes,
	// whose threads Pin places (see ThreadNode). Unset, it is a machine
	// of one node.
	NUMA []int
	// NUMANodes, if set, is how many NUMA nodes the machine has (some
	// may hold no GPU); else as many as NUMA names.
	NUMANodes int
}

// Fake is a Driver that runs no GPU: it keeps a host clock and per-stream
// timelines under FakeConfig's model, logs every call, and counts what is
// allocated, so tests can check call sequences, timings and cleanup.
// It is also the Clock of runs that use it.
type Fake struct {
	cfg FakeConfig

	mu      sync.Mutex
	now     time.Duration
	cur     map[int]Context // OS thread -> its current context (as in CUDA)
	next    uintptr
	calls   []string
	count   map[string]int
	streams map[Stream]*fakeStream
	events  map[Event]*fakeEvent
	live    map[string]int // kind -> live objects
	funcs   map[Function]fakeFunc
	mem     map[DevicePtr]uint64 // 8-byte words stored by spin kernels or copies
	pinned  map[HostPtr]uint64   // pinned allocations and their sizes
	refs    map[int]int          // per device, its primary context's retains
	made    int                  // primary contexts made (retained from none)
	pins    map[int]int          // OS thread -> the NUMA node Pin put it on
}

// FakeTimerOffset is what the fake's GPU timer (%globaltimer, as spin
// kernels store it) reads at its time zero: a clock of its own, as on a GPU.
const FakeTimerOffset = 1_700_000_000_000_000_000

type fakeStream struct {
	dev  int
	tail time.Duration
}

type fakeFunc struct {
	name string
	dev  int // the device of the context whose module holds it
}

type fakeEvent struct {
	dev      int
	at       time.Duration
	recorded bool
}

// NewFake returns a fake driver.
func NewFake(cfg FakeConfig) *Fake {
	if cfg.SMs == 0 {
		cfg.SMs = 132
	}
	if cfg.Name == "" {
		cfg.Name = "Fake GPU"
	}
	if cfg.MemoryBytes == 0 {
		cfg.MemoryBytes = 80e9
	}
	return &Fake{cfg: cfg, next: 0x1000, count: map[string]int{}, streams: map[Stream]*fakeStream{},
		events: map[Event]*fakeEvent{}, live: map[string]int{}, funcs: map[Function]fakeFunc{}, mem: map[DevicePtr]uint64{}, pinned: map[HostPtr]uint64{}, refs: map[int]int{}, pins: map[int]int{}, cur: map[int]Context{}}
}

// ContextsMade counts the primary contexts made so far: the retains that
// found none (a driver makes one then, and destroys it at the last
// release).
func (f *Fake) ContextsMade() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.made
}

// Calls returns the driver calls made so far, in order.
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]string(nil), f.calls...)
}

// CallCounts counts the calls made so far, by name.
func (f *Fake) CallCounts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := map[string]int{}
	for _, c := range f.calls {
		n[c]++
	}
	return n
}

// Live returns what is allocated and not freed, by kind ("stream", "event",
// "device memory", "pinned memory", "module", "context"), as sorted
// "kind: n" lines; empty when everything was freed.
func (f *Fake) Live() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []string
	for k, n := range f.live {
		if n != 0 {
			out = append(out, fmt.Sprintf("%s: %d", k, n))
		}
	}
	sort.Strings(out)
	return out
}

// Now and Spin make the fake its runs' host clock.
func (f *Fake) Now() time.Duration {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *Fake) Spin(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now += d
}

// call logs a call, charges its host cost, and returns the injected failure.
// The caller holds f.mu.
func (f *Fake) call(name string) error {
	f.calls = append(f.calls, name)
	f.now += f.cfg.APICost + f.cfg.Slow[name]
	if f.cfg.Drift != nil {
		f.now += f.cfg.Drift(f.now)
	}
	k := f.count[name]
	f.count[name]++
	if code, ok := f.cfg.Fail[name]; ok && k >= f.cfg.FailAfter[name] {
		return &CUDAError{Call: name, Code: code}
	}
	return nil
}

func (f *Fake) handle(kind string) uintptr {
	f.next += 0x10
	f.live[kind]++
	return f.next
}

// dev is the device of the calling OS thread's current context (-1 if
// none). The caller holds f.mu.
func (f *Fake) dev() int { return int(f.cur[threadID()]) - 1 }

func (f *Fake) lock(name string) (func(), error) {
	f.mu.Lock()
	if err := f.call(name); err != nil {
		f.mu.Unlock()
		return func() {}, err
	}
	return f.mu.Unlock, nil
}

// errNoContext is CUDA_ERROR_INVALID_CONTEXT: a call that works on the
// current context made from an OS thread that has none.
const errNoContext = 201

// ctxLock is lock for the calls that work on the calling OS thread's
// current context: as in CUDA, they fail with CUDA_ERROR_INVALID_CONTEXT on
// a thread that has none (a goroutine not locked to the OS thread it set a
// context on, or one that never set one).
func (f *Fake) ctxLock(name string) (func(), error) {
	unlock, err := f.lock(name)
	if err == nil && f.dev() < 0 {
		unlock()
		return func() {}, &CUDAError{Call: name, Code: errNoContext}
	}
	return unlock, err
}

func (f *Fake) Version() (int, error) {
	unlock, err := f.lock("cuDriverGetVersion")
	defer unlock()
	return 13000, err
}

func (f *Fake) DeviceCount() (int, error) {
	unlock, err := f.lock("cuDeviceGetCount")
	defer unlock()
	return f.cfg.Devices, err
}

func (f *Fake) checkDev(dev int) error {
	if dev < 0 || dev >= f.cfg.Devices {
		return &CUDAError{Call: "cuDeviceGet", Code: 101}
	}
	return nil
}

func (f *Fake) DeviceName(dev int) (string, error) {
	unlock, err := f.lock("cuDeviceGetName")
	defer unlock()
	if err == nil {
		err = f.checkDev(dev)
	}
	return f.cfg.Name, err
}

func (f *Fake) Attribute(dev int, a Attr) (int, error) {
	unlock, err := f.lock("cuDeviceGetAttribute")
	defer unlock()
	if err == nil {
		err = f.checkDev(dev)
	}
	switch a {
	case AttrSMs:
		return f.cfg.SMs, err
	case AttrSharedPerSM:
		return 233472, err // H100: 228 KiB per SM
	case AttrSharedPerBlockIn:
		return 232448, err // H100: 227 KiB per block, opted in
	case AttrCopyEngines:
		return 3, err
	case AttrClockKHz:
		return 1980000, err
	case AttrCCMajor:
		return 9, err
	case AttrPCIBus:
		return fakeBus(dev), err // GPU i at 00000000:(18+10i):00.0
	}
	return 0, err
}

func (f *Fake) TotalMem(dev int) (uint64, error) {
	unlock, err := f.lock("cuDeviceTotalMem_v2")
	defer unlock()
	return f.cfg.MemoryBytes, err
}

func (f *Fake) PrimaryCtxRetain(dev int) (Context, error) {
	unlock, err := f.lock("cuDevicePrimaryCtxRetain")
	defer unlock()
	if err == nil {
		err = f.checkDev(dev)
	}
	if err != nil {
		return 0, err
	}
	f.live["context"]++
	if f.refs[dev]++; f.refs[dev] == 1 {
		f.made++
	}
	return Context(dev + 1), nil
}

func (f *Fake) PrimaryCtxRelease(dev int) error {
	unlock, err := f.lock("cuDevicePrimaryCtxRelease_v2")
	defer unlock()
	if err == nil {
		f.live["context"]--
		f.refs[dev]--
	}
	return err
}

func (f *Fake) SetCurrent(c Context) error {
	unlock, err := f.lock("cuCtxSetCurrent")
	defer unlock()
	if err == nil && c != 0 {
		f.cur[threadID()] = c
	} else if err == nil {
		delete(f.cur, threadID())
	}
	return err
}

func (f *Fake) CtxSynchronize() error {
	unlock, err := f.ctxLock("cuCtxSynchronize")
	defer unlock()
	for _, s := range f.streams {
		if s.dev == f.dev() {
			f.now = max(f.now, s.tail)
		}
	}
	return err
}

func (f *Fake) MemGetInfo() (uint64, uint64, error) {
	unlock, err := f.ctxLock("cuMemGetInfo_v2")
	defer unlock()
	if n := len(f.cfg.FreeMemory); n > 0 {
		return f.cfg.FreeMemory[max(0, min(f.dev(), n-1))], f.cfg.MemoryBytes, err
	}
	return f.cfg.MemoryBytes - 1<<30, f.cfg.MemoryBytes, err
}

func (f *Fake) MemAlloc(n uint64) (DevicePtr, error) {
	unlock, err := f.ctxLock("cuMemAlloc_v2")
	defer unlock()
	if err != nil {
		return 0, err
	}
	p := DevicePtr(f.handle("device memory"))
	f.next += uintptr(n+255) &^ 255 // address space of its size: slots do not collide
	return p, nil
}

func (f *Fake) MemFree(DevicePtr) error {
	unlock, err := f.ctxLock("cuMemFree_v2")
	defer unlock()
	if err == nil {
		f.live["device memory"]--
	}
	return err
}

func (f *Fake) MemHostAlloc(n uint64) (HostPtr, error) {
	unlock, err := f.ctxLock("cuMemHostAlloc")
	defer unlock()
	if err != nil {
		return 0, err
	}
	p := HostPtr(f.handle("pinned memory"))
	f.next += uintptr(n+255) &^ 255
	f.pinned[p] = n
	return p, nil
}

func (f *Fake) MemFreeHost(p HostPtr) error {
	unlock, err := f.ctxLock("cuMemFreeHost")
	defer unlock()
	if err == nil {
		f.live["pinned memory"]--
		delete(f.pinned, p)
	}
	return err
}

func (f *Fake) CanAccessPeer(dev, peer int) (bool, error) {
	unlock, err := f.lock("cuDeviceCanAccessPeer")
	defer unlock()
	return !f.cfg.NoPeer && dev != peer, err
}

func (f *Fake) EnablePeerAccess(Context) error {
	unlock, err := f.ctxLock("cuCtxEnablePeerAccess")
	defer unlock()
	return err
}

// enqueue places work of duration d on stream s, issued now; it returns the
// work's end. The caller holds f.mu.
func (f *Fake) enqueue(s Stream, d time.Duration) (time.Duration, error) {
	st, ok := f.streams[s]
	if !ok {
		return 0, &CUDAError{Call: "enqueue", Code: 400}
	}
	start := max(f.now+f.cfg.Latency, st.tail)
	st.tail = start + d
	return st.tail, nil
}

func (f *Fake) memcpy(name string, s Stream, d time.Duration, blocking bool) error {
	unlock, err := f.ctxLock(name)
	defer unlock()
	if err != nil {
		return err
	}
	end, err := f.enqueue(s, d)
	if err == nil && blocking {
		f.now = max(f.now, end)
	}
	return err
}

// pageable reports whether a host pointer is in none of the fake's pinned
// allocations.
func (f *Fake) pageable(p HostPtr) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for base, n := range f.pinned {
		if p >= base && p < base+HostPtr(n) {
			return false
		}
	}
	return true
}

func (f *Fake) MemcpyHtoDAsync(dst DevicePtr, src HostPtr, n uint64, s Stream) error {
	if f.pageable(src) && f.cfg.Pageable.Bandwidth > 0 {
		return f.memcpy("cuMemcpyHtoDAsync_v2", s, f.cfg.Pageable.time(n), true)
	}
	return f.memcpy("cuMemcpyHtoDAsync_v2", s, f.cfg.H2D.time(n), false)
}

func (f *Fake) MemcpyDtoHAsync(dst HostPtr, src DevicePtr, n uint64, s Stream) error {
	if f.pageable(dst) && f.cfg.Pageable.Bandwidth > 0 {
		return f.memcpy("cuMemcpyDtoHAsync_v2", s, f.cfg.Pageable.time(n), true)
	}
	return f.memcpy("cuMemcpyDtoHAsync_v2", s, f.cfg.D2H.time(n), false)
}

func (f *Fake) MemcpyDtoDAsync(dst, src DevicePtr, n uint64, s Stream) error {
	return f.memcpy("cuMemcpyDtoDAsync_v2", s, f.cfg.D2D.time(n), false)
}

func (f *Fake) MemcpyPeerAsync(dst DevicePtr, dctx Context, src DevicePtr, sctx Context, n uint64, s Stream) error {
	return f.memcpy("cuMemcpyPeerAsync", s, f.cfg.Peer.time(n), false)
}

func (f *Fake) MemcpyHtoD(dst DevicePtr, src []byte) error {
	unlock, err := f.ctxLock("cuMemcpyHtoD_v2")
	defer unlock()
	for i := 0; i+8 <= len(src); i += 8 {
		f.mem[dst+DevicePtr(i)] = binary.LittleEndian.Uint64(src[i:])
	}
	return err
}

func (f *Fake) MemcpyDtoH(dst []byte, src DevicePtr) error {
	unlock, err := f.ctxLock("cuMemcpyDtoH_v2")
	defer unlock()
	for i := 0; i+8 <= len(dst); i += 8 {
		binary.LittleEndian.PutUint64(dst[i:], f.mem[src+DevicePtr(i)])
	}
	return err
}

func (f *Fake) StreamCreate() (Stream, error) {
	unlock, err := f.ctxLock("cuStreamCreate")
	defer unlock()
	if err != nil {
		return 0, err
	}
	s := Stream(f.handle("stream"))
	f.streams[s] = &fakeStream{dev: f.dev()}
	return s, nil
}

func (f *Fake) StreamDestroy(s Stream) error {
	unlock, err := f.ctxLock("cuStreamDestroy_v2")
	defer unlock()
	if err == nil {
		delete(f.streams, s)
		f.live["stream"]--
	}
	return err
}

func (f *Fake) StreamSynchronize(s Stream) error {
	unlock, err := f.lock("cuStreamSynchronize")
	defer unlock()
	if st, ok := f.streams[s]; ok && err == nil {
		f.now = max(f.now, st.tail)
	}
	return err
}

func (f *Fake) StreamWaitEvent(s Stream, e Event) error {
	unlock, err := f.ctxLock("cuStreamWaitEvent")
	defer unlock()
	st, ok := f.streams[s]
	ev, ok2 := f.events[e]
	if err == nil && ok && ok2 && ev.recorded {
		st.tail = max(st.tail, ev.at)
	}
	return err
}

func (f *Fake) EventCreate() (Event, error) {
	unlock, err := f.ctxLock("cuEventCreate")
	defer unlock()
	if err != nil {
		return 0, err
	}
	e := Event(f.handle("event"))
	f.events[e] = &fakeEvent{dev: f.dev()}
	return e, nil
}

func (f *Fake) EventDestroy(e Event) error {
	unlock, err := f.ctxLock("cuEventDestroy_v2")
	defer unlock()
	if err == nil {
		delete(f.events, e)
		f.live["event"]--
	}
	return err
}

func (f *Fake) EventRecord(e Event, s Stream) error {
	unlock, err := f.ctxLock("cuEventRecord")
	defer unlock()
	if err != nil {
		return err
	}
	// The event and the stream must be of one context.
	ev, ok := f.events[e]
	if st, sok := f.streams[s]; !ok || sok && st.dev != ev.dev {
		return &CUDAError{Call: "cuEventRecord", Code: 400}
	}
	at, err := f.enqueue(s, 0)
	ev.at, ev.recorded = at, true
	return err
}

func (f *Fake) EventSynchronize(e Event) error {
	unlock, err := f.lock("cuEventSynchronize")
	defer unlock()
	if ev, ok := f.events[e]; ok && err == nil && ev.recorded {
		f.now = max(f.now, ev.at)
	}
	return err
}

func (f *Fake) EventElapsed(start, end Event) (float32, error) {
	unlock, err := f.lock("cuEventElapsedTime")
	defer unlock()
	if err != nil {
		return 0, err
	}
	a, ok := f.events[start]
	b, ok2 := f.events[end]
	if !ok || !ok2 || !a.recorded || !b.recorded {
		return 0, &CUDAError{Call: "cuEventElapsedTime", Code: 400}
	}
	return float32(float64(b.at-a.at) * (1 + f.cfg.EventRate) / 1e6), nil
}

func (f *Fake) ModuleLoad(image []byte) (Module, error) {
	unlock, err := f.ctxLock("cuModuleLoadDataEx")
	defer unlock()
	if err != nil {
		return 0, err
	}
	if len(image) == 0 || image[len(image)-1] != 0 {
		return 0, &CUDAError{Call: "cuModuleLoadDataEx", Code: errInvalidPTX, Log: "image not NUL-terminated"}
	}
	return Module(f.handle("module")), nil
}

func (f *Fake) ModuleFunction(m Module, name string) (Function, error) {
	unlock, err := f.ctxLock("cuModuleGetFunction")
	defer unlock()
	if err != nil {
		return 0, err
	}
	switch name {
	case kernels.Spin, kernels.Copy, kernels.FMA:
	default:
		return 0, &CUDAError{Call: "cuModuleGetFunction(" + name + ")", Code: 500}
	}
	f.next += 0x10
	fn := Function(f.next)
	f.funcs[fn] = fakeFunc{name, f.dev()}
	return fn, nil
}

func (f *Fake) ModuleUnload(Module) error {
	unlock, err := f.ctxLock("cuModuleUnload")
	defer unlock()
	if err == nil {
		f.live["module"]--
	}
	return err
}

// BlocksPerSM is FakeConfig.BlocksPerSM (8 if zero) for the copy kernel,
// and 1 for the others (a spin kernel holds an SM).
func (f *Fake) BlocksPerSM(fn Function, block, shared uint32) (int, error) {
	unlock, err := f.ctxLock("cuOccupancyMaxActiveBlocksPerMultiprocessor")
	defer unlock()
	if err != nil {
		return 0, err
	}
	if f.funcs[fn].name != kernels.Copy {
		return 1, nil
	}
	if f.cfg.BlocksPerSM > 0 {
		return f.cfg.BlocksPerSM, nil
	}
	return 8, nil
}

func (f *Fake) SetMaxDynamicShared(Function, int) error {
	unlock, err := f.lock("cuFuncSetAttribute")
	defer unlock()
	return err
}

func (f *Fake) Launch(fn Function, grid, block, shared uint32, s Stream, args ...Arg) error {
	unlock, err := f.ctxLock("cuLaunchKernel")
	defer unlock()
	if err != nil {
		return err
	}
	// A function runs in the context of its module, on that context's
	// streams: launched from another, CUDA_ERROR_INVALID_HANDLE.
	fun, ok := f.funcs[fn]
	if st, sok := f.streams[s]; ok && sok && (fun.dev != f.dev() || st.dev != f.dev()) {
		return &CUDAError{Call: "cuLaunchKernel", Code: 400}
	}
	d := f.cfg.KernelOverhead
	switch fun.name {
	case kernels.Spin:
		d += time.Duration(args[0].Value)
		if len(args) > 1 && args[1].Value != 0 {
			st, ok := f.streams[s]
			if !ok {
				return &CUDAError{Call: "cuLaunchKernel", Code: 400}
			}
			// The kernel begins (its first block reads the timer) after the
			// overhead and stops when its spin is done, which ends it:
			// stored as the fake GPU's timer reads then.
			start := max(f.now+f.cfg.Latency, st.tail) + f.cfg.KernelOverhead
			// As the kernel's blocks, all starting together, take the
			// first word down and the second up.
			at := DevicePtr(args[1].Value)
			f.mem[at] = min(f.mem[at], uint64(FakeTimerOffset+int64(start)))
			f.mem[at+8] = max(f.mem[at+8], uint64(FakeTimerOffset+int64(start)+int64(args[0].Value)))
		}
	case kernels.Copy:
		if f.cfg.MemoryBandwidth > 0 {
			d += time.Duration(float64(args[2].Value) * kernels.CopyBytesPerElem * 2 / f.cfg.MemoryBandwidth * 1e9)
		}
	case kernels.FMA:
		if f.cfg.FLOPS > 0 {
			flops := float64(grid) * float64(block) * float64(args[1].Value) * kernels.FMAFlopsPerIter
			d += time.Duration(flops / f.cfg.FLOPS * 1e9)
		}
	default:
		return &CUDAError{Call: "cuLaunchKernel", Code: 400}
	}
	_, err = f.enqueue(s, d)
	return err
}

func (f *Fake) Close() error { return nil }

func fakeBus(dev int) int { return 0x18 + 0x10*dev }

// Nodes is FakeConfig.NUMANodes, or how many distinct NUMA nodes
// FakeConfig.NUMA names (1 if none):
// the fake is the NUMA of runs that use it, as it is their Clock.
func (f *Fake) Nodes() int {
	if f.cfg.NUMANodes > 0 {
		return f.cfg.NUMANodes
	}
	seen := map[int]bool{}
	for _, n := range f.cfg.NUMA {
		if n >= 0 {
			seen[n] = true
		}
	}
	return max(len(seen), 1)
}

// DeviceNode is the node FakeConfig.NUMA gives the device at the bus
// Attribute reports for it.
func (f *Fake) DeviceNode(domain, bus, device int) int {
	for dev, n := range f.cfg.NUMA {
		if domain == 0 && device == 0 && bus == fakeBus(dev) {
			return n
		}
	}
	return -1
}

// Pin notes that the calling OS thread runs on node until undo (it binds
// nothing); ThreadNode reads it back.
func (f *Fake) Pin(node int) (func() error, error) {
	tid := threadID()
	f.mu.Lock()
	defer f.mu.Unlock()
	if node < 0 || node >= f.Nodes() {
		return nil, fmt.Errorf("no NUMA node %d", node)
	}
	if _, ok := f.pins[tid]; ok {
		return nil, fmt.Errorf("OS thread %d is pinned already", tid)
	}
	f.pins[tid] = node
	return func() error {
		f.mu.Lock()
		defer f.mu.Unlock()
		delete(f.pins, tid)
		return nil
	}, nil
}

// ThreadNode is the NUMA node Pin put the calling OS thread on, -1 if none.
func (f *Fake) ThreadNode() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	if n, ok := f.pins[threadID()]; ok {
		return n
	}
	return -1
}

// Pinned counts the OS threads Pin has placed and not yet put back.
func (f *Fake) Pinned() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.pins)
}
