package hw

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"time"

	"gpusim/hw/kernels"
	"gpusim/sim"
)

// Clock is the host's clock as the backend reads it: Now is the time since
// an arbitrary origin, Spin keeps the calling thread busy for d. The real
// one is the monotonic wall clock; a fake driver brings its own (NewFake).
type Clock interface {
	Now() time.Duration
	Spin(d time.Duration)
}

type wallClock struct{ t0 time.Time }

func (c wallClock) Now() time.Duration { return time.Since(c.t0) }

func (c wallClock) Spin(d time.Duration) {
	end := time.Since(c.t0) + d
	for time.Since(c.t0) < end {
	}
}

// Options tune a hardware run.
type Options struct {
	// Clock is the host clock; nil uses the driver's own if it has one
	// (the fake driver does), else the wall clock.
	Clock Clock
	// NUMA places the topology's hosts on the machine's NUMA nodes; nil
	// uses the driver's own if it has one (the fake driver does), else
	// SystemNUMA.
	NUMA NUMA
	// HostFree says how much host memory is free (ok false: not known);
	// the run refuses copies whose host buffers would not fit in it. Nil
	// checks nothing.
	HostFree func() (free uint64, ok bool)
}

// Info is what a hardware run found out beside the result.
type Info struct {
	// DriverVersion is the CUDA version of the driver (12080 for 12.8).
	DriverVersion int
	// Devices names each GPU the program used, by machine GPU index
	// ("" for unused ones).
	Devices []string
	// Align is, per used GPU, the spread (P90 - P10) of the offsets between
	// its event clock and the host clock over the alignment's samples: how
	// far an event's time on the host clock may be off; zero for unused GPUs.
	Align []time.Duration
	// Drift is, per used GPU, how far its event clock moved against the
	// host clock from the alignment before the run to the same
	// measurement after it (positive: the host clock ran faster): how far
	// the run's last events may be off, where the first are within Align.
	Drift []time.Duration
	// SpinOverhead is, per used GPU, the measured duration of a spin kernel
	// asked to spin for zero time: the fixed cost of a kernel as events see
	// it. Kernels are asked to spin for their duration less this, so they
	// last their duration.
	SpinOverhead []sim.Time
	// SpinOverheadStamped is, per used GPU, the same as the backend
	// measures a kernel (from the times the kernel stores, placed on the
	// host clock): the median of the timer placement's zero-time spins,
	// each behind a busy kernel and an event. Not used to size kernels;
	// printed beside SpinOverhead so that a GPU run shows how far the two
	// estimates of a kernel's fixed cost differ (the 4 us kernels of the
	// 2026-11-29 H200 runs measured 4.16 us).
	SpinOverheadStamped []sim.Time
	// SpinOvershoot is, per used GPU, how much longer than asked a spin
	// kernel spins (the GPU timer it reads ticks coarsely); kernels ask for
	// that much less.
	SpinOvershoot []sim.Time
	// HostNodes is, per host of the topology, the NUMA node of this
	// machine its threads ran on and its copies' host memory came from
	// (the node of the GPUs the topology attaches to it); -1 where the
	// OS placed them (a machine of one node, or a host not used).
	HostNodes []int
	// Warnings about what the backend could not do as the program says.
	Warnings []string
}

// Run executes p on the GPUs of the machine drv drives, with machine GPU i
// as device i, and returns what happened in the simulator's result format:
// one record per op with host-clock times (Call, HostEnd) and event-clock
// times (Start, End) placed on the host clock. Each host thread is a
// goroutine locked to its OS thread issuing its ops in program order. Every
// stream op is followed on its stream by a timing event: its end, and the
// start of the next op on a busy stream (an op issued to an idle stream
// starts when its call returned; see result). One event per op keeps the
// GPU's extra work to one event record between ops; the host time of an op
// includes that cuEventRecord call, which calibration measures the same way. Kernels are spin kernels holding ceil(SMShare x SMs)
// SMs, one block per SM, but for kernels of memory traffic alone, which
// run as the memory kernel moving it (see planMemory); copies move bytes between buffers allocated up
// front (pinned with cuMemHostAlloc, pageable with mmap, device with
// cuMemAlloc), checked against free memory first; host ops spin on the host
// clock. Everything allocated is freed on every return path; cancelling
// ctx stops the threads between ops.
func Run(ctx context.Context, drv Driver, m *sim.Machine, p *sim.Program, opt Options) (*sim.Result, *Info, error) {
	if err := p.Validate(m); err != nil {
		return nil, nil, err
	}
	// A CUDA context is current on an OS thread, and a goroutine may move
	// between OS threads: the setup, the bookkeeping and the cleanup stay on
	// this one.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	defer drv.SetCurrent(0) // the thread goes back to Go's pool with no context
	b := &backend{drv: drv, m: m, p: p, clock: opt.Clock, numa: NUMAFor(drv, opt.NUMA), hostFree: opt.HostFree}
	if b.clock == nil {
		if c, ok := drv.(Clock); ok {
			b.clock = c
		} else {
			b.clock = wallClock{time.Now()}
		}
	}
	res, err := b.runAll(ctx)
	if cerr := b.cleanup(); err == nil && cerr != nil {
		err = fmt.Errorf("freeing what the run allocated: %w", cerr)
	}
	if err != nil {
		return nil, b.info, err
	}
	return res, b.info, nil
}

func (b *backend) runAll(ctx context.Context) (*sim.Result, error) {
	if err := b.setup(); err != nil {
		return nil, err
	}
	if err := b.execute(ctx); err != nil {
		return nil, err
	}
	for g := range b.gpus {
		if b.gpus[g].used {
			if err := b.drift(g); err != nil {
				return nil, fmt.Errorf("%s, after the run, measuring its event clock against the host clock: %w", b.m.GPUs[g].Name, err)
			}
		}
	}
	return b.result()
}

type gpuDev struct {
	used     bool
	ctx      Context
	retained bool
	mod      Module
	spin     Function
	copy     Function // the memory kernel, where the program has memory kernels
	// copyBlocks is the memory kernel's grid: as many blocks as the GPU
	// holds at once.
	copyBlocks int
	sms        int
	kernels    int       // kernel ops on this GPU: one slot each
	slots      DevicePtr // each spin kernel's start and stop times (2 u64), then the probes'
	// Host clock (ns) = GPU timer + offset, for a kernel's start and for
	// its stop (integers: the timer reads about 1.7e18).
	startOff, stopOff int64
	shared            uint32
	rd, wr            DevicePtr // read and write buffers for copies and memory kernels
	bufBytes          uint64
	memNext           uint64        // where the next memory kernel's part of the buffers begins
	ref               Event         // the reference event of the clock alignment
	refHost           time.Duration // its time on the host clock
}

type opTiming struct {
	end  Event // recorded on the op's stream right after it
	dev  int
	slot int // kernels: the index of their start time in the GPU's slots
	// mem: a kernel run as the memory kernel (see planMemory), over its
	// GPU's buffers from byte off.
	mem bool
	off uint64
}

// timerProbes is how many kernels place a GPU's timer on the host clock.
const timerProbes = 9

type backend struct {
	drv   Driver
	m     *sim.Machine
	p     *sim.Program
	clock Clock
	numa  NUMA
	// hostFree is Options.HostFree.
	hostFree func() (uint64, bool)
	info     *Info

	gpus    []gpuDev
	streams []Stream
	events  []Event // program events
	evGPU   []int   // the GPU whose context each program event lives in
	// host[node][0] is the host memory on NUMA node (-1: placed by the
	// OS) that H2D copies read, host[node][1] what D2H copies write:
	// copies both ways at once touch different memory, as in calibrate's
	// duplex measurement. A copy uses its host's node's.
	host     map[int]*[2]hostMem
	hostNode []int        // per host: its NUMA node here, -1 if the OS places it
	timing   [][]opTiming // per thread, per op
	origin   time.Duration
	peer     map[[2]int]bool // GPU pairs with peer access enabled

	// filled by execute
	recs     [][]sim.OpRecord
	threads  []sim.ThreadStats
	seq      []int        // per stream: ops issued so far
	streamMu []sync.Mutex // per stream: held while an op and its event are issued
	mu       sync.Mutex
	warned   map[string]bool
}

func (b *backend) warn(format string, a ...any) {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := fmt.Sprintf(format, a...)
	if b.warned == nil {
		b.warned = map[string]bool{}
	}
	if !b.warned[s] {
		b.warned[s] = true
		b.info.Warnings = append(b.info.Warnings, s)
	}
}

func (b *backend) setCurrent(g int) error { return b.drv.SetCurrent(b.gpus[g].ctx) }

// Runnable says whether the backend can run p at all, whatever the
// machine: it runs no collective library. Run checks it first; commands
// check it before they open the driver.
func Runnable(p *sim.Program) error {
	for ti := range p.Threads {
		for oi := range p.Threads[ti].Ops {
			if op := &p.Threads[ti].Ops[oi]; op.Kind == sim.OpCollective {
				return fmt.Errorf("%s: op %s is a collective: the hw backend runs no collective library (NCCL); replay scenarios without collectives", where(op), op.ID)
			}
		}
	}
	return nil
}

// memoryCandidate reports whether kernel op is one the backend may run as
// the memory kernel, moving its Bytes (half read, half written), instead of
// spinning for its Duration: a kernel the scenario gave as memory traffic
// alone, over all SMs (a smaller SM share spins: the memory kernel's
// blocks go to every SM, so its bandwidth share would not be the model's).
// Whether it does is decided per GPU at setup (see planMemory).
func memoryCandidate(op *sim.Op) bool {
	return op.Kind == sim.OpKernel && op.Bytes > 0 && op.SMShare == 1
}

// memoryElems is how many 16-byte elements memory kernel op reads (and
// writes): half its bytes, rounded up.
func memoryElems(op *sim.Op) uint64 {
	return (uint64(op.Bytes) + 2*kernels.CopyBytesPerElem - 1) / (2 * kernels.CopyBytesPerElem)
}

// memoryRegion is the least each of a GPU's two buffers holds when it runs
// memory kernels: successive memory kernels read and write successive
// parts of it, so that one does not find the last one's bytes in L2 (50 MB
// on H100 and H200) and run faster than its memory allows, as the model's
// roofline has it.
const memoryRegion = 256 << 20

// planMemory says which GPUs run their memory-kernel candidates as memory
// kernels, and the most bytes each buffer must then hold (0: they spin).
// A GPU whose kernels are on more than one stream spins them, with a
// warning: kernels there may overlap, and the memory kernel does not hold
// SMs as spin kernels do (one block an SM), so it would share the GPU
// otherwise than the model's SM shares say.
func (b *backend) planMemory() []uint64 {
	p := b.p
	out := make([]uint64, len(b.gpus))
	streams := make([]map[int]bool, len(b.gpus))
	first := make([]string, len(b.gpus))
	for ti := range p.Threads {
		for oi := range p.Threads[ti].Ops {
			op := &p.Threads[ti].Ops[oi]
			if op.Kind != sim.OpKernel {
				continue
			}
			g := p.Streams[op.Stream].GPU
			if streams[g] == nil {
				streams[g] = map[int]bool{}
			}
			streams[g][op.Stream] = true
			if memoryCandidate(op) {
				if first[g] == "" {
					first[g] = op.ID
				}
				out[g] = max(out[g], memoryElems(op)*kernels.CopyBytesPerElem, memoryRegion)
			}
		}
	}
	for g := range out {
		if out[g] > 0 && len(streams[g]) > 1 {
			b.warn("kernels given as memory traffic alone (%s and any others) spin on %s rather than run as the memory kernel: its kernels are on %d streams and may overlap, and the memory kernel does not hold SMs as the model's shares say",
				first[g], b.m.GPUs[g].Name, len(streams[g]))
			out[g] = 0
		}
	}
	return out
}

// hostNeed is the host memory copies need, bytes per direction (0: H2D,
// 1: D2H): the largest copy of each kind.
type hostNeed struct{ pin, page [2]uint64 }

func (h *hostNeed) add(mem sim.MemoryKind, dir int, n uint64) {
	if mem == sim.Pageable {
		h.page[dir] = max(h.page[dir], n)
	} else {
		h.pin[dir] = max(h.pin[dir], n)
	}
}

func (h *hostNeed) merge(o hostNeed) {
	for dir := range 2 {
		h.pin[dir], h.page[dir] = max(h.pin[dir], o.pin[dir]), max(h.page[dir], o.page[dir])
	}
}

// ErrHostMemory is the error of a run whose copies' host buffers would not
// fit in the host memory free: the machine's state, not the program's
// fault.
var ErrHostMemory = errors.New("not enough host memory")

// hostMargin is the host memory a run leaves free beside its copies'
// buffers: for the simulator's run and the rest of the system.
const hostMargin = 1 << 30

// nodesNote says, of host buffers on n NUMA nodes, that each node has its
// own.
func nodesNote(n int) string {
	if n > 1 {
		return fmt.Sprintf(", on each of %d NUMA nodes", n)
	}
	return ""
}

// hostMem is the host memory the copies of one direction use.
type hostMem struct {
	pinned   HostPtr
	pinBytes uint64
	page     *Pageable
}

// ptr is the buffer of the copy's memory.
func (h *hostMem) ptr(mem sim.MemoryKind) HostPtr {
	if mem == sim.Pageable {
		return h.page.Ptr()
	}
	return h.pinned
}

// usedGPUs says which of m's GPUs p uses: those with its streams, the
// devices it synchronizes, and the ends of its copies.
func usedGPUs(m *sim.Machine, p *sim.Program) []bool {
	used := make([]bool, len(m.GPUs))
	for _, st := range p.Streams {
		used[st.GPU] = true // every stream is made in its GPU's context
	}
	for ti := range p.Threads {
		for oi := range p.Threads[ti].Ops {
			op := &p.Threads[ti].Ops[oi]
			if op.Kind == sim.OpSync && op.Sync == sim.SyncDevice {
				used[op.GPU] = true
			}
			if op.Kind.OnStream() {
				used[p.Streams[op.Stream].GPU] = true
			}
			if op.Kind == sim.OpCopy {
				for _, end := range []int{op.Src, op.Dst} {
					if nd := m.Nodes[end]; nd.Kind == sim.NodeGPU {
						used[nd.Index] = true
					}
				}
			}
		}
	}
	return used
}

// UsedGPUs are the devices (machine GPU i is device i) Run would use to
// run p on m, in order.
func UsedGPUs(m *sim.Machine, p *sim.Program) ([]int, error) {
	if err := p.Validate(m); err != nil {
		return nil, err
	}
	var out []int
	for g, u := range usedGPUs(m, p) {
		if u {
			out = append(out, g)
		}
	}
	return out, nil
}

// Hold retains the primary context of each of the devices (those this
// machine has; once each) until release is called. A primary context
// lives while anything retains it, and Run retains and releases its own:
// runs one after another (replay --repeat, --host-probe) within a Hold of
// their devices find the contexts made, rather than each making them and
// destroying them again, with the driver's state in them. A device the
// machine lacks is left to Run to name.
func Hold(drv Driver, devices []int) (release func() error, err error) {
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, err
	}
	var held []int
	release = func() error {
		var first error
		for _, g := range held {
			if err := drv.PrimaryCtxRelease(g); err != nil && first == nil {
				first = err
			}
		}
		held = nil
		return first
	}
	for _, g := range devices {
		if g < 0 || g >= n || slices.Contains(held, g) {
			continue
		}
		if _, err := drv.PrimaryCtxRetain(g); err != nil {
			release()
			return nil, err
		}
		held = append(held, g)
	}
	return release, nil
}

// setup checks the program against the devices and allocates everything.
func (b *backend) setup() error {
	m, p, drv := b.m, b.p, b.drv
	if err := Runnable(p); err != nil {
		return err
	}
	b.info = &Info{Devices: make([]string, len(m.GPUs)), Align: make([]time.Duration, len(m.GPUs)), Drift: make([]time.Duration, len(m.GPUs)),
		SpinOverhead: make([]sim.Time, len(m.GPUs)), SpinOvershoot: make([]sim.Time, len(m.GPUs)), SpinOverheadStamped: make([]sim.Time, len(m.GPUs))}
	b.gpus = make([]gpuDev, len(m.GPUs))
	v, err := drv.Version()
	if err != nil {
		return err
	}
	b.info.DriverVersion = v
	// What the program uses.
	hostNeeds := make([]hostNeed, len(m.Hosts))
	need := make([]uint64, len(m.GPUs))
	peers := map[[2]int]bool{}
	for g, u := range usedGPUs(m, p) {
		b.gpus[g].used = u
	}
	graphs, firstGraph := 0, ""
	for ti := range p.Threads {
		for oi := range p.Threads[ti].Ops {
			op := &p.Threads[ti].Ops[oi]
			if op.GraphOps > 0 {
				if graphs++; graphs == 1 {
					firstGraph = op.ID
				}
			}
			if op.Kind != sim.OpCopy {
				continue
			}
			n := uint64(op.Bytes)
			src, dst := m.Nodes[op.Src], m.Nodes[op.Dst]
			if src.Kind == sim.NodeHost || dst.Kind == sim.NodeHost {
				dir, h := 0, src.Index
				if dst.Kind == sim.NodeHost {
					dir, h = 1, dst.Index
				}
				hostNeeds[h].add(op.Memory, dir, n)
			}
			if src.Kind == sim.NodeGPU {
				need[src.Index] = max(need[src.Index], n)
			}
			if dst.Kind == sim.NodeGPU {
				need[dst.Index] = max(need[dst.Index], n)
			}
			if src.Kind == sim.NodeGPU && dst.Kind == sim.NodeGPU && src.Index != dst.Index && !op.NoPeerAccess {
				if k := m.PathBetween(src.Index, dst.Index).Kind; k == sim.PathNVLink || k == sim.PathP2P {
					peers[[2]int{src.Index, dst.Index}] = true
				}
			}
		}
	}
	switch {
	case graphs == 1:
		b.warn("CUDA graphs are issued op by op on hardware (the backend does not capture graphs): %s and the ops after it", firstGraph)
	case graphs > 1:
		b.warn("CUDA graphs are issued op by op on hardware (the backend does not capture graphs): %d graph launches, the first %s and the ops after it", graphs, firstGraph)
	}
	memNeed := b.planMemory()
	n, err := drv.DeviceCount()
	if err != nil {
		return err
	}
	for g := range b.gpus {
		if b.gpus[g].used && g >= n {
			return fmt.Errorf("the program uses %s (GPU %d of the topology) but this machine has %d GPU(s); use a topology with at most %d GPUs (gpusim topo discover writes this machine's)", m.GPUs[g].Name, g, n, n)
		}
	}
	mod := kernels.PTX()
	for g := range b.gpus {
		d := &b.gpus[g]
		if !d.used {
			continue
		}
		if b.info.Devices[g], err = drv.DeviceName(g); err != nil {
			return err
		}
		if d.ctx, err = drv.PrimaryCtxRetain(g); err != nil {
			return err
		}
		d.retained = true
		if err := drv.SetCurrent(d.ctx); err != nil {
			return err
		}
		if d.sms, err = drv.Attribute(g, AttrSMs); err != nil {
			return err
		}
		perSM, err := drv.Attribute(g, AttrSharedPerSM)
		if err != nil {
			return err
		}
		optin, err := drv.Attribute(g, AttrSharedPerBlockIn)
		if err != nil {
			return err
		}
		// More than half an SM's shared memory: one spin block per SM, so a
		// kernel claiming all SMs keeps others' blocks waiting, as the
		// model's SM shares say.
		d.shared = uint32(min(perSM/2+1024, optin))
		if d.mod, err = drv.ModuleLoad(mod); err != nil {
			return fmt.Errorf("loading gpusim's kernels on %s: %w", m.GPUs[g].Name, err)
		}
		if d.spin, err = drv.ModuleFunction(d.mod, kernels.Spin); err != nil {
			return err
		}
		if err := drv.SetMaxDynamicShared(d.spin, int(d.shared)); err != nil {
			return err
		}
		// Device buffers: two per GPU (copies and memory kernels read one
		// and write the other).
		if need[g] > 0 || memNeed[g] > 0 {
			free, _, err := drv.MemGetInfo()
			if err != nil {
				return err
			}
			const margin = 256 << 20 // left for the driver and the kernels
			if memNeed[g] > need[g] && 2*memNeed[g]+margin > free {
				// Memory kernels too large for the memory free spin, as
				// before there were memory kernels.
				b.warn("kernels given as memory traffic alone spin on %s rather than run as the memory kernel: their buffers (two of %s) would not fit in its %s free",
					m.GPUs[g].Name, bytesStr(memNeed[g]), bytesStr(free))
				memNeed[g] = 0
			}
			bytes := max(need[g], memNeed[g])
			if bytes > 0 && 2*bytes+margin > free {
				// The whole need, margin included: without it, a need
				// below what is free read as no reason to refuse.
				return fmt.Errorf("%s needs %s of device memory on %s (two buffers of %s for its copies, and %s left for the driver and the kernels) but %s has %s free",
					p.Name, bytesStr(2*bytes+margin), m.GPUs[g].Name, bytesStr(bytes), bytesStr(margin), m.GPUs[g].Name, bytesStr(free))
			}
			if bytes > 0 {
				if d.rd, err = drv.MemAlloc(bytes); err != nil {
					return err
				}
				if d.wr, err = drv.MemAlloc(bytes); err != nil {
					return err
				}
				d.bufBytes = bytes
			}
		}
		if memNeed[g] > 0 {
			if d.copy, err = drv.ModuleFunction(d.mod, kernels.Copy); err != nil {
				return err
			}
			// As many blocks as the GPU holds at once, as calibration's.
			if d.copyBlocks, err = drv.BlocksPerSM(d.copy, kernels.CopyBlock, 0); err != nil {
				return err
			}
			d.copyBlocks = max(d.copyBlocks, 1) * d.sms
		}
	}
	// Peer access, both ways, where the topology routes copies peer to peer.
	b.peer = map[[2]int]bool{}
	for _, pr := range sortedPairs(peers) {
		ok, err := drv.CanAccessPeer(pr[0], pr[1])
		if err != nil {
			return err
		}
		ok2, err := drv.CanAccessPeer(pr[1], pr[0])
		if err != nil {
			return err
		}
		if !ok || !ok2 {
			b.warn("the topology routes copies between %s and %s peer to peer, but the driver reports no peer access: they run through host memory", m.GPUs[pr[0]].Name, m.GPUs[pr[1]].Name)
			continue
		}
		for _, d := range [][2]int{pr, {pr[1], pr[0]}} {
			if b.peer[d] {
				continue
			}
			if err := b.setCurrent(d[0]); err != nil {
				return err
			}
			if err := drv.EnablePeerAccess(b.gpus[d[1]].ctx); err != nil {
				return err
			}
			b.peer[d] = true
		}
	}
	// Host memory: one set a NUMA node the hosts stand for (a machine of
	// one node, or hosts not placed: one set, as the OS places it),
	// allocated on that node.
	b.placeHosts(n)
	nodeNeeds := map[int]*hostNeed{}
	for h, nd := range hostNeeds {
		if nd == (hostNeed{}) {
			continue
		}
		node := b.hostNode[h]
		if nodeNeeds[node] == nil {
			nodeNeeds[node] = &hostNeed{}
		}
		nodeNeeds[node].merge(nd)
	}
	// Pinned memory is never paged out, and the pageable buffers are
	// touched whole: buffers larger than the memory free would bring the
	// OOM killer, not an error.
	if b.hostFree != nil {
		var total, pinned uint64
		for _, nd := range nodeNeeds {
			for dir := range 2 {
				total += nd.pin[dir] + nd.page[dir]
				pinned += nd.pin[dir]
			}
		}
		if free, ok := b.hostFree(); ok && total > 0 && total+hostMargin > free {
			need, have := bytesStr(total+hostMargin), bytesStr(free)
			if need == have { // a few bytes short
				need, have = fmt.Sprintf("%d bytes", total+hostMargin), fmt.Sprintf("%d bytes", free)
			}
			return fmt.Errorf("%w: %s needs %s, %s for the buffers of its copies (the largest copy of each kind and direction%s; %s of it pinned) and %s left for the rest, but %s is free here: run where more memory is free, or make its host copies smaller",
				ErrHostMemory, p.Name, need, bytesStr(total), nodesNote(len(nodeNeeds)), bytesStr(pinned), bytesStr(hostMargin), have)
		}
	}
	b.host = map[int]*[2]hostMem{}
	for _, node := range slices.Sorted(maps.Keys(nodeNeeds)) {
		need, mem := nodeNeeds[node], &[2]hostMem{}
		b.host[node] = mem
		err := b.onNode(node, firstUsed(b.gpus), func() error {
			for dir := range mem {
				h := &mem[dir]
				if need.pin[dir] > 0 {
					var err error
					if h.pinned, err = drv.MemHostAlloc(need.pin[dir]); err != nil {
						return err
					}
					h.pinBytes = need.pin[dir]
				}
				if need.page[dir] > 0 {
					var err error
					if h.page, err = AllocPageable(need.page[dir]); err != nil {
						return fmt.Errorf("pageable host memory of %s: %v", bytesStr(need.page[dir]), err)
					}
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	// Streams.
	b.streams = make([]Stream, len(p.Streams))
	for i, s := range p.Streams {
		if err := b.setCurrent(s.GPU); err != nil {
			return err
		}
		if b.streams[i], err = drv.StreamCreate(); err != nil {
			return err
		}
	}
	// Program events live in the context of the GPU whose stream records
	// them (CUDA requires it); one recorded on two GPUs is not supported.
	b.evGPU = make([]int, len(p.Events))
	for i := range b.evGPU {
		b.evGPU[i] = -1
	}
	for ti := range p.Threads {
		for _, op := range p.Threads[ti].Ops {
			if op.Kind != sim.OpEventRecord {
				continue
			}
			g := p.Streams[op.Stream].GPU
			if e := b.evGPU[op.Event]; e >= 0 && e != g {
				return fmt.Errorf("%s: event %s is recorded on streams of %s and %s: the hw backend needs each event on one GPU", where(&op), p.Events[op.Event], m.GPUs[e].Name, m.GPUs[g].Name)
			}
			b.evGPU[op.Event] = g
		}
	}
	b.events = make([]Event, len(p.Events))
	for i, g := range b.evGPU {
		if g < 0 {
			g = firstUsed(b.gpus)
			if g < 0 {
				continue
			}
			b.evGPU[i] = g
		}
		if err := b.setCurrent(g); err != nil {
			return err
		}
		if b.events[i], err = drv.EventCreate(); err != nil {
			return err
		}
	}
	// Timing events, made before the run so making them is not timed.
	b.timing = make([][]opTiming, len(p.Threads))
	for ti := range p.Threads {
		b.timing[ti] = make([]opTiming, len(p.Threads[ti].Ops))
		for oi := range p.Threads[ti].Ops {
			op := &p.Threads[ti].Ops[oi]
			if !op.Kind.OnStream() {
				continue
			}
			g := p.Streams[op.Stream].GPU
			if err := b.setCurrent(g); err != nil {
				return err
			}
			t := &b.timing[ti][oi]
			t.dev = g
			if t.end, err = drv.EventCreate(); err != nil {
				return err
			}
			if op.Kind == sim.OpKernel {
				t.slot = b.gpus[g].kernels
				b.gpus[g].kernels++
			}
			if d := &b.gpus[g]; memoryCandidate(op) && d.copy != 0 {
				// The next part of the buffers, from their start again
				// where it would run past their end.
				t.mem = true
				n := memoryElems(op) * kernels.CopyBytesPerElem
				if d.memNext+n > d.bufBytes {
					d.memNext = 0
				}
				t.off = d.memNext
				d.memNext = (d.memNext + n + 255) &^ 255
			}
		}
	}
	// Each spin kernel stores when it began: an op issued to an idle stream
	// has no event of its own before it. Its blocks take the first word
	// of its slot down and the second up: all ones and 0 before.
	for g := range b.gpus {
		d := &b.gpus[g]
		if !d.used {
			continue
		}
		if err := b.setCurrent(g); err != nil {
			return err
		}
		n := uint64(16 * (d.kernels + timerProbes))
		if d.slots, err = drv.MemAlloc(n); err != nil {
			return err
		}
		init := make([]byte, n)
		for k := 0; k < len(init); k += 16 {
			binary.LittleEndian.PutUint64(init[k:], math.MaxUint64)
		}
		if err := drv.MemcpyHtoD(d.slots, init); err != nil {
			return err
		}
	}
	// Use every stream and event once: the driver sets them up on first use
	// (80 us for a stream's first command, about a microsecond more for an
	// event's first record, seen on an H200), which is not the program's.
	if err := b.eachUsed("using each stream and event once", b.touch); err != nil {
		return err
	}
	// Move every buffer's bytes once: the first copy into or out of fresh
	// memory pays for mapping its pages (a 256 MiB upload took 12% longer
	// than the next on an H200), which is not the program's either.
	if err := b.eachUsed("warming the copy buffers", b.warmCopies); err != nil {
		return err
	}
	// Warm up each used GPU and measure its spin kernel's fixed cost; put
	// its clocks on the host's.
	if err := b.eachUsed("running gpusim's spin kernel to measure its fixed cost", b.warmup); err != nil {
		return err
	}
	if err := b.eachUsed("placing the event clock on the host clock", b.align); err != nil {
		return err
	}
	return b.eachUsed("placing the GPU timer on the host clock", b.placeTimer)
}

// eachUsed calls f for each GPU the program uses, stopping at an error,
// which it says came from doing what on which GPU.
func (b *backend) eachUsed(what string, f func(g int) error) error {
	for g := range b.gpus {
		if b.gpus[g].used {
			if err := f(g); err != nil {
				return fmt.Errorf("%s, before the run, %s: %w", b.m.GPUs[g].Name, what, err)
			}
		}
	}
	return nil
}

// scratchStream makes GPU g's context current and a stream for the
// backend's own measurements; done destroys it.
func (b *backend) scratchStream(g int) (s Stream, done func(), err error) {
	if err := b.setCurrent(g); err != nil {
		return 0, nil, err
	}
	if s, err = b.drv.StreamCreate(); err != nil {
		return 0, nil, err
	}
	return s, func() { b.drv.StreamDestroy(s) }, nil
}

// launchSpin launches the spin kernel over all of GPU g's SMs for ns
// nanoseconds, storing its start and stop at slot (0: nowhere).
func (b *backend) launchSpin(g int, s Stream, ns uint64, slot DevicePtr) error {
	d := &b.gpus[g]
	return b.drv.Launch(d.spin, uint32(d.sms), kernels.SpinBlock, d.shared, s, U64(ns), U64(uint64(slot)))
}

// launchCopy launches the memory kernel on GPU g over n16 16-byte
// elements of its buffers from byte off (from rd to wr), on as many blocks
// as the GPU holds at once, as calibration's.
func (b *backend) launchCopy(g int, s Stream, off, n16 uint64) error {
	d := &b.gpus[g]
	return b.drv.Launch(d.copy, uint32(d.copyBlocks), kernels.CopyBlock, 0, s, U64(uint64(d.wr)+off), U64(uint64(d.rd)+off), U64(n16))
}

// placeTimer places GPU g's timer (what spin kernels store) on the host
// clock. Zero-time spin kernels, each queued behind a busy kernel and an
// event and followed by another event, start when the event before runs
// (the convention for ops on a busy stream) and end when the event after
// runs: the median differences between those events' host times and the
// kernels' stored start and stop times are the offsets.
func (b *backend) placeTimer(g int) error {
	d, drv := &b.gpus[g], b.drv
	s, done, err := b.scratchStream(g)
	if err != nil {
		return err
	}
	defer done()
	evs := make([]Event, 0, 2*timerProbes)
	defer func() {
		for _, e := range evs {
			drv.EventDestroy(e)
		}
	}()
	base := d.slots + DevicePtr(16*d.kernels)
	for k := 0; k < timerProbes; k++ {
		for j := 0; j < 2; j++ {
			e, err := drv.EventCreate()
			if err != nil {
				return err
			}
			evs = append(evs, e)
		}
		err := b.launchSpin(g, s, 100_000, 0)
		if err == nil {
			err = drv.EventRecord(evs[2*k], s)
		}
		if err == nil {
			err = b.launchSpin(g, s, 0, base+DevicePtr(16*k))
		}
		if err == nil {
			err = drv.EventRecord(evs[2*k+1], s)
		}
		if err != nil {
			return err
		}
	}
	if err := drv.StreamSynchronize(s); err != nil {
		return err
	}
	buf := make([]byte, 16*timerProbes)
	if err := drv.MemcpyDtoH(buf, base); err != nil {
		return err
	}
	starts := make([]int64, timerProbes)
	stops := make([]int64, timerProbes)
	spans := make([]int64, timerProbes)
	for k := 0; k < timerProbes; k++ {
		t0 := binary.LittleEndian.Uint64(buf[16*k:])
		t1 := binary.LittleEndian.Uint64(buf[16*k+8:])
		if t0 == 0 || t1 < t0 {
			return fmt.Errorf("gpusim's spin kernel on %s stored no times", b.m.GPUs[g].Name)
		}
		spans[k] = int64(t1 - t0)
		for j, dst := range []*int64{&starts[k], &stops[k]} {
			ms, err := drv.EventElapsed(d.ref, evs[2*k+j])
			if err != nil {
				return err
			}
			t := []uint64{t0, t1}[j]
			*dst = int64(d.refHost) + int64(math.Round(float64(ms)*1e6)) - int64(t)
		}
	}
	med := func(xs []int64) int64 {
		sort.Slice(xs, func(i, j int) bool { return xs[i] < xs[j] })
		return xs[len(xs)/2]
	}
	d.startOff, d.stopOff = med(starts), med(stops)
	b.info.SpinOverheadStamped[g] = sim.Time(med(spans)+d.stopOff-d.startOff) * sim.Nanosecond
	return nil
}

// warmCopies copies GPU g's buffers once, both ways, and waits.
func (b *backend) warmCopies(g int) error {
	d, drv := &b.gpus[g], b.drv
	if d.bufBytes == 0 {
		return nil
	}
	s, done, err := b.scratchStream(g)
	if err != nil {
		return err
	}
	defer done()
	n := d.bufBytes
	steps := []func() error{func() error { return drv.MemcpyDtoDAsync(d.wr, d.rd, n, s) }}
	if d.copy != 0 {
		// The memory kernel's first launch (and its pages) too.
		steps = append(steps, func() error { return b.launchCopy(g, s, 0, n/kernels.CopyBytesPerElem) })
	}
	for _, node := range slices.Sorted(maps.Keys(b.host)) {
		in, out := &b.host[node][0], &b.host[node][1]
		if in.pinned != 0 {
			m := min(n, in.pinBytes)
			steps = append(steps,
				func() error { return drv.MemcpyHtoDAsync(d.rd, in.pinned, m, s) },
				func() error { return drv.MemcpyHtoDAsync(d.wr, in.pinned, m, s) })
		}
		if out.pinned != 0 {
			m := min(n, out.pinBytes)
			steps = append(steps, func() error { return drv.MemcpyDtoHAsync(out.pinned, d.rd, m, s) })
		}
		if in.page != nil {
			m := min(n, uint64(len(in.page.Bytes())))
			steps = append(steps, func() error { return drv.MemcpyHtoDAsync(d.wr, in.page.Ptr(), m, s) })
		}
		if out.page != nil {
			m := min(n, uint64(len(out.page.Bytes())))
			steps = append(steps, func() error { return drv.MemcpyDtoHAsync(out.page.Ptr(), d.rd, m, s) })
		}
	}
	steps = append(steps, func() error { return drv.StreamSynchronize(s) })
	for _, f := range steps {
		if err := f(); err != nil {
			return err
		}
	}
	return nil
}

// touch records every event of GPU g once and runs a command on each of its
// streams.
func (b *backend) touch(g int) error {
	drv := b.drv
	if err := b.setCurrent(g); err != nil {
		return err
	}
	var streams []Stream
	for i, st := range b.p.Streams {
		if st.GPU == g {
			streams = append(streams, b.streams[i])
		}
	}
	if len(streams) == 0 {
		return nil
	}
	k := 0
	rec := func(e Event) error {
		s := streams[k%len(streams)]
		k++
		return drv.EventRecord(e, s)
	}
	for _, s := range streams {
		if err := drv.Launch(b.gpus[g].spin, 1, kernels.SpinBlock, b.gpus[g].shared, s, U64(0), U64(0)); err != nil {
			return err
		}
	}
	for ti := range b.timing {
		for _, t := range b.timing[ti] {
			if t.end != 0 && t.dev == g {
				if err := rec(t.end); err != nil {
					return err
				}
			}
		}
	}
	for i, e := range b.events {
		if e != 0 && b.evGPU[i] == g {
			if err := rec(e); err != nil {
				return err
			}
		}
	}
	for _, s := range streams {
		if err := drv.StreamSynchronize(s); err != nil {
			return err
		}
	}
	return nil
}

func firstUsed(gs []gpuDev) int {
	for i := range gs {
		if gs[i].used {
			return i
		}
	}
	return -1
}

func sortedPairs(m map[[2]int]bool) [][2]int {
	var out [][2]int
	for k := range m {
		a, c := k[0], k[1]
		if a > c {
			a, c = c, a
		}
		out = append(out, [2]int{a, c})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i][0] != out[j][0] {
			return out[i][0] < out[j][0]
		}
		return out[i][1] < out[j][1]
	})
	uniq := out[:0]
	for i, x := range out {
		if i == 0 || x != out[i-1] {
			uniq = append(uniq, x)
		}
	}
	return uniq
}

// warmup runs the spin kernel on GPU g (the first launch pays for loading
// the module) in chains of spins over all SMs, each followed by an event,
// queued behind a busy kernel (so the host's call gaps are not in them), and
// times one link: a 10 us spin's link less 10 us is the kernel's fixed cost
// on the GPU (with its event); a 50 us spin's less that and 50 us, how much
// longer spins overshoot.
func (b *backend) warmup(g int) error {
	drv := b.drv
	s, done, err := b.scratchStream(g)
	if err != nil {
		return err
	}
	defer done()
	e0, err := drv.EventCreate()
	if err != nil {
		return err
	}
	defer drv.EventDestroy(e0)
	e1, err := drv.EventCreate()
	if err != nil {
		return err
	}
	defer drv.EventDestroy(e1)
	filler, err := drv.EventCreate()
	if err != nil {
		return err
	}
	defer drv.EventDestroy(filler)
	// A chain of spins, each followed by its event, queued behind a busy
	// kernel: what kernels back to back on a stream cost, each with the
	// event the backend records after it. The first two rounds warm up.
	const rounds, chain, busyNS = 5, 8, 300_000
	measure := func(spin sim.Time) (sim.Time, error) {
		var ms []float64
		for i := 0; i < rounds; i++ {
			err := b.launchSpin(g, s, busyNS, 0)
			if err == nil {
				err = drv.EventRecord(e0, s)
			}
			for k := 0; k < chain && err == nil; k++ {
				err = b.launchSpin(g, s, uint64(spin/sim.Nanosecond), 0)
				if err == nil {
					// Time one link of the chain, in its middle.
					switch k {
					case chain / 2:
						err = drv.EventRecord(e0, s)
					case chain/2 + 1:
						err = drv.EventRecord(e1, s)
					default:
						err = drv.EventRecord(filler, s)
					}
				}
			}
			if err == nil {
				err = drv.StreamSynchronize(s)
			}
			if err != nil {
				return 0, err
			}
			x, err := drv.EventElapsed(e0, e1)
			if err != nil {
				return 0, err
			}
			if i >= 2 {
				ms = append(ms, float64(x))
			}
		}
		sort.Float64s(ms)
		return msToTime(ms[len(ms)/2]), nil
	}
	const short, long = 10 * sim.Microsecond, 50 * sim.Microsecond
	a, err := measure(short)
	if err != nil {
		return err
	}
	c, err := measure(long)
	if err != nil {
		return err
	}
	zero := max(0, a-short)
	b.info.SpinOverhead[g] = zero
	b.info.SpinOvershoot[g] = max(0, c-long-zero)
	return nil
}

// align places GPU g's event clock on the host clock. Events are
// recorded one at a time on an idle stream, each followed by a reading of
// the host clock when the record call returns: the GPU runs a command on an
// idle stream as it arrives, about when the call returns. The median of the
// differences between those readings and the events' times is the offset;
// their spread bounds its error. Ops issued to idle streams are placed the
// same way (see result), so the call-return convention cancels out.
func (b *backend) align(g int) error {
	d := &b.gpus[g]
	offs, first, err := b.clockOffsets(g, nil)
	if err != nil {
		return err
	}
	d.ref, d.refHost = first, time.Duration(math.Round(offs[len(offs)/2]))
	b.info.Align[g] = time.Duration(offs[len(offs)*9/10] - offs[len(offs)/10])
	return nil
}

// drift measures, after the run, how far GPU g's event clock has moved
// against the host clock since align placed it: the same samples, timed
// from the reference event. The elapsed times' float32 milliseconds step
// by 0.12 us at a second and 1 us past 8 s, finer than the drift it looks
// for (a virtual machine's clocks may part by tens of ppm).
func (b *backend) drift(g int) error {
	d := &b.gpus[g]
	offs, _, err := b.clockOffsets(g, &d.ref)
	if err != nil {
		return err
	}
	b.info.Drift[g] = time.Duration(math.Round(offs[len(offs)/2])) - d.refHost
	return nil
}

// clockOffsets records events one at a time on an idle stream of GPU g,
// each followed by a reading of the host clock when the record call
// returns, and returns the differences (ns, sorted) between those readings
// and the events' times from ref, or from the first event, which it then
// returns undestroyed, where ref is nil.
func (b *backend) clockOffsets(g int, ref *Event) (offs []float64, first Event, err error) {
	drv := b.drv
	s, done, err := b.scratchStream(g)
	if err != nil {
		return nil, 0, err
	}
	defer done()
	const samples = 21
	evs := make([]Event, 0, samples)
	keep := false // the first event stays, as the reference, on success
	defer func() {
		for i, e := range evs {
			if i > 0 || !keep {
				drv.EventDestroy(e)
			}
		}
	}()
	hosts := make([]time.Duration, 0, samples)
	for i := 0; i < samples; i++ {
		e, err := drv.EventCreate()
		if err != nil {
			return nil, 0, err
		}
		evs = append(evs, e)
		if err := drv.EventRecord(e, s); err != nil {
			return nil, 0, err
		}
		hosts = append(hosts, b.clock.Now())
		// Let the stream go idle again (and space the samples).
		if err := drv.EventSynchronize(e); err != nil {
			return nil, 0, err
		}
	}
	from := evs[0]
	if ref != nil {
		from = *ref
	}
	offs = make([]float64, samples)
	for i := range evs {
		ms, err := drv.EventElapsed(from, evs[i])
		if err != nil {
			return nil, 0, err
		}
		offs[i] = float64(hosts[i]) - float64(ms)*1e6 // ns
	}
	sort.Float64s(offs)
	if ref == nil {
		keep = true
		return offs, evs[0], nil
	}
	return offs, 0, nil
}

func durToTime(d time.Duration) sim.Time { return sim.Time(d) * sim.Nanosecond }

func msToTime(ms float64) sim.Time { return sim.Time(math.Round(ms * 1e9)) } // 1 ms = 1e9 ps

// sem is a counting semaphore between host threads.
type sem struct {
	mu    sync.Mutex
	cond  *sync.Cond
	count int
}

func (b *backend) execute(ctx context.Context) error {
	p := b.p
	sems := make([]*sem, len(p.Semaphores))
	for i, s := range p.Semaphores {
		sems[i] = &sem{count: s.Initial}
		sems[i].cond = sync.NewCond(&sems[i].mu)
	}
	b.recs = make([][]sim.OpRecord, len(p.Threads))
	b.seq = make([]int, len(p.Streams))
	b.streamMu = make([]sync.Mutex, len(p.Streams))
	b.threads = make([]sim.ThreadStats, len(p.Threads))
	errs := make([]error, len(p.Threads))
	var wg sync.WaitGroup
	stop := make(chan struct{})
	var once sync.Once
	abort := func() {
		once.Do(func() {
			close(stop)
			for _, s := range sems { // wake awaiting threads so they see the stop
				s.mu.Lock()
				s.cond.Broadcast()
				s.mu.Unlock()
			}
		})
	}
	go func() {
		select {
		case <-ctx.Done():
			abort()
		case <-stop:
		}
	}()
	// Each thread first makes its GPU's context current on its OS thread
	// (the first driver call on a thread is slow); time zero is when all
	// are ready.
	var ready sync.WaitGroup
	begin := make(chan struct{})
	for ti := range p.Threads {
		wg.Add(1)
		ready.Add(1)
		go func(ti int) {
			defer wg.Done()
			runtime.LockOSThread()
			defer runtime.UnlockOSThread()
			defer b.pin(p.Threads[ti].Host)()
			defer b.drv.SetCurrent(0)
			cur, err := b.prepare(ti)
			ready.Done()
			if err != nil {
				errs[ti] = fmt.Errorf("thread %s, before its first op: %w", p.Threads[ti].Name, err)
				abort()
				return
			}
			select {
			case <-begin:
			case <-stop:
				return
			}
			if err := b.thread(ti, cur, sems, stop); err != nil {
				errs[ti] = err
				abort()
			}
		}(ti)
	}
	ready.Wait()
	b.origin = b.clock.Now()
	close(begin)
	wg.Wait()
	abort()
	// Time zero is when the first thread ran its first op: waking a thread
	// locked to its OS thread can take tens of microseconds, which are not
	// the program's.
	b.shiftOrigin()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	// Let every stream finish before the events are read.
	for g := range b.gpus {
		if !b.gpus[g].used {
			continue
		}
		if err := b.setCurrent(g); err != nil {
			return err
		}
		if err := b.drv.CtxSynchronize(); err != nil {
			return fmt.Errorf("%s, waiting for the program's work to end: %w", b.m.GPUs[g].Name, err)
		}
	}
	return nil
}

func (b *backend) now() sim.Time { return durToTime(b.clock.Now() - b.origin) }

// shiftOrigin moves time zero to the earliest call of any thread's first op.
func (b *backend) shiftOrigin() {
	first := sim.Time(-1)
	for _, recs := range b.recs {
		if len(recs) > 0 && (first < 0 || recs[0].Call < first) {
			first = recs[0].Call
		}
	}
	if first <= 0 {
		return
	}
	b.origin += time.Duration(first / sim.Nanosecond)
	d := sim.Time(time.Duration(first/sim.Nanosecond)) * sim.Nanosecond
	shift := func(t *sim.Time) {
		if *t >= 0 {
			*t = max(0, *t-d)
		}
	}
	for _, recs := range b.recs {
		for i := range recs {
			r := &recs[i]
			shift(&r.Call)
			shift(&r.HostEnd)
			shift(&r.Issued)
			if !r.Kind.OnStream() {
				shift(&r.Start)
				shift(&r.End)
			}
		}
	}
	for i := range b.threads {
		shift(&b.threads[i].End)
	}
}

// prepare makes the context of the first GPU thread ti uses current on the
// calling OS thread, and returns that GPU (-1 if none).
func (b *backend) prepare(ti int) (int, error) {
	for _, op := range b.p.Threads[ti].Ops {
		g := -1
		if op.Kind.OnStream() {
			g = b.p.Streams[op.Stream].GPU
		} else if op.Kind == sim.OpSync && op.Sync == sim.SyncDevice {
			g = op.GPU
		}
		if g < 0 {
			continue
		}
		if err := b.setCurrent(g); err != nil {
			return g, err
		}
		if !op.Kind.OnStream() {
			return g, nil
		}
		// The first launch from an OS thread is slow (50 us on an H200
		// host): make it here, on the thread's first stream, and wait.
		s := b.streams[op.Stream]
		if err := b.drv.Launch(b.gpus[g].spin, 1, kernels.SpinBlock, b.gpus[g].shared, s, U64(0), U64(0)); err != nil {
			return g, err
		}
		return g, b.drv.StreamSynchronize(s)
	}
	return -1, nil
}

// thread runs one host thread's ops in order. It reads the host clock once
// per op (reads cost up to half a microsecond on some virtual machines):
// an op is called when the one before returned.
func (b *backend) thread(ti, cur int, sems []*sem, stop chan struct{}) error {
	p, drv := b.p, b.drv
	th := &p.Threads[ti]
	recs := make([]sim.OpRecord, len(th.Ops))
	b.recs[ti] = recs
	st := &b.threads[ti]
	st.Name = th.Name
	last := b.now()
	for oi := range th.Ops {
		select {
		case <-stop:
			return nil
		default:
		}
		op := &th.Ops[oi]
		r := &recs[oi]
		*r = sim.OpRecord{ID: op.ID, Kind: op.Kind, Thread: int32(ti), Stream: -1, GPU: -1, Event: -1,
			Src: -1, Dst: -1, Engine: -1, Target: -1, StreamSeq: -1, Sem: -1, ThreadPrev: int32(oi - 1), Cause: -1}
		tm := &b.timing[ti][oi]
		if op.Kind.OnStream() {
			r.Stream = int32(op.Stream)
			r.GPU = int32(p.Streams[op.Stream].GPU)
			if cur != int(r.GPU) {
				if err := b.setCurrent(int(r.GPU)); err != nil {
					return err
				}
				cur = int(r.GPU)
			}
			// Threads sharing a stream: its position and its commands
			// (the op and its timing event) are taken together.
			b.streamMu[op.Stream].Lock()
			r.StreamSeq = int32(b.seq[op.Stream])
			b.seq[op.Stream]++
		} else if op.Kind == sim.OpSync && op.Sync == sim.SyncStream && cur != p.Streams[op.Stream].GPU {
			if err := b.setCurrent(p.Streams[op.Stream].GPU); err != nil {
				return err
			}
			cur = p.Streams[op.Stream].GPU
		}
		s := Stream(0)
		if op.Stream >= 0 && op.Stream < len(b.streams) {
			s = b.streams[op.Stream]
		}
		r.Call = last
		var err error
		switch op.Kind {
		case sim.OpKernel:
			d := &b.gpus[r.GPU]
			if tm.mem {
				// Placed as a copy is: from its call's return.
				err = b.launchCopy(int(r.GPU), s, tm.off, memoryElems(op))
				r.Issued = b.now()
				r.Bytes = op.Bytes
			} else {
				grid := uint32(math.Ceil(op.SMShare * float64(d.sms)))
				grid = max(1, min(grid, uint32(d.sms)))
				spin := max(0, op.Duration-b.info.SpinOverhead[r.GPU]-b.info.SpinOvershoot[r.GPU])
				ns := uint64(spin / sim.Nanosecond)
				err = drv.Launch(d.spin, grid, kernels.SpinBlock, d.shared, s, U64(ns), U64(uint64(d.slots)+uint64(16*tm.slot)))
			}
			if err == nil {
				err = drv.EventRecord(tm.end, s)
			}
			r.HostEnd = b.now()
			if !tm.mem {
				r.Issued = r.HostEnd
			}
			st.CPU += r.HostEnd - r.Call
		case sim.OpCopy:
			r.Bytes, r.Src, r.Dst, r.Memory = op.Bytes, int32(op.Src), int32(op.Dst), op.Memory
			r.Copy, err = b.copy(op, s)
			r.Issued = b.now()
			if op.Memory == sim.Pageable && (r.Copy == sim.CopyH2D || r.Copy == sim.CopyD2H) {
				r.Issued = r.Call // the call returns when the copy is (nearly) done
			}
			if err == nil {
				err = drv.EventRecord(tm.end, s)
			}
			r.HostEnd = b.now()
			if op.Memory == sim.Pageable && (r.Copy == sim.CopyH2D || r.Copy == sim.CopyD2H) {
				st.Blocked += r.HostEnd - r.Call
			} else {
				st.CPU += r.HostEnd - r.Call
			}
		case sim.OpEventRecord, sim.OpEventWait:
			r.Event = int32(op.Event)
			if op.Kind == sim.OpEventRecord {
				err = drv.EventRecord(b.events[op.Event], s)
			} else {
				err = drv.StreamWaitEvent(s, b.events[op.Event])
			}
			if err == nil {
				err = drv.EventRecord(tm.end, s)
			}
			r.HostEnd = b.now()
			r.Issued = r.HostEnd
			st.CPU += r.HostEnd - r.Call
		case sim.OpSync:
			r.Issued, r.Start = r.Call, r.Call
			switch op.Sync {
			case sim.SyncStream:
				r.Stream, r.GPU = int32(op.Stream), int32(p.Streams[op.Stream].GPU)
				err = drv.StreamSynchronize(b.streams[op.Stream])
			case sim.SyncEvent:
				r.Event = int32(op.Event)
				err = drv.EventSynchronize(b.events[op.Event])
			case sim.SyncDevice:
				r.GPU = int32(op.GPU)
				if err = b.setCurrent(op.GPU); err == nil {
					cur = op.GPU
					err = drv.CtxSynchronize()
				}
			}
			r.HostEnd = b.now()
			r.End = r.HostEnd
			st.Blocked += r.HostEnd - r.Call
		case sim.OpHost:
			r.Issued, r.Start = r.Call, r.Call
			b.clock.Spin(time.Duration(op.Duration / sim.Nanosecond))
			r.HostEnd = b.now()
			r.End = r.HostEnd
			st.CPU += r.HostEnd - r.Call
		case sim.OpSignal:
			r.Sem = int32(op.Sem)
			r.Issued, r.Start = r.Call, r.Call
			sm := sems[op.Sem]
			sm.mu.Lock()
			sm.count += max(op.Count, 1)
			sm.cond.Broadcast()
			sm.mu.Unlock()
			r.HostEnd = b.now()
			r.End = r.HostEnd
		case sim.OpAwait:
			r.Sem = int32(op.Sem)
			r.Issued = r.Call
			sm := sems[op.Sem]
			sm.mu.Lock()
			for sm.count == 0 {
				select {
				case <-stop:
					sm.mu.Unlock()
					return nil
				default:
				}
				sm.cond.Wait()
			}
			sm.count--
			sm.mu.Unlock()
			r.Start = b.now()
			r.HostEnd, r.End = r.Start, r.Start
			st.Blocked += r.HostEnd - r.Call
		}
		if op.Kind.OnStream() {
			b.streamMu[op.Stream].Unlock()
		}
		if err != nil {
			return fmt.Errorf("%s: op %s: %w", where(op), op.ID, err)
		}
		st.End = r.HostEnd
		last = r.HostEnd
	}
	return nil
}

// copy issues one copy on stream s and says which path it takes. A copy of
// zero bytes issues nothing (no buffer was made for it): only its timing
// event marks it.
func (b *backend) copy(op *sim.Op, s Stream) (sim.CopyKind, error) {
	m, drv := b.m, b.drv
	src, dst := m.Nodes[op.Src], m.Nodes[op.Dst]
	n := uint64(op.Bytes)
	switch {
	case src.Kind == sim.NodeHost && dst.Kind == sim.NodeGPU:
		if n == 0 {
			return sim.CopyH2D, nil
		}
		return sim.CopyH2D, drv.MemcpyHtoDAsync(b.gpus[dst.Index].wr, b.host[b.hostNode[src.Index]][0].ptr(op.Memory), n, s)
	case src.Kind == sim.NodeGPU && dst.Kind == sim.NodeHost:
		if n == 0 {
			return sim.CopyD2H, nil
		}
		return sim.CopyD2H, drv.MemcpyDtoHAsync(b.host[b.hostNode[dst.Index]][1].ptr(op.Memory), b.gpus[src.Index].rd, n, s)
	case src.Kind == sim.NodeGPU && dst.Kind == sim.NodeGPU:
		a, c := src.Index, dst.Index
		if a == c {
			if n == 0 {
				return sim.CopyD2D, nil
			}
			return sim.CopyD2D, drv.MemcpyDtoDAsync(b.gpus[a].wr, b.gpus[a].rd, n, s)
		}
		kind := sim.CopyStaged
		if b.peer[[2]int{a, c}] && !op.NoPeerAccess {
			kind = sim.CopyP2P
			if m.PathBetween(a, c).Kind == sim.PathNVLink {
				kind = sim.CopyNVLink
			}
		}
		if n == 0 {
			return kind, nil
		}
		return kind, drv.MemcpyPeerAsync(b.gpus[c].wr, b.gpus[c].ctx, b.gpus[a].rd, b.gpus[a].ctx, n, s)
	}
	return sim.CopyNone, fmt.Errorf("a copy from %s to %s: the hw backend copies between a host and a GPU or between GPUs", src.Name, dst.Name)
}

func where(op *sim.Op) string {
	if op.Where != "" {
		return op.Where
	}
	return "program"
}

// result reads the timing events and assembles the records.
func (b *backend) result() (*sim.Result, error) {
	m, p, drv := b.m, b.p, b.drv
	res := &sim.Result{Machine: m, Program: p, Warnings: append([]string(nil), p.Warnings...)}
	base := make([]int, len(p.Threads))
	n := 0
	for ti := range p.Threads {
		base[ti] = n
		n += len(b.recs[ti])
	}
	res.Ops = make([]sim.OpRecord, 0, n)
	// Each stream op's end event, per GPU, after the GPU's reference event
	// (ms), refined where the run is long (see refineEventTimes).
	type evAt struct {
		op int
		e  Event
	}
	evs := make([][]evAt, len(b.gpus))
	for ti := range p.Threads {
		for oi := range b.recs[ti] {
			r := b.recs[ti][oi]
			if r.ThreadPrev >= 0 {
				r.ThreadPrev += int32(base[ti])
				r.Cause, r.CauseKind = r.ThreadPrev, sim.CauseHost
			}
			tm := b.timing[ti][oi]
			if r.Kind.OnStream() {
				evs[tm.dev] = append(evs[tm.dev], evAt{len(res.Ops), tm.end})
			} else {
				r.Begin = r.Start
			}
			res.Ops = append(res.Ops, r)
		}
	}
	for g, es := range evs {
		if len(es) == 0 {
			continue
		}
		if err := b.setCurrent(g); err != nil {
			return nil, err
		}
		coarse := make([]float64, len(es))
		for i, e := range es {
			ms, err := drv.EventElapsed(b.gpus[g].ref, e.e)
			if err != nil {
				return nil, err
			}
			coarse[i] = float64(ms)
		}
		ms, ok, err := refineEventTimes(coarse, func(i, j int) (float64, error) {
			x, err := drv.EventElapsed(es[i].e, es[j].e)
			return float64(x), err
		})
		if !ok {
			why := "their chain disagrees with them"
			if err != nil {
				why = err.Error()
			}
			b.warn("%s: the run is long and its event times could not be refined (%s): those past %s are within about %s (float32 milliseconds)",
				m.GPUs[g].Name, why, msToTime(chainFrom), msToTime(step(slices.Max(coarse))/2))
		}
		for i, e := range es {
			r := &res.Ops[e.op]
			at := durToTime(b.gpus[g].refHost-b.origin) + msToTime(ms[i])
			r.Start, r.End, r.Begin = at, at, at
		}
	}
	// A kernel or copy starts when its stream is done with the op before
	// (that op's end) or, if the stream was idle by then, when the GPU took
	// it up: for a kernel, when it stored its start (placed on the host
	// clock by placeTimer); for a copy, about when its call returned
	// (Issued), as the alignment takes it. A kernel ends when it stored its
	// stop, placed likewise; other ops at their end events. None starts
	// before the call that issued it.
	began := make([][]byte, len(b.gpus))
	for g := range b.gpus {
		d := &b.gpus[g]
		if !d.used || d.kernels == 0 {
			continue
		}
		if err := drv.SetCurrent(d.ctx); err != nil {
			return nil, err
		}
		began[g] = make([]byte, 16*d.kernels)
		if err := drv.MemcpyDtoH(began[g], d.slots); err != nil {
			return nil, err
		}
	}

	prevEnd := make([]sim.Time, len(p.Streams))
	for i := range prevEnd {
		prevEnd[i] = -1
	}
	order := make([]int, 0, len(res.Ops))
	for i := range res.Ops {
		if res.Ops[i].Kind.OnStream() {
			order = append(order, i)
		}
	}
	sort.SliceStable(order, func(a, c int) bool {
		ra, rc := &res.Ops[order[a]], &res.Ops[order[c]]
		if ra.Stream != rc.Stream {
			return ra.Stream < rc.Stream
		}
		return ra.StreamSeq < rc.StreamSeq
	})
	for _, i := range order {
		r := &res.Ops[i]
		switch r.Kind {
		case sim.OpKernel:
			tm := b.timing[r.Thread][i-base[r.Thread]]
			if tm.mem {
				// The memory kernel stores no times: as a copy.
				r.Start = min(max(prevEnd[r.Stream], r.Issued), r.End)
				break
			}
			// The kernel's own times: the end event of a kernel issued to
			// an idle stream runs late if the host thread was held up
			// between the launch and the event's record.
			d := &b.gpus[tm.dev]
			t0 := binary.LittleEndian.Uint64(began[tm.dev][16*tm.slot:])
			t1 := binary.LittleEndian.Uint64(began[tm.dev][16*tm.slot+8:])
			at := r.Issued
			if t0 != 0 && t1 >= t0 {
				at = durToTime(time.Duration(int64(t0)+d.startOff) - b.origin)
				r.End = durToTime(time.Duration(int64(t1)+d.stopOff) - b.origin)
			}
			r.Start = min(max(prevEnd[r.Stream], at), r.End)
		case sim.OpCopy:
			r.Start = min(max(prevEnd[r.Stream], r.Issued), r.End)
		}
		if r.Start < r.Call {
			r.Start = r.Call
			r.End = max(r.End, r.Start)
		}
		r.Begin = r.Start
		prevEnd[r.Stream] = max(prevEnd[r.Stream], r.End)
	}
	for i := range res.Ops {
		res.Makespan = max(res.Makespan, res.Ops[i].End, res.Ops[i].HostEnd)
	}
	res.Threads = b.threads
	res.GPUs = gpuStats(m, res)
	res.Warnings = append(res.Warnings, b.info.Warnings...)
	return res, nil
}

// gpuStats splits each GPU's time: kernels (Compute), then copies while no
// kernel ran (Copy); the hardware gives no cause for idle time, so idle
// time before the GPU's last op ends counts as waiting for the host
// (IdleHost) and the rest as done.
func gpuStats(m *sim.Machine, res *sim.Result) []sim.GPUStats {
	out := make([]sim.GPUStats, len(m.GPUs))
	for g := range out {
		out[g].Name = m.GPUs[g].Name
		var kern, cp [][2]sim.Time
		last := sim.Time(0)
		for _, r := range res.Ops {
			if int(r.GPU) != g || !r.Kind.OnStream() {
				continue
			}
			switch r.Kind {
			case sim.OpKernel:
				out[g].Kernels++
				kern = append(kern, [2]sim.Time{r.Start, r.End})
			case sim.OpCopy:
				out[g].Copies++
				cp = append(cp, [2]sim.Time{r.Start, r.End})
			}
			last = max(last, r.End)
		}
		k := union(kern)
		both := union(append(append([][2]sim.Time{}, kern...), cp...))
		out[g].Compute = k
		out[g].Copy = both - k
		out[g].IdleHost = max(0, last-both)
		out[g].IdleDone = max(0, res.Makespan-max(last, 0))
		if out[g].IdleHost+both+out[g].IdleDone < res.Makespan {
			out[g].IdleHost += res.Makespan - (out[g].IdleHost + both + out[g].IdleDone)
		}
	}
	return out
}

// union is the total length of a set of intervals.
func union(iv [][2]sim.Time) sim.Time {
	sort.Slice(iv, func(i, j int) bool { return iv[i][0] < iv[j][0] })
	var total, end sim.Time
	end = -1
	var start sim.Time
	for _, x := range iv {
		if x[0] > end {
			if end >= 0 {
				total += end - start
			}
			start, end = x[0], x[1]
		} else if x[1] > end {
			end = x[1]
		}
	}
	if end >= 0 {
		total += end - start
	}
	return total
}

// cleanup frees whatever setup made, whatever happened, and returns the
// first error the driver gave while doing so.
func (b *backend) cleanup() error {
	drv := b.drv
	var first error
	do := func(err error) {
		if first == nil {
			first = err
		}
	}
	// After an error or a cancel, work may still be queued: let it end
	// before the memory it uses is freed.
	for g := range b.gpus {
		if b.gpus[g].retained {
			do(drv.SetCurrent(b.gpus[g].ctx))
			do(drv.CtxSynchronize())
		}
	}
	for ti := range b.timing {
		for _, t := range b.timing[ti] {
			if t.end == 0 {
				continue
			}
			do(drv.SetCurrent(b.gpus[t.dev].ctx))
			do(drv.EventDestroy(t.end))
		}
	}
	for i, e := range b.events {
		if e != 0 {
			do(drv.SetCurrent(b.gpus[b.evGPU[i]].ctx))
			do(drv.EventDestroy(e))
		}
	}
	for i, s := range b.streams {
		if s != 0 {
			do(drv.SetCurrent(b.gpus[b.p.Streams[i].GPU].ctx))
			do(drv.StreamDestroy(s))
		}
	}
	for _, node := range slices.Sorted(maps.Keys(b.host)) {
		for _, h := range b.host[node] {
			if h.pinned != 0 {
				do(drv.MemFreeHost(h.pinned))
			}
			if h.page != nil {
				do(h.page.Free())
			}
		}
	}
	for g := range b.gpus {
		d := &b.gpus[g]
		if !d.retained {
			continue
		}
		do(drv.SetCurrent(d.ctx))
		if d.ref != 0 {
			do(drv.EventDestroy(d.ref))
		}
		if d.rd != 0 {
			do(drv.MemFree(d.rd))
		}
		if d.slots != 0 {
			do(drv.MemFree(d.slots))
		}
		if d.wr != 0 {
			do(drv.MemFree(d.wr))
		}
		if d.mod != 0 {
			do(drv.ModuleUnload(d.mod))
		}
		do(drv.PrimaryCtxRelease(g))
	}
	return first
}

func bytesStr(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.1f GiB", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.1f MiB", float64(n)/(1<<20))
	}
	return fmt.Sprintf("%d bytes", n)
}
