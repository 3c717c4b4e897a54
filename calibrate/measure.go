package calibrate

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"gpusim/hw"
	"gpusim/hw/kernels"
	"gpusim/sim"
	"gpusim/topologies"
)

// Options say how much to measure.
type Options struct {
	// Quick measures fewer sizes and repeats (a minute or less on one GPU).
	Quick bool
	// Budget bounds the whole calibration; measurements that would start
	// after it are skipped and listed in Result.Skipped. Zero: 10 minutes.
	Budget time.Duration
	// Clock is the host clock; nil uses the driver's if it has one (the
	// fake does), else the wall clock.
	Clock hw.Clock
	// Progress, if set, is told after each measurement how many of how many
	// are done and what ran.
	Progress func(done, total int, what string)
	// NUMA places the host memory and the thread of each GPU's host copies
	// on the GPU's NUMA node; nil uses the driver's if it has one (the fake
	// does), else hw.SystemNUMA.
	NUMA hw.NUMA
}

// PathFit is a fitted copy path: what Fit says, plus the samples' spread.
type PathFit struct {
	Name string // "h2d pinned gpu0"
	LatencyBandwidth
	// Spread is the largest relative spread (P90-P10)/median among the
	// sizes measured.
	Spread float64
	Sizes  int
	// Unfitted says why the samples gave no fit (the times did not grow
	// with size, too few were usable): the path has no bandwidth, and a
	// topology written from the result keeps the model's value for it.
	Unfitted string
}

// Result is everything a calibration measured.
type Result struct {
	Date          time.Time
	DriverVersion int
	Devices       []Device
	// Copy paths, fitted as latency + size/bandwidth from copies queued
	// back to back behind a busy kernel (so host call gaps are out).
	H2D, D2H, H2DPageable, D2HPageable, D2D []PathFit // per GPU
	P2P                                     []PathFit // per ordered pair with peer access
	// Aggregate rates (bytes/s) of copies run at once, at the largest size.
	Bidirectional []float64 // per GPU: H2D and D2H on two streams
	AllH2D        float64   // H2D on every GPU at once, in all
	AllD2H        float64   // D2H on every GPU at once, in all
	// Pageable copies on every GPU at once, each from its own host thread
	// (a pageable copy holds its thread while the driver stages it), in all.
	AllH2DPageable, AllD2HPageable float64
	AllP2P                         float64   // every pair with peer access copying both ways at once, in all
	P2PBidirectional               []float64 // per pair in P2P order (i<j): both ways at once
	// CopyEngineScaling is, per GPU, the aggregate H2D+D2H rate with 1, 2,
	// 3 and 4 streams copying at once (half each way).
	CopyEngineScaling [][]float64
	// Host time per call (seconds): a kernel launch alone; a kernel op as
	// the hw backend issues it (a launch and its timing event); an
	// event record; a stream synchronize on an idle stream; and the time
	// from an event's completion to the return of an event synchronize
	// waiting on it (record on an idle stream, then sync).
	// BracketedOp is the host time per kernel op of a loop of empty kernels
	// run through the hw backend itself (the code a replay runs: its
	// bookkeeping, its thread, its events), the median over runs of each
	// run's mean (HostOpRuns); it becomes api_overhead and timing_overhead
	// (see HostSplit). BracketedOpLoop is the same
	// calls in a bare loop (the median over fifteen rounds of each round's
	// mean), BracketedOpMedian the median of the bare loop's calls.
	// BracketedOpBusy is BracketedOpLoop with 4 us kernels instead of empty ones.
	Launch, BracketedOp, BracketedOpLoop, BracketedOpMedian, BracketedOpBusy, EventRecord, IdleStreamSync, EventRoundTrip float64
	// CopyCall is the host time of a 4-byte pinned H2D cuMemcpyHtoDAsync
	// in a bare loop (median): whether copy calls cost what launches do
	// (the model charges both api_overhead; p2pBandwidthLatencyTest's CPU
	// latency suggests a peer copy's enqueue is cheaper on H100 hosts).
	// Recorded in the comments, not a model parameter.
	CopyCall float64
	// HostOpRuns are the runs BracketedOp is the median of, in the order
	// taken: a few before the copies, one after each GPU's measurements and
	// a few at the end. A host's speed drifts: on the H200 virtual machine
	// of 2026-11-29 these loops gave 7.1 us per op in one calibration and
	// 8.4 us in the next, minutes later, and the replays' runs between 6.8
	// and 11.9 us (docs/measured/2026-11-29-h200), so runs spread over the
	// calibration's minutes stand for the machine better than runs back to
	// back.
	HostOpRuns []HostOpRun
	// KernelOverhead is per GPU the GPU time of an empty kernel over all SMs
	// (seconds), measured behind a busy kernel.
	KernelOverhead []float64
	// HostMemcpy is one thread's memcpy rate between pageable buffers.
	HostMemcpy float64
	// MemoryKernel (bytes read + written per second) and FMA (FP32 FLOP/s)
	// per GPU.
	MemoryKernel, FMA []float64
	// Skipped lists measurements left out for the budget.
	Skipped []string
	// Nodes is per GPU the NUMA node its host copies' memory and measuring
	// thread were on (the GPU's own, so that the link toward its host is
	// what is measured); -1 where the OS placed them (a machine of one
	// node, or a GPU whose node the machine does not say).
	Nodes []int
	// Placement says where host memory or a thread could not be put on
	// its GPU's node, and why.
	Placement []string
}

// HostOpRun is one run of empty kernels through the hw backend: the host
// time per op (seconds) and what calibration had measured before it.
type HostOpRun struct {
	After string
	PerOp float64
}

// Device is what the driver says about one GPU.
type Device struct {
	Name                     string
	SMs, CopyEngines         int
	ClockKHz                 int
	MemoryBytes              uint64
	ComputeMajor, ComputeMin int
}

type wall struct{ t0 time.Time }

func (w wall) Now() time.Duration { return time.Since(w.t0) }
func (w wall) Spin(d time.Duration) {
	for end := time.Since(w.t0) + d; time.Since(w.t0) < end; {
	}
}

// Run measures the machine drv drives. It checks free memory before it
// allocates, frees everything it allocated on every return path (an error,
// ctx cancelled), and changes no GPU setting.
func Run(ctx context.Context, drv hw.Driver, opt Options) (*Result, error) {
	// A CUDA context is current on an OS thread, and a goroutine may move
	// between OS threads: calibration runs on a goroutine locked to one of
	// its own, which ends with it where a binding to a NUMA node's CPUs
	// could not be undone (see pin) rather than go back bound.
	type out struct {
		r   *Result
		err error
	}
	done := make(chan out, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		r, err := run(ctx, drv, opt)
		done <- out{r, err}
	}()
	o := <-done
	return o.r, o.err
}

func run(ctx context.Context, drv hw.Driver, opt Options) (*Result, error) {
	c := &cal{drv: drv, opt: opt, ctx: ctx, clock: opt.Clock, numa: hw.NUMAFor(drv, opt.NUMA)}
	if c.clock == nil {
		if cl, ok := drv.(hw.Clock); ok {
			c.clock = cl
		} else {
			c.clock = wall{time.Now()}
		}
	}
	if c.opt.Budget <= 0 {
		c.opt.Budget = 10 * time.Minute
	}
	c.start = c.clock.Now()
	res, err := c.run()
	if err != nil && c.doing != "" && ctx.Err() == nil {
		err = fmt.Errorf("%s: %w", c.doing, err)
	}
	if ferr := c.free(); err == nil && ferr != nil {
		err = fmt.Errorf("freeing what calibration allocated: %w", ferr)
	}
	if err != nil {
		return nil, err
	}
	return res, nil
}

type gpu struct {
	ctx        hw.Context
	retained   bool
	mod        hw.Module
	spin, copy hw.Function
	fma        hw.Function
	shared     uint32
	sms        int
	a, b       hw.DevicePtr
	streams    []hw.Stream
	events     []hw.Event
}

type cal struct {
	drv   hw.Driver
	opt   Options
	ctx   context.Context
	clock hw.Clock
	start time.Duration

	numa  hw.NUMA
	node  []int      // per GPU: its NUMA node (-1: none known), whose memory and CPUs measure it
	mu    sync.Mutex // guards res.Placement, res.Nodes and stuck, written from allPageable's threads
	stuck bool       // a binding could not be undone: bind no more
	gpus  []gpu
	// pinned holds, per NUMA node (-1: placed by the OS), two pinned host
	// buffers of maxSz: H2D copies read the first, D2H copies write the
	// second.
	pinned map[int]*[2]hw.HostPtr
	maxSz  uint64
	res    *Result
	done   int
	total  int
	// doing names the measurement under way, for errors: a failed call
	// says where in the calibration it failed.
	doing string
}

const maxEvents = 64

func (c *cal) sizes() []uint64 {
	var out []uint64
	step, top := uint64(2), uint64(1<<30)
	if c.opt.Quick {
		step, top = 4, 256<<20
	}
	for s := uint64(4 << 10); s <= top; s *= step {
		out = append(out, s)
	}
	return out
}

func (c *cal) repeats() int {
	if c.opt.Quick {
		return 5
	}
	return 9
}

// over reports whether measurements should stop starting: the budget is
// spent, or the calibration was cancelled (run then returns ctx's error).
func (c *cal) over() bool { return c.ctx.Err() != nil || c.clock.Now()-c.start > c.opt.Budget }

func (c *cal) step(what string) {
	if c.ctx.Err() != nil {
		return // what follows an interrupt is skipped, not measured: no news
	}
	c.done++
	if c.opt.Progress != nil {
		c.opt.Progress(c.done, c.total, what)
	}
}

func (c *cal) run() (*Result, error) {
	drv := c.drv
	r := &Result{Date: time.Now().UTC()}
	c.res = r
	var err error
	if r.DriverVersion, err = drv.Version(); err != nil {
		return nil, err
	}
	n, err := drv.DeviceCount()
	if err != nil {
		return nil, err
	}
	sizes := c.sizes()
	c.maxSz = sizes[len(sizes)-1]
	c.gpus = make([]gpu, n)
	for i := 0; i < n; i++ {
		c.doing = fmt.Sprintf("setting up gpu%d", i)
		if err := c.setupGPU(i); err != nil {
			return nil, err
		}
	}
	var problem error
	c.node, problem = hw.DeviceNodes(drv, c.numa, n)
	if problem != nil {
		c.note(fmt.Sprintf("reading which NUMA node each GPU is on: %v; the GPUs it could not read were measured from memory placed as the OS places it", problem))
	}
	r.Nodes = slices.Clone(c.node)
	c.doing = "allocating pinned host buffers"
	c.pinned = map[int]*[2]hw.HostPtr{}
	for i, node := range c.node {
		if c.pinned[node] != nil {
			continue
		}
		bufs := &[2]hw.HostPtr{}
		c.pinned[node] = bufs
		err := c.onNode(i, func() error {
			for k := range bufs {
				var err error
				if bufs[k], err = drv.MemHostAlloc(c.maxSz); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	pairs := 0
	c.doing = "asking which GPUs can reach each other's memory"
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i != j {
				if ok, err := drv.CanAccessPeer(i, j); err != nil {
					return nil, err
				} else if ok {
					pairs++
				}
			}
		}
	}
	c.total = 1 + n*8 + pairs + 2 // overheads; per GPU 5 paths, copies at once, kernels, done; pairs; all at once, memcpy
	// Host overheads on GPU 0.
	c.doing = "measuring launch and sync overheads on gpu0"
	if err := func() error {
		defer c.pin(0)()
		return c.overheads()
	}(); err != nil {
		return nil, err
	}
	c.step("launch and sync overheads")
	unpin := func() {}
	defer func() { unpin() }()
	for i := 0; i < n; i++ {
		unpin()
		unpin = c.pin(i)
		type path struct {
			name string
			dst  *[]PathFit
			run  func(off, n uint64, s hw.Stream) error
			busy bool
		}
		g := &c.gpus[i]
		in, out := c.pinned[c.node[i]][0], c.pinned[c.node[i]][1]
		c.doing = fmt.Sprintf("allocating pageable host memory for gpu%d", i)
		page, err := hw.AllocPageable(c.maxSz) // first touched here, on gpu i's node
		if err != nil {
			return nil, err
		}
		paths := []path{
			{"h2d pinned", &r.H2D, func(o, n uint64, s hw.Stream) error {
				return drv.MemcpyHtoDAsync(g.a+hw.DevicePtr(o), in+hw.HostPtr(o), n, s)
			}, true},
			{"d2h pinned", &r.D2H, func(o, n uint64, s hw.Stream) error {
				return drv.MemcpyDtoHAsync(out+hw.HostPtr(o), g.a+hw.DevicePtr(o), n, s)
			}, true},
			{"d2d", &r.D2D, func(o, n uint64, s hw.Stream) error {
				return drv.MemcpyDtoDAsync(g.b+hw.DevicePtr(o), g.a+hw.DevicePtr(o), n, s)
			}, true},
			{"h2d pageable", &r.H2DPageable, func(o, n uint64, s hw.Stream) error {
				return drv.MemcpyHtoDAsync(g.a+hw.DevicePtr(o), page.Ptr()+hw.HostPtr(o), n, s)
			}, false},
			{"d2h pageable", &r.D2HPageable, func(o, n uint64, s hw.Stream) error {
				return drv.MemcpyDtoHAsync(page.Ptr()+hw.HostPtr(o), g.a+hw.DevicePtr(o), n, s)
			}, false},
		}
		for _, p := range paths {
			name := fmt.Sprintf("%s gpu%d", p.name, i)
			if c.over() {
				r.Skipped = append(r.Skipped, name)
				*p.dst = append(*p.dst, PathFit{Name: name})
				c.step(name + " (skipped: budget)")
				continue
			}
			c.doing = "" // a path's errors name it and the size
			f, err := c.path(i, name, p.busy, p.run)
			if err != nil {
				page.Free()
				return nil, err
			}
			*p.dst = append(*p.dst, f)
			c.step(name)
		}
		// Aggregates.
		c.doing = fmt.Sprintf("measuring concurrent copies on gpu%d", i)
		if !c.over() {
			bi, err := c.concurrent(i, []func(s hw.Stream) error{
				func(s hw.Stream) error { return drv.MemcpyHtoDAsync(g.a, in, c.maxSz, s) },
				func(s hw.Stream) error { return drv.MemcpyDtoHAsync(out, g.b, c.maxSz, s) },
			}, 2*c.maxSz)
			if err != nil {
				page.Free()
				return nil, err
			}
			r.Bidirectional = append(r.Bidirectional, bi)
			var scaling []float64
			for k := 1; k <= 4; k++ {
				var fs []func(s hw.Stream) error
				per := c.maxSz / uint64(k)
				for j := 0; j < k; j++ {
					if j%2 == 0 {
						fs = append(fs, func(s hw.Stream) error { return drv.MemcpyHtoDAsync(g.a, in, per, s) })
					} else {
						fs = append(fs, func(s hw.Stream) error { return drv.MemcpyDtoHAsync(out, g.b, per, s) })
					}
				}
				x, err := c.concurrent(i, fs, per*uint64(k))
				if err != nil {
					page.Free()
					return nil, err
				}
				scaling = append(scaling, x)
			}
			r.CopyEngineScaling = append(r.CopyEngineScaling, scaling)
		} else {
			r.Bidirectional = append(r.Bidirectional, 0)
			r.CopyEngineScaling = append(r.CopyEngineScaling, nil)
			r.Skipped = append(r.Skipped, fmt.Sprintf("concurrent copies gpu%d", i))
		}
		c.step(fmt.Sprintf("concurrent copies gpu%d", i))
		c.doing = fmt.Sprintf("freeing gpu%d's pageable host memory", i)
		if err := page.Free(); err != nil {
			return nil, err
		}
		c.doing = "" // the kernels' errors name them
		if err := c.kernels(i); err != nil {
			return nil, err
		}
		c.step(fmt.Sprintf("memory and FMA kernels gpu%d", i))
		if err := c.sampleHostOps(fmt.Sprintf("gpu%d", i), 1); err != nil {
			return nil, err
		}
		c.step(fmt.Sprintf("gpu%d done", i))
	}
	unpin()
	unpin = func() {}
	// Peer to peer.
	for i := 0; i < n; i++ {
		for j := 0; j < n; j++ {
			if i == j {
				continue
			}
			c.doing = fmt.Sprintf("asking whether gpu%d can reach gpu%d's memory", i, j)
			ok, err := drv.CanAccessPeer(i, j)
			if err != nil {
				return nil, err
			}
			if !ok {
				continue
			}
			name := fmt.Sprintf("p2p gpu%d->gpu%d", i, j)
			if c.over() {
				r.Skipped = append(r.Skipped, name)
				c.step(name + " (skipped: budget)")
				continue
			}
			c.doing = fmt.Sprintf("enabling peer access gpu%d->gpu%d", i, j)
			if ok, err := c.enablePeers(i, j); err != nil {
				return nil, err
			} else if !ok {
				r.Skipped = append(r.Skipped, name+" (the driver has no peer access left)")
				c.step(name + " (skipped: no peer access left)")
				continue
			}
			c.doing = ""
			src, dst := &c.gpus[i], &c.gpus[j]
			f, err := c.path(i, name, true, func(o, n uint64, s hw.Stream) error {
				return drv.MemcpyPeerAsync(dst.b+hw.DevicePtr(o), dst.ctx, src.a+hw.DevicePtr(o), src.ctx, n, s)
			})
			if err != nil {
				return nil, err
			}
			r.P2P = append(r.P2P, f)
			if i < j && !c.over() {
				c.doing = fmt.Sprintf("measuring p2p gpu%d<->gpu%d both ways", i, j)
				x, err := c.concurrent(i, []func(s hw.Stream) error{
					func(s hw.Stream) error { return drv.MemcpyPeerAsync(dst.b, dst.ctx, src.a, src.ctx, c.maxSz, s) },
					func(s hw.Stream) error { return drv.MemcpyPeerAsync(src.b, src.ctx, dst.a, dst.ctx, c.maxSz, s) },
				}, 2*c.maxSz)
				if err != nil {
					return nil, err
				}
				r.P2PBidirectional = append(r.P2PBidirectional, x)
			}
			c.step(name)
		}
	}
	// Every GPU's H2D at once, then D2H, pinned and pageable.
	c.doing = "measuring every GPU's copies at once"
	if n > 1 {
		for _, m := range []struct {
			dst      *float64
			h2d      bool
			pageable bool
		}{{&r.AllH2D, true, false}, {&r.AllD2H, false, false}, {&r.AllH2DPageable, true, true}, {&r.AllD2HPageable, false, true}} {
			if c.over() {
				break
			}
			var x float64
			var err error
			if m.pageable {
				x, err = c.allPageable(m.h2d)
			} else {
				x, err = c.allAtOnce(m.h2d)
			}
			if err != nil {
				return nil, err
			}
			*m.dst = x
		}
	} else if n == 1 {
		// One GPU: all at once is the GPU alone.
		for _, m := range []struct {
			dst *float64
			fit []PathFit
		}{{&r.AllH2D, r.H2D}, {&r.AllD2H, r.D2H}, {&r.AllH2DPageable, r.H2DPageable}, {&r.AllD2HPageable, r.D2HPageable}} {
			if len(m.fit) == 1 {
				*m.dst = m.fit[0].Bandwidth
			}
		}
	}
	// Every pair with peer access at once, both ways.
	if len(r.P2P) > 0 && !c.over() {
		c.doing = "measuring every peer pair at once"
		x, err := c.allPairsAtOnce()
		if err != nil {
			return nil, err
		}
		r.AllP2P = x
	}
	c.step("all GPUs at once")
	// Host memcpy.
	c.doing = "measuring host memcpy"
	if hm, err := c.hostMemcpy(); err != nil {
		return nil, err
	} else {
		r.HostMemcpy = hm
	}
	if err := c.sampleHostOps("host memcpy", 3); err != nil {
		return nil, err
	}
	c.step("host memcpy")
	// Measurements skipped because the calibration was cancelled look like
	// the budget's: a cancelled calibration gives no result.
	if err := c.ctx.Err(); err != nil {
		return nil, err
	}
	return r, nil
}

func (c *cal) setupGPU(i int) error {
	drv := c.drv
	g := &c.gpus[i]
	d := Device{}
	var err error
	if d.Name, err = drv.DeviceName(i); err != nil {
		return err
	}
	for _, a := range []struct {
		attr hw.Attr
		dst  *int
	}{{hw.AttrSMs, &d.SMs}, {hw.AttrCopyEngines, &d.CopyEngines}, {hw.AttrClockKHz, &d.ClockKHz},
		{hw.AttrCCMajor, &d.ComputeMajor}, {hw.AttrCCMinor, &d.ComputeMin}} {
		if *a.dst, err = drv.Attribute(i, a.attr); err != nil {
			return err
		}
	}
	if d.MemoryBytes, err = drv.TotalMem(i); err != nil {
		return err
	}
	c.res.Devices = append(c.res.Devices, d)
	g.sms = d.SMs
	if g.ctx, err = drv.PrimaryCtxRetain(i); err != nil {
		return err
	}
	g.retained = true
	if err := drv.SetCurrent(g.ctx); err != nil {
		return err
	}
	free, _, err := drv.MemGetInfo()
	if err != nil {
		return err
	}
	const margin = 256 << 20
	if 2*c.maxSz+margin > free {
		return fmt.Errorf("calibration needs %d MiB of device memory on GPU %d (%s): two buffers of %d MiB for its copies and %d MiB for the driver and the kernels; it has %d MiB free",
			(2*c.maxSz+margin)>>20, i, d.Name, c.maxSz>>20, margin>>20, free>>20)
	}
	if g.mod, err = drv.ModuleLoad(kernels.PTX()); err != nil {
		return fmt.Errorf("loading gpusim's kernels on %s: %w", d.Name, err)
	}
	for _, f := range []struct {
		name string
		dst  *hw.Function
	}{{kernels.Spin, &g.spin}, {kernels.Copy, &g.copy}, {kernels.FMA, &g.fma}} {
		if *f.dst, err = drv.ModuleFunction(g.mod, f.name); err != nil {
			return err
		}
	}
	perSM, err := drv.Attribute(i, hw.AttrSharedPerSM)
	if err != nil {
		return err
	}
	optin, err := drv.Attribute(i, hw.AttrSharedPerBlockIn)
	if err != nil {
		return err
	}
	g.shared = uint32(min(perSM/2+1024, optin))
	if err := drv.SetMaxDynamicShared(g.spin, int(g.shared)); err != nil {
		return err
	}
	if g.a, err = drv.MemAlloc(c.maxSz); err != nil {
		return err
	}
	if g.b, err = drv.MemAlloc(c.maxSz); err != nil {
		return err
	}
	for k := 0; k < 4; k++ {
		s, err := drv.StreamCreate()
		if err != nil {
			return err
		}
		g.streams = append(g.streams, s)
	}
	for k := 0; k < maxEvents; k++ {
		e, err := drv.EventCreate()
		if err != nil {
			return err
		}
		g.events = append(g.events, e)
	}
	// Warm up: load the module and wake the GPU.
	for k := 0; k < 3; k++ {
		if err := drv.Launch(g.spin, uint32(g.sms), kernels.SpinBlock, g.shared, g.streams[0], hw.U64(100_000), hw.U64(0)); err != nil {
			return fmt.Errorf("launching gpusim's spin kernel on %s: %w", d.Name, err)
		}
	}
	return drv.StreamSynchronize(g.streams[0])
}

// enablePeers lets GPU i reach GPU j's memory and, where the driver allows
// it, j reach i's (for the both-ways measurement). It reports false when i
// cannot: the driver has run out of peers (CUDA_ERROR_TOO_MANY_PEERS, on
// machines with many GPUs), which skips the pair.
func (c *cal) enablePeers(i, j int) (bool, error) {
	enable := func(a, b int) error {
		if err := c.drv.SetCurrent(c.gpus[a].ctx); err != nil {
			return err
		}
		return c.drv.EnablePeerAccess(c.gpus[b].ctx)
	}
	var ce *hw.CUDAError
	if err := enable(i, j); err != nil {
		if errors.As(err, &ce) && ce.Code == errTooManyPeers {
			return false, c.drv.SetCurrent(c.gpus[i].ctx)
		}
		return false, err
	}
	if ok, err := c.drv.CanAccessPeer(j, i); err == nil && ok {
		if err := enable(j, i); err != nil && !(errors.As(err, &ce) && ce.Code == errTooManyPeers) {
			return false, err
		}
	}
	return true, c.drv.SetCurrent(c.gpus[i].ctx)
}

// errTooManyPeers is CUDA_ERROR_TOO_MANY_PEERS (cuda.h).
const errTooManyPeers = 711

// busy queues a spin kernel long enough to cover the host's issuing of
// what follows, so those ops run back to back on the GPU.
func (c *cal) busy(g *gpu, s hw.Stream, d time.Duration) error {
	return c.drv.Launch(g.spin, uint32(g.sms), kernels.SpinBlock, g.shared, s, hw.U64(uint64(d.Nanoseconds())), hw.U64(0))
}

// path measures one copy path at every size: per size, repeats copies
// bracketed by events (each copy's time is between consecutive events),
// queued behind a busy kernel when busy is set. Each repeat of a queued
// copy copies a different part of the buffers (as far as they allow), so it
// does not find the last one's bytes in the GPU's L2 cache: the streaming
// rate, as a program's copies of fresh data see it. Pageable copies reuse
// one host buffer, as programs and the hw backend do (the driver's staging
// is faster on pages it has just seen).
func (c *cal) path(gi int, name string, busy bool, run func(off, n uint64, s hw.Stream) error) (PathFit, error) {
	drv := c.drv
	g := &c.gpus[gi]
	if err := drv.SetCurrent(g.ctx); err != nil {
		return PathFit{}, err
	}
	s := g.streams[0]
	sizes := c.sizes()
	reps := c.repeats()
	// Rounds of every size, not every repeat of one size: a stretch of
	// noise (another tenant, a clock change) then hits one sample of each
	// size, which the robust fit sets aside, instead of every sample of one.
	bySize := make([][]float64, len(sizes))
	ev := g.events[:len(sizes)+1]
	for k := 0; k < reps; k++ {
		if err := c.ctx.Err(); err != nil {
			return PathFit{}, err
		}
		if busy {
			// Long enough to cover issuing the round.
			if err := c.busy(g, s, 300*time.Microsecond+time.Duration(len(sizes))*20*time.Microsecond); err != nil {
				return PathFit{}, err
			}
		}
		for i, n := range sizes {
			if !busy && i > 0 {
				// Unqueued (pageable) copies: each on an idle stream.
				if err := drv.StreamSynchronize(s); err != nil {
					return PathFit{}, err
				}
			}
			if !busy || i == 0 {
				if err := drv.EventRecord(ev[i], s); err != nil {
					return PathFit{}, err
				}
			}
			off := uint64(0)
			if slots := c.maxSz / n; slots > 1 && busy {
				off = uint64(k) % slots * n
			}
			if err := run(off, n, s); err != nil {
				return PathFit{}, fmt.Errorf("%s, %d bytes: %w", name, n, err)
			}
			if err := drv.EventRecord(ev[i+1], s); err != nil {
				return PathFit{}, err
			}
			if !busy {
				// ev[i] and ev[i+1] bracket this copy alone; keep the
				// pair apart from the next copy's.
				if err := drv.EventSynchronize(ev[i+1]); err != nil {
					return PathFit{}, err
				}
				ms, err := drv.EventElapsed(ev[i], ev[i+1])
				if err != nil {
					return PathFit{}, err
				}
				bySize[i] = append(bySize[i], float64(ms)/1e3)
			}
		}
		if busy {
			if err := drv.EventSynchronize(ev[len(sizes)]); err != nil {
				return PathFit{}, err
			}
			for i := range sizes {
				ms, err := drv.EventElapsed(ev[i], ev[i+1])
				if err != nil {
					return PathFit{}, err
				}
				bySize[i] = append(bySize[i], float64(ms)/1e3)
			}
		}
	}
	var samples []Sample
	spread := 0.0
	for i, n := range sizes {
		for _, y := range bySize[i] {
			samples = append(samples, Sample{X: float64(n), Y: y})
		}
		st := Summarize(bySize[i])
		if st.Median > 0 {
			spread = math.Max(spread, (st.P90-st.P10)/st.Median)
		}
	}
	// Event times have a resolution of about half a microsecond: a copy
	// timed at zero carries no information for a relative fit. Pageable
	// copies (not busy) are fitted from 1 MiB up: below that the driver
	// copies them another way (inline in its command stream), and the model
	// stages them all.
	kept := samples[:0]
	for _, x := range samples {
		if x.Y > 0 && (busy || x.X >= 1<<20) {
			kept = append(kept, x)
		}
	}
	fit, err := FitLatencyBandwidth(kept)
	if err != nil {
		// One path's noisy samples do not throw away the rest of the
		// calibration: the path is reported as not fitted.
		why := strings.TrimPrefix(err.Error(), "calibrate: ")
		return PathFit{Name: name, Spread: spread, Sizes: len(sizes), Unfitted: why}, nil
	}
	return PathFit{Name: name, LatencyBandwidth: fit, Spread: spread, Sizes: len(sizes)}, nil
}

// concurrent runs fs at once on separate streams of GPU gi, all released
// by one event after a busy kernel, and returns bytes over the time from
// the release to the last one's end.
func (c *cal) concurrent(gi int, fs []func(hw.Stream) error, bytes uint64) (float64, error) {
	drv := c.drv
	g := &c.gpus[gi]
	if err := drv.SetCurrent(g.ctx); err != nil {
		return 0, err
	}
	best := 0.0
	for rep := 0; rep < 3; rep++ {
		go0, ends := g.events[0], g.events[1:1+len(fs)]
		if err := c.busy(g, g.streams[0], 300*time.Microsecond); err != nil {
			return 0, err
		}
		if err := drv.EventRecord(go0, g.streams[0]); err != nil {
			return 0, err
		}
		for k, f := range fs {
			s := g.streams[k%len(g.streams)]
			if k > 0 {
				if err := drv.StreamWaitEvent(s, go0); err != nil {
					return 0, err
				}
			}
			if err := f(s); err != nil {
				return 0, err
			}
			if err := drv.EventRecord(ends[k], s); err != nil {
				return 0, err
			}
		}
		var last float64
		for k := range fs {
			if err := drv.EventSynchronize(ends[k]); err != nil {
				return 0, err
			}
			ms, err := drv.EventElapsed(go0, ends[k])
			if err != nil {
				return 0, err
			}
			last = math.Max(last, float64(ms)/1e3)
		}
		if last > 0 {
			best = math.Max(best, float64(bytes)/last)
		}
	}
	return best, nil
}

// hold makes g's context current, queues 2 ms of spinning on its first
// stream and records events[0] after it: work issued behind that event
// (on that stream, or on others that wait for it) starts together.
func (c *cal) hold(g *gpu) error {
	if err := c.drv.SetCurrent(g.ctx); err != nil {
		return err
	}
	if err := c.busy(g, g.streams[0], 2*time.Millisecond); err != nil {
		return err
	}
	return c.drv.EventRecord(g.events[0], g.streams[0])
}

// allAtOnce has every GPU copy c.maxSz bytes from pinned memory (h2d) or
// to it at once and returns the sum of their rates.
func (c *cal) allAtOnce(h2d bool) (float64, error) {
	drv := c.drv
	// Each GPU waits on its own busy kernel; the copies are issued while
	// they spin, so they start within a few microseconds of each other.
	for i := range c.gpus {
		g := &c.gpus[i]
		if err := c.hold(g); err != nil {
			return 0, err
		}
		var err error
		bufs := c.pinned[c.node[i]]
		if h2d {
			err = drv.MemcpyHtoDAsync(g.a, bufs[0], c.maxSz, g.streams[0])
		} else {
			err = drv.MemcpyDtoHAsync(bufs[1], g.a, c.maxSz, g.streams[0])
		}
		if err != nil {
			return 0, err
		}
		if err := drv.EventRecord(g.events[1], g.streams[0]); err != nil {
			return 0, err
		}
	}
	total := 0.0
	for i := range c.gpus {
		g := &c.gpus[i]
		if err := drv.SetCurrent(g.ctx); err != nil {
			return 0, err
		}
		if err := drv.EventSynchronize(g.events[1]); err != nil {
			return 0, err
		}
		ms, err := drv.EventElapsed(g.events[0], g.events[1])
		if err != nil {
			return 0, err
		}
		if ms > 0 {
			total += float64(c.maxSz) / (float64(ms) / 1e3)
		}
	}
	return total, nil
}

// allPageable has every GPU copy between pageable memory and itself at once
// (h2d: to the GPU), each from its own host thread, as a program with a
// thread per GPU would: a pageable copy holds its thread while the driver
// stages it through pinned buffers. It returns the bytes moved over the
// time from the threads' release to the last return, the median of three
// rounds.
func (c *cal) allPageable(h2d bool) (float64, error) {
	drv := c.drv
	n := min(c.maxSz, 64<<20) // past the pageable rate's knee, and 64 MiB of host memory a GPU
	bufs := make([]*hw.Pageable, len(c.gpus))
	defer func() {
		for _, b := range bufs {
			if b != nil {
				b.Free()
			}
		}
	}()
	for i := range bufs {
		err := c.onNode(i, func() (err error) {
			bufs[i], err = hw.AllocPageable(n) // first touched on gpu i's node
			return err
		})
		if err != nil {
			return 0, err
		}
	}
	var rates []float64
	for round := 0; round < 3; round++ {
		var ready, done sync.WaitGroup
		start := make(chan struct{})
		ends := make([]time.Duration, len(c.gpus))
		errs := make([]error, len(c.gpus))
		for i := range c.gpus {
			ready.Add(1)
			done.Add(1)
			go func(i int) {
				defer done.Done()
				// A context is current per OS thread.
				runtime.LockOSThread()
				defer runtime.UnlockOSThread()
				defer c.pin(i)()
				g := &c.gpus[i]
				err := drv.SetCurrent(g.ctx)
				ready.Done()
				<-start
				if err == nil {
					if h2d {
						err = drv.MemcpyHtoDAsync(g.a, bufs[i].Ptr(), n, g.streams[0])
					} else {
						err = drv.MemcpyDtoHAsync(bufs[i].Ptr(), g.a, n, g.streams[0])
					}
				}
				if err == nil {
					err = drv.StreamSynchronize(g.streams[0])
				}
				ends[i], errs[i] = c.clock.Now(), err
				if serr := drv.SetCurrent(0); err == nil {
					errs[i] = serr
				}
			}(i)
		}
		ready.Wait()
		t0 := c.clock.Now()
		close(start)
		done.Wait()
		last := t0
		for i, err := range errs {
			if err != nil {
				return 0, err
			}
			last = max(last, ends[i])
		}
		if last > t0 {
			rates = append(rates, float64(n)*float64(len(c.gpus))/(last-t0).Seconds())
		}
		if err := c.ctx.Err(); err != nil {
			return 0, err
		}
	}
	if len(rates) == 0 {
		return 0, nil
	}
	return Summarize(rates).Median, nil
}

// allPairsAtOnce has every GPU copy to every peer it can reach at once
// (each pair on its own stream of the source GPU, the streams of each GPU
// released by one event after a busy kernel) and returns the bytes moved
// over the time from the first release to the last end.
func (c *cal) allPairsAtOnce() (float64, error) {
	drv := c.drv
	n := len(c.gpus)
	per := c.maxSz / uint64(max(1, n-1)) // each source splits its buffer among its peers
	type copyAt struct{ src, k int }
	var started []copyAt
	for i := range c.gpus {
		g := &c.gpus[i]
		if err := c.hold(g); err != nil {
			return 0, err
		}
		k := 0
		for j := range c.gpus {
			if j == i {
				continue
			}
			if ok, err := drv.CanAccessPeer(i, j); err != nil {
				return 0, err
			} else if !ok {
				continue
			}
			s := g.streams[k%len(g.streams)]
			if err := drv.StreamWaitEvent(s, g.events[0]); err != nil {
				return 0, err
			}
			dst := &c.gpus[j]
			off := hw.DevicePtr(uint64(i) * per % (c.maxSz - per + 1))
			if err := drv.MemcpyPeerAsync(dst.b+off, dst.ctx, g.a, g.ctx, per, s); err != nil {
				return 0, err
			}
			if err := drv.EventRecord(g.events[1+k], s); err != nil {
				return 0, err
			}
			started = append(started, copyAt{i, k})
			k++
		}
	}
	// Each GPU's copies are timed from its own release; the releases are
	// within microseconds of each other against copies of milliseconds, so
	// the slowest GPU's span stands for the whole.
	span := 0.0
	for _, x := range started {
		g := &c.gpus[x.src]
		if err := drv.SetCurrent(g.ctx); err != nil {
			return 0, err
		}
		if err := drv.EventSynchronize(g.events[1+x.k]); err != nil {
			return 0, err
		}
		ms, err := drv.EventElapsed(g.events[0], g.events[1+x.k])
		if err != nil {
			return 0, err
		}
		span = math.Max(span, float64(ms)/1e3)
	}
	if span <= 0 {
		return 0, nil
	}
	return float64(uint64(len(started))*per) / span, nil
}

// overheads measures host call costs on GPU 0.
func (c *cal) overheads() error {
	drv, r := c.drv, c.res
	g := &c.gpus[0]
	if err := drv.SetCurrent(g.ctx); err != nil {
		return err
	}
	s := g.streams[0]
	// The host clock is read once per call, as the hw backend reads it once
	// per op (a read can cost half a microsecond on a virtual machine): a
	// call's time is from the previous reading to the next.
	const n = 1000
	times := func(f func(k int) error) ([]float64, error) {
		xs := make([]float64, 0, n)
		prev := c.clock.Now()
		for k := 0; k < n; k++ {
			if err := f(k); err != nil {
				return nil, err
			}
			t := c.clock.Now()
			xs = append(xs, (t - prev).Seconds())
			prev = t
		}
		return xs, drv.StreamSynchronize(s)
	}
	median := func(f func(k int) error) (float64, error) {
		xs, err := times(f)
		return Summarize(xs).Median, err
	}
	spin := func(ns uint64) error {
		return drv.Launch(g.spin, uint32(g.sms), kernels.SpinBlock, g.shared, s, hw.U64(ns), hw.U64(0))
	}
	launch := func(int) error { return spin(0) }
	var err error
	if r.Launch, err = median(launch); err != nil {
		return err
	}
	e := g.events
	// A kernel op (a launch and its timing event) in fifteen rounds: the
	// median of the rounds' means is what a long loop pays per op
	// (occasional slow calls included), steadier than one mean on a host
	// that is shared; also the median of all calls.
	rounds := func(ns uint64) (medianOfMeans, medianOfAll float64, err error) {
		var means, all []float64
		for round := 0; round < 15; round++ {
			xs, err := times(func(k int) error {
				if err := spin(ns); err != nil {
					return err
				}
				return drv.EventRecord(e[k%maxEvents], s)
			})
			if err != nil {
				return 0, 0, err
			}
			means = append(means, mean(xs))
			all = append(all, xs...)
		}
		return Summarize(means).Median, Summarize(all).Median, nil
	}
	if r.BracketedOpLoop, r.BracketedOpMedian, err = rounds(0); err != nil {
		return err
	}
	// The same with 4 us kernels, which keep the GPU busy part of the time
	// (recorded for comparison; not a model parameter).
	if r.BracketedOpBusy, _, err = rounds(1300); err != nil {
		return err
	}
	if r.EventRecord, err = median(func(k int) error { return drv.EventRecord(e[k%maxEvents], s) }); err != nil {
		return err
	}
	if r.IdleStreamSync, err = median(func(int) error { return drv.StreamSynchronize(s) }); err != nil {
		return err
	}
	if r.CopyCall, err = median(func(int) error { return drv.MemcpyHtoDAsync(g.a, c.pinned[c.node[0]][0], 4, s) }); err != nil {
		return err
	}
	if r.EventRoundTrip, err = median(func(k int) error {
		if err := drv.EventRecord(e[k%maxEvents], s); err != nil {
			return err
		}
		return drv.EventSynchronize(e[k%maxEvents])
	}); err != nil {
		return err
	}
	// The GPU's fixed cost of a kernel: empty kernels queued behind a busy one.
	for i := range c.gpus {
		g := &c.gpus[i]
		if err := drv.SetCurrent(g.ctx); err != nil {
			return err
		}
		s := g.streams[0]
		if err := c.busy(g, s, 500*time.Microsecond); err != nil {
			return err
		}
		const k = 16
		for j := 0; j <= k; j++ {
			if err := drv.EventRecord(g.events[j], s); err != nil {
				return err
			}
			if j < k {
				if err := drv.Launch(g.spin, uint32(g.sms), kernels.SpinBlock, g.shared, s, hw.U64(0), hw.U64(0)); err != nil {
					return err
				}
			}
		}
		if err := drv.EventSynchronize(g.events[k]); err != nil {
			return err
		}
		var xs []float64
		for j := 0; j < k; j++ {
			ms, err := drv.EventElapsed(g.events[j], g.events[j+1])
			if err != nil {
				return err
			}
			xs = append(xs, float64(ms)/1e3)
		}
		r.KernelOverhead = append(r.KernelOverhead, Summarize(xs).Median)
	}
	return c.sampleHostOps("launch and sync overheads", 3)
}

// sampleHostOps runs the loop of empty kernels through the hw backend runs
// times (see HostOpRuns), unless the budget is spent and a run was taken,
// and sets BracketedOp to the median of all runs so far.
func (c *cal) sampleHostOps(after string, runs int) error {
	r := c.res
	for k := 0; k < runs; k++ {
		if len(r.HostOpRuns) > 0 && c.over() {
			break
		}
		c.doing = fmt.Sprintf("timing a loop of empty kernels through the hw backend (after %s)", after)
		x, err := c.backendOps()
		if err != nil {
			return err
		}
		r.HostOpRuns = append(r.HostOpRuns, HostOpRun{After: after, PerOp: x})
	}
	xs := make([]float64, len(r.HostOpRuns))
	for i, h := range r.HostOpRuns {
		xs[i] = h.PerOp
	}
	r.BracketedOp = Summarize(xs).Median
	// The backend leaves no context current on this thread.
	c.doing = "making gpu0's context current again after the backend's loop"
	if len(c.gpus) > 0 {
		return c.drv.SetCurrent(c.gpus[0].ctx)
	}
	return nil
}

// kernels measures the memory and FMA kernels' throughput on GPU i.
func (c *cal) kernels(i int) error {
	drv, r := c.drv, c.res
	g := &c.gpus[i]
	if err := drv.SetCurrent(g.ctx); err != nil {
		return err
	}
	s := g.streams[0]
	if c.over() {
		r.MemoryKernel = append(r.MemoryKernel, 0)
		r.FMA = append(r.FMA, 0)
		r.Skipped = append(r.Skipped, fmt.Sprintf("kernels gpu%d", i))
		return nil
	}
	timeIt := func(launch func() error) (float64, error) {
		var xs []float64
		for k := 0; k < 5; k++ {
			// Behind a busy kernel, so the host's call gap is not timed.
			if err := c.busy(g, s, 100*time.Microsecond); err != nil {
				return 0, err
			}
			if err := drv.EventRecord(g.events[0], s); err != nil {
				return 0, err
			}
			if err := launch(); err != nil {
				return 0, err
			}
			if err := drv.EventRecord(g.events[1], s); err != nil {
				return 0, err
			}
			if err := drv.EventSynchronize(g.events[1]); err != nil {
				return 0, err
			}
			ms, err := drv.EventElapsed(g.events[0], g.events[1])
			if err != nil {
				return 0, err
			}
			xs = append(xs, float64(ms)/1e3)
		}
		return Summarize(xs).Median, nil
	}
	n16 := c.maxSz / kernels.CopyBytesPerElem
	perSM, err := drv.BlocksPerSM(g.copy, kernels.CopyBlock, 0)
	if err != nil {
		return fmt.Errorf("memory kernel on gpu%d: %w", i, err)
	}
	grid := uint32(g.sms * max(perSM, 1)) // as many as the GPU holds at once
	t, err := timeIt(func() error {
		return drv.Launch(g.copy, grid, kernels.CopyBlock, 0, s, hw.U64(uint64(g.b)), hw.U64(uint64(g.a)), hw.U64(n16))
	})
	if err != nil {
		return fmt.Errorf("memory kernel on gpu%d: %w", i, err)
	}
	mem := 0.0
	if t > 0 {
		mem = float64(2*n16*kernels.CopyBytesPerElem) / t
	}
	r.MemoryKernel = append(r.MemoryKernel, mem)
	iters := uint32(1 << 14)
	if c.opt.Quick {
		iters = 1 << 12
	}
	fgrid := uint32(g.sms * 16)
	t, err = timeIt(func() error {
		return drv.Launch(g.fma, fgrid, kernels.FMABlock, 0, s, hw.U64(uint64(g.b)), hw.U32(iters))
	})
	if err != nil {
		return fmt.Errorf("FMA kernel on gpu%d: %w", i, err)
	}
	flops := 0.0
	if t > 0 {
		flops = float64(fgrid) * kernels.FMABlock * float64(iters) * kernels.FMAFlopsPerIter / t
	}
	r.FMA = append(r.FMA, flops)
	return nil
}

// free releases everything, returning the first error.
func (c *cal) free() error {
	drv := c.drv
	var first error
	do := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	// After an error or a cancel, copies and kernels may still be queued:
	// let every GPU finish before any memory they use is freed.
	for i := range c.gpus {
		if c.gpus[i].retained {
			do(drv.SetCurrent(c.gpus[i].ctx))
			do(drv.CtxSynchronize())
		}
	}
	for _, node := range slices.Sorted(maps.Keys(c.pinned)) {
		for _, p := range c.pinned[node] {
			if p != 0 {
				do(drv.MemFreeHost(p))
			}
		}
	}
	for i := range c.gpus {
		g := &c.gpus[i]
		if !g.retained {
			continue
		}
		do(drv.SetCurrent(g.ctx))
		for _, e := range g.events {
			do(drv.EventDestroy(e))
		}
		for _, s := range g.streams {
			do(drv.StreamDestroy(s))
		}
		if g.a != 0 {
			do(drv.MemFree(g.a))
		}
		if g.b != 0 {
			do(drv.MemFree(g.b))
		}
		if g.mod != 0 {
			do(drv.ModuleUnload(g.mod))
		}
		do(drv.PrimaryCtxRelease(i))
	}
	do(drv.SetCurrent(0))
	return first
}

// hostMemcpy times one thread copying between two pageable buffers.
func (c *cal) hostMemcpy() (float64, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	n := min(c.maxSz, 64<<20) // well past the last-level cache
	a, err := hw.AllocPageable(n)
	if err != nil {
		return 0, err
	}
	defer a.Free()
	b, err := hw.AllocPageable(n)
	if err != nil {
		return 0, err
	}
	defer b.Free()
	best := 0.0
	for k := 0; k < 3; k++ {
		t0 := time.Now()
		copy(b.Bytes(), a.Bytes())
		if d := time.Since(t0).Seconds(); d > 0 {
			best = math.Max(best, float64(n)/d)
		}
	}
	return best, nil
}

// backendOps runs a loop of 400 empty kernels on GPU 0 through the hw
// backend and returns the mean host time per kernel op.
func (c *cal) backendOps() (float64, error) {
	return HostOpTime(c.ctx, c.drv, hw.Options{Clock: c.clock})
}

// HostOpDevice is the device HostOpTime runs on.
const HostOpDevice = 0

// HostOpTime runs a loop of 400 empty kernels on device 0 through the hw
// backend, as a scenario's kernels run, and returns the mean host time of
// one (seconds): the launch, its timing event and the backend's own work.
// It is what calibration sets api_overhead to; replay --host-probe takes it
// again before each run on a host whose speed drifts.
func HostOpTime(ctx context.Context, drv hw.Driver, opt hw.Options) (float64, error) {
	top, err := topologies.Load("calibration", []byte(`name: calibration
hosts: [{name: cpu0}]
gpus: [{name: gpu0, model: H100-SXM}]
links: [{ends: [gpu0, cpu0], type: pcie5x16}]
`))
	if err != nil {
		return 0, err
	}
	const n = 400
	p := &sim.Program{Name: "launch loop", Streams: []sim.Stream{{GPU: 0, Name: "s"}}}
	th := sim.Thread{Name: "main"}
	for k := 0; k < n; k++ {
		th.Ops = append(th.Ops, sim.Op{Kind: sim.OpKernel, ID: fmt.Sprintf("k%d", k), SMShare: 1})
	}
	th.Ops = append(th.Ops, sim.Op{Kind: sim.OpSync, ID: "sync", Sync: sim.SyncStream})
	p.Threads = []sim.Thread{th}
	res, _, err := hw.Run(ctx, drv, top.Machine, p, opt)
	if err != nil {
		return 0, err
	}
	var sum sim.Time
	for _, r := range res.Ops[:n] {
		sum += r.HostEnd - r.Call
	}
	return sum.Seconds() / n, nil
}

// pin binds the calling goroutine, locked to its OS thread, to GPU i's
// NUMA node, where it has one: its host copies are measured from there.
// Where a binding could not be undone, the thread stays bound (and its
// goroutine locked, so the thread ends with it) and no more are made.
func (c *cal) pin(i int) (undo func()) {
	node := c.node[i]
	c.mu.Lock()
	stuck := c.stuck
	c.mu.Unlock()
	if node < 0 {
		return func() {}
	}
	if stuck {
		c.placementFailed(i, errors.New("an earlier binding could not be undone"))
		return func() {}
	}
	u, err := hw.PinThread(c.numa, node)
	if err != nil {
		c.placementFailed(i, err)
		return func() {}
	}
	return func() {
		if err := u(); err != nil {
			c.mu.Lock()
			c.stuck = true
			c.mu.Unlock()
			c.note(fmt.Sprintf("undoing a thread's binding to NUMA node %d: %v; no thread was bound after it", node, err))
		}
	}
}

// onNode runs f on an OS thread on GPU i's NUMA node (where it has one),
// with GPU i's context current.
func (c *cal) onNode(i int, f func() error) error {
	node := c.node[i]
	if node < 0 {
		return f()
	}
	pinErr, err := hw.OnNode(c.numa, node, func() error {
		defer c.drv.SetCurrent(0)
		if err := c.drv.SetCurrent(c.gpus[i].ctx); err != nil {
			return err
		}
		return f()
	})
	if pinErr != nil {
		c.placementFailed(i, pinErr)
	}
	return err
}

// placementFailed notes that GPU i's host copies are not all measured
// from its node: Result.Nodes says it of no node.
func (c *cal) placementFailed(i int, err error) {
	c.mu.Lock()
	c.res.Nodes[i] = -1
	c.mu.Unlock()
	c.note(fmt.Sprintf("gpu%d's host copies: binding a thread to NUMA node %d's CPUs: %v; placed as the OS places them", i, c.node[i], err))
}

// note adds a note to Result.Placement, once.
func (c *cal) note(msg string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.res.Placement, msg) {
		c.res.Placement = append(c.res.Placement, msg)
	}
}
