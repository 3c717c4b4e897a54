package hw

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"gpusim/hw/kernels"
	"gpusim/scenarios"
	"gpusim/sim"
)

const testTopology = `
name: two
hosts: [{name: cpu0, cores: 8, api_overhead: 1 us}]
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0}
  - {name: gpu1, model: H100-SXM, host: cpu0}
switches: [{name: nvs, kind: nvswitch}]
links:
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
  - {ends: [gpu0, nvs], type: nvlink4, count: 18}
  - {ends: [gpu1, nvs], type: nvlink4, count: 18}
`

func load(t *testing.T, src string) *scenarios.Scenario {
	t.Helper()
	return loadOn(t, testTopology, src)
}

// The fake's model, chosen so that every time below is a whole number of
// microseconds.
func testConfig() FakeConfig {
	return FakeConfig{
		Devices: 2, SMs: 100,
		APICost:        time.Microsecond,
		Latency:        2 * time.Microsecond,
		KernelOverhead: 3 * time.Microsecond,
		H2D:            FakePath{Latency: 5 * time.Microsecond, Bandwidth: 10e9},
		D2H:            FakePath{Latency: 4 * time.Microsecond, Bandwidth: 20e9},
		D2D:            FakePath{Latency: 1 * time.Microsecond, Bandwidth: 1000e9},
		Peer:           FakePath{Latency: 2 * time.Microsecond, Bandwidth: 100e9},
	}
}

const oneThread = `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - copy: {id: up, from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/copy}
      - record: {event: e, stream: gpu0/copy}
      - wait: {event: e, stream: gpu0/compute}
      - kernel: {id: k, stream: gpu0/compute, duration: 100 us, sm_share: 0.5}
      - copy: {id: down, from: gpu0, to: cpu0, bytes: 2 MB, stream: gpu0/compute}
      - copy: {id: peer, from: gpu0, to: gpu1, bytes: 10 MB, stream: gpu0/compute}
      - host: {id: think, duration: 7 us}
      - sync: {stream: gpu0/compute}
`

func rec(t *testing.T, res *sim.Result, id string) sim.OpRecord {
	t.Helper()
	for _, r := range res.Ops {
		if r.ID == id {
			return r
		}
	}
	t.Fatalf("no op %s", id)
	return sim.OpRecord{}
}

func TestRunTimesEachOp(t *testing.T) {
	sc := load(t, oneThread)
	f := NewFake(testConfig())
	res, info, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if live := f.Live(); len(live) > 0 {
		t.Errorf("not freed: %v", live)
	}
	const us = sim.Microsecond
	// Each stream op is followed by its end event, each call costing the
	// API cost c = 1 us. An op issued to an idle stream reaches the GPU
	// L = 2 us after its call returns, as the alignment's events do, so
	// placing its start at its call's return on the host clock is exact; on
	// a busy stream it starts at the end event of the op before. The backend
	// asks the spin kernel for its duration less the spin overhead, the
	// kernel overhead of 3 us (the fake's spins never overshoot).
	if got, want := info.SpinOverhead[0], 3*us; got != want {
		t.Errorf("spin overhead %v, want %v", got, want)
	}
	if got := info.SpinOvershoot[0]; got != 0 {
		t.Errorf("spin overshoot %v, want 0", got)
	}
	// As kernels are timed: a zero-time spin's stored start is 3 us after
	// the event before it (the overhead comes first in the fake), its stop
	// is at the event after; placed on those events, it lasts the 3 us.
	if got, want := info.SpinOverheadStamped[0], 3*us; got != want {
		t.Errorf("spin overhead as kernels are timed %v, want %v", got, want)
	}
	cases := []struct {
		id   string
		want sim.Time
	}{
		{"up", 5*us + 100*us},   // idle stream: 5 us + 1 MB at 10 GB/s
		{"k", 100 * us},         // waits for the upload; asked for 97 us: 3 + 97
		{"down", 4*us + 100*us}, // queued behind k: 4 us + 2 MB at 20 GB/s
		{"peer", 2*us + 100*us}, // queued: 2 us + 10 MB at 100 GB/s
	}
	for _, c := range cases {
		r := rec(t, res, c.id)
		// Event times are float32 milliseconds: exact to a nanosecond here.
		if got := r.End - r.Start; got < c.want-sim.Nanosecond || got > c.want+sim.Nanosecond {
			t.Errorf("%s lasted %v, want %v", c.id, got, c.want)
		}
	}
	if r := rec(t, res, "think"); r.End-r.Start != 7*us {
		t.Errorf("host op lasted %v, want 7us", r.End-r.Start)
	}
	if r := rec(t, res, "peer"); r.Copy != sim.CopyNVLink {
		t.Errorf("peer copy kind %v, want nvlink", r.Copy)
	}
	// The ops on gpu0/compute run back to back after the wait: the kernel
	// starts when the upload's end was recorded (its Start is its start
	// event, recorded while the stream still waited).
	k, down := rec(t, res, "k"), rec(t, res, "down")
	if down.Start != k.End {
		t.Errorf("down started at %v, kernel ended at %v: the stream should run them back to back", down.Start, k.End)
	}
	// The sync returns when the stream is done: it ends with the last op.
	if s, p := res.Ops[len(res.Ops)-1], rec(t, res, "peer"); s.End < p.End {
		t.Errorf("sync ended at %v before the peer copy at %v", s.End, p.End)
	}
	// Every alignment sample sees its event L after the record call
	// returned: no spread.
	if got := info.Align[0]; got != 0 {
		t.Errorf("alignment spread %v, want 0", got)
	}
	// On the host clock, the upload starts when its call returned.
	if up := rec(t, res, "up"); up.Start != up.Issued {
		t.Errorf("upload started at %v, its call returned at %v", up.Start, up.Issued)
	}
	if res.GPUs[0].Kernels != 1 || res.GPUs[0].Copies != 3 {
		t.Errorf("gpu0 counted %d kernels and %d copies, want 1 and 3", res.GPUs[0].Kernels, res.GPUs[0].Copies)
	}
	if c := res.GPUs[0].Compute; c < 100*us-sim.Nanosecond || c > 100*us+sim.Nanosecond {
		t.Errorf("gpu0 compute %v, want 100us", res.GPUs[0].Compute)
	}
}

// TestRunBracketsEveryOp checks the call sequence: each stream op followed
// by its timing event, issued on the thread in program order.
func TestRunBracketsEveryOp(t *testing.T) {
	sc := load(t, oneThread)
	f := NewFake(testConfig())
	if _, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{}); err != nil {
		t.Fatal(err)
	}
	calls := f.Calls()
	// The run proper starts after the last alignment sync.
	// The run's upload is the last one (setup warms the buffers first).
	start := 0
	for i, c := range calls {
		if c == "cuMemcpyHtoDAsync_v2" {
			start = i
		}
	}
	var seq []string
	for _, c := range calls[start:] {
		if c == "cuCtxSetCurrent" {
			continue
		}
		seq = append(seq, c)
		if c == "cuStreamSynchronize" {
			break
		}
	}
	want := []string{
		"cuMemcpyHtoDAsync_v2", "cuEventRecord",
		"cuEventRecord", "cuEventRecord", // the program's record, then its marker
		"cuStreamWaitEvent", "cuEventRecord",
		"cuLaunchKernel", "cuEventRecord",
		"cuMemcpyDtoHAsync_v2", "cuEventRecord",
		"cuMemcpyPeerAsync", "cuEventRecord",
		"cuStreamSynchronize",
	}
	if strings.Join(seq, " ") != strings.Join(want, " ") {
		t.Errorf("calls:\n got %v\nwant %v", seq, want)
	}
}

func TestRunFreesEverythingOnError(t *testing.T) {
	for _, call := range []string{"cuMemAlloc_v2", "cuMemHostAlloc", "cuModuleLoadDataEx", "cuLaunchKernel", "cuStreamCreate", "cuEventCreate", "cuMemcpyPeerAsync", "cuEventElapsedTime"} {
		for _, after := range []int{0, 1, 3} {
			cfg := testConfig()
			cfg.Fail = map[string]int{call: errOutOfMemory}
			cfg.FailAfter = map[string]int{call: after}
			f := NewFake(cfg)
			sc := load(t, oneThread)
			_, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
			var ce *CUDAError
			if err == nil {
				// A call made fewer times than after+1 cannot fail.
				n := 0
				for _, c := range f.Calls() {
					if c == call {
						n++
					}
				}
				if n > after {
					t.Errorf("%s failing from call %d: no error", call, after)
				}
			} else if !errors.As(err, &ce) || ce.Call != call || !strings.Contains(err.Error(), "CUDA_ERROR_OUT_OF_MEMORY") {
				t.Errorf("%s failing: error %v does not name it", call, err)
			}
			if live := f.Live(); len(live) > 0 {
				t.Errorf("%s failing from call %d: not freed: %v", call, after, live)
			}
		}
	}
}

func TestRunRefuses(t *testing.T) {
	cases := []struct {
		name, src, want string
		cfg             func(*FakeConfig)
	}{
		{"too few GPUs", oneThread, "this machine has 1 GPU", func(c *FakeConfig) { c.Devices = 1 }},
		{"collective", `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - allreduce: {id: ar, gpus: [gpu0, gpu1], bytes: 1 MB, stream: comm}
`, "collective", nil},
	}
	for _, c := range cases {
		cfg := testConfig()
		if c.cfg != nil {
			c.cfg(&cfg)
		}
		f := NewFake(cfg)
		sc := load(t, c.src)
		_, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: error %v, want one saying %q", c.name, err, c.want)
		}
		if live := f.Live(); len(live) > 0 {
			t.Errorf("%s: not freed: %v", c.name, live)
		}
	}
}

func TestRunNoPeerAccessWarns(t *testing.T) {
	cfg := testConfig()
	cfg.NoPeer = true
	f := NewFake(cfg)
	sc := load(t, oneThread)
	res, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if r := rec(t, res, "peer"); r.Copy != sim.CopyStaged {
		t.Errorf("peer copy without peer access: kind %v, want host-staged", r.Copy)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "no peer access") {
		t.Errorf("warnings %q, want one about peer access", res.Warnings)
	}
}

func TestRunSemaphoresAcrossThreads(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
semaphores: {ready: 0}
threads:
  - name: a
    host: cpu0
    ops:
      - host: {id: work, duration: 50 us}
      - signal: {semaphore: ready}
  - name: b
    host: cpu0
    ops:
      - await: {id: got, semaphore: ready}
      - kernel: {id: k, stream: gpu0/compute, duration: 20 us}
      - sync: {stream: gpu0/compute}
`)
	f := NewFake(testConfig())
	res, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The fake's clock is shared by both threads, so only order is certain:
	// the await ends after the host work.
	if got, work := rec(t, res, "got"), rec(t, res, "work"); got.End < work.End {
		t.Errorf("await returned at %v before the signaller's work ended at %v", got.End, work.End)
	}
}

func TestRunCancelled(t *testing.T) {
	sc := load(t, oneThread)
	f := NewFake(testConfig())
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, _, err := Run(ctx, f, sc.Topology.Machine, sc.Program, Options{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if live := f.Live(); len(live) > 0 {
		t.Errorf("not freed: %v", live)
	}
}

func TestCompare(t *testing.T) {
	const us = sim.Microsecond
	mk := func(durs ...sim.Time) *sim.Result {
		res := &sim.Result{}
		at := sim.Time(0)
		for i, d := range durs {
			kind := sim.OpKernel
			if i == len(durs)-1 {
				kind = sim.OpSync
			}
			res.Ops = append(res.Ops, sim.OpRecord{ID: string(rune('a' + i)), Kind: kind, Start: at, End: at + d})
			at += d
		}
		res.Makespan = at
		return res
	}
	// Durations 100, 200, 400 us measured; predicted 110 (+10%), 190 (-5%),
	// 400 (0); the sync (excluded from the median) 50 vs 100.
	pred, meas := mk(110*us, 190*us, 400*us, 50*us), mk(100*us, 200*us, 400*us, 100*us)
	c, err := Compare(pred, meas)
	if err != nil {
		t.Fatal(err)
	}
	if c.Timed != 3 || math.Abs(c.MedianAbsRel-0.05) > 1e-12 {
		t.Errorf("median |error| %v over %d ops, want 0.05 over 3", c.MedianAbsRel, c.Timed)
	}
	// Makespans 750 vs 800 us: -6.25%.
	if math.Abs(c.MakespanRel-(-0.0625)) > 1e-12 {
		t.Errorf("makespan error %v, want -0.0625", c.MakespanRel)
	}
	if w := c.Worst(2); len(w) != 2 || w[0].ID != "a" || w[1].ID != "b" {
		t.Errorf("worst ops %v, want a then b", w)
	}
	if c.Modelled != 0 || c.Ops[0].Modelled {
		t.Errorf("%d modelled ops, want none: spin kernels run the predicted time", c.Modelled)
	}
	// b run as a memory kernel, c a copy: the ops whose durations the
	// model predicts, -5% and 0
	// (the measured record of a memory kernel carries the bytes it moved).
	for _, r := range []*sim.Result{pred, meas} {
		r.Ops[2].Kind, r.Ops[2].Bytes = sim.OpCopy, 1<<30
	}
	meas.Ops[1].Bytes = 1 << 30
	if c, err = Compare(pred, meas); err != nil {
		t.Fatal(err)
	}
	if c.Modelled != 2 || math.Abs(c.MedianModelled-0.025) > 1e-12 || c.Ops[0].Modelled || !c.Ops[1].Modelled || !c.Ops[2].Modelled {
		t.Errorf("median |error| %v over %d modelled ops, want 0.025 over b and c", c.MedianModelled, c.Modelled)
	}
	if c.Timed != 3 || math.Abs(c.MedianAbsRel-0.05) > 1e-12 {
		t.Errorf("median |error| %v over %d ops, want 0.05 over 3 still", c.MedianAbsRel, c.Timed)
	}
	if _, err := Compare(pred, mk(1*us)); err == nil {
		t.Error("comparing different programs: no error")
	}
}

// TestRunIdleStreamKernels: kernels issued to an idle stream have no event
// before them; their start comes from the time the spin kernel stored,
// placed on the host clock. Each lasts its duration exactly on the fake.
func TestRunIdleStreamKernels(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - repeat:
          count: 3
          ops:
            - kernel: {id: k, stream: gpu0/compute, duration: 10 us}
            - host: {duration: 30 us}
      - sync: {stream: gpu0/compute}
`)
	for _, slow := range []time.Duration{0, 25 * time.Microsecond} {
		cfg := testConfig()
		// Event records held up for 25 us: the end event of a 10 us
		// kernel on an idle stream runs long after the kernel ended.
		cfg.Slow = map[string]time.Duration{"cuEventRecord": slow}
		idleKernels(t, sc, NewFake(cfg))
	}
}

func idleKernels(t *testing.T, sc *scenarios.Scenario, f *Fake) {
	t.Helper()
	res, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		r := rec(t, res, fmt.Sprintf("k#%d", i))
		// The launch call returns c = 1 us after the op's call began; the
		// kernel reached the GPU L after that, which the alignment places
		// at that return.
		if d := r.End - r.Start; d < 10*sim.Microsecond-sim.Nanosecond || d > 10*sim.Microsecond+sim.Nanosecond {
			t.Errorf("%s lasted %v, want 10us", r.ID, d)
		}
		if want := r.Call + sim.Microsecond; r.Start < want-sim.Nanosecond || r.Start > want+sim.Nanosecond {
			t.Errorf("%s started at %v, want %v (when its launch call returned)", r.ID, r.Start, want)
		}
	}
}

// TestRunSharedStream: threads issuing to one stream; each op's position in
// the stream and its timing event are taken together, so every kernel lasts
// its duration and the stream's order is the order the kernels ran in.
func TestRunSharedStream(t *testing.T) {
	var b strings.Builder
	b.WriteString("name: t\ntopology: two.yaml\nthreads:\n")
	for th := 0; th < 3; th++ {
		fmt.Fprintf(&b, "  - name: t%d\n    host: cpu0\n    ops:\n      - repeat: {count: 40, ops: [{kernel: {id: k%d, stream: gpu0/shared, duration: 10 us}}]}\n", th, th)
	}
	b.WriteString("      - sync: {stream: gpu0/shared}\n")
	sc := load(t, b.String())
	res, _, err := Run(context.Background(), NewFake(testConfig()), sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ks []sim.OpRecord
	for _, r := range res.Ops {
		if r.Kind == sim.OpKernel {
			ks = append(ks, r)
			if d := r.End - r.Start; d < 10*sim.Microsecond-sim.Nanosecond || d > 10*sim.Microsecond+sim.Nanosecond {
				t.Errorf("%s lasted %v, want 10us", r.ID, d)
			}
		}
	}
	sort.Slice(ks, func(i, j int) bool { return ks[i].StreamSeq < ks[j].StreamSeq })
	for i := 1; i < len(ks); i++ {
		if int(ks[i].StreamSeq) != i || ks[i].Start < ks[i-1].End {
			t.Fatalf("stream position %d (%s) starts at %v, before position %d (%s) ends at %v", ks[i].StreamSeq, ks[i].ID, ks[i].Start, i-1, ks[i-1].ID, ks[i-1].End)
		}
	}
}

// TestRunZeroByteCopies: a copy of nothing issues no driver copy and lasts
// no time; it does not need a buffer.
func TestRunZeroByteCopies(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - copy: {id: a, from: cpu0, to: gpu0, bytes: 0, memory: pageable, stream: gpu0/s}
      - copy: {id: b, from: gpu0, to: gpu0, bytes: 0, stream: gpu0/s}
      - sync: {stream: gpu0/s}
`)
	f := NewFake(testConfig())
	res, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"a", "b"} {
		if r := rec(t, res, id); r.End-r.Start > 3*sim.Microsecond { // at most its event's call and latency
			t.Errorf("%s lasted %v", id, r.End-r.Start)
		}
	}
	for _, c := range f.Calls() {
		if strings.HasPrefix(c, "cuMemcpy") && !strings.Contains(c, "HtoD_v2") && !strings.Contains(c, "DtoH_v2") {
			t.Errorf("a zero-byte program made %s", c)
		}
	}
}

// TestRunLongRunKeepsEventTimes: ops ending 40 s after the reference event,
// where a float32 millisecond is 3.9 us (unrefined, these ops were timed up
// to 1.8 us off). Where the GPU was busy all along, the event times, chained
// by the elapsed times between neighbours, keep queued ops to the
// nanosecond, and one whose start is its call's return on the host clock
// within 20 ns. After 40 s of nothing, the ops after the gap are timed
// exactly relative to each other, and placed within their few events'
// float32 steps.
func TestRunLongRunKeepsEventTimes(t *testing.T) {
	const us = sim.Microsecond
	type want struct {
		id        string
		d, within sim.Time
	}
	for _, tc := range []struct {
		name, ops string
		want      []want
	}{
		{"busy all along", `
      - repeat:
          count: 4001
          ops:
            - copy: {id: big, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/copy}
      - sync: {stream: gpu0/copy}
      - copy: {id: last, from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/compute}
      - sync: {stream: gpu0/compute}
`, []want{
			{"big#4000", 5*us + 10*sim.Millisecond, sim.Nanosecond}, // queued: from the one before's end
			{"last", 5*us + 100*us, 20 * sim.Nanosecond},            // idle stream: from its call's return to a placed event
		}},
		{"after 40 s of nothing", `
      - host: {id: pause, duration: 40 s}
      - copy: {id: up, from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/copy}
      - copy: {id: up2, from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/copy}
      - record: {event: e, stream: gpu0/copy}
      - wait: {event: e, stream: gpu0/compute}
      - copy: {id: down, from: gpu0, to: cpu0, bytes: 2 MB, stream: gpu0/compute}
      - copy: {id: down2, from: gpu0, to: cpu0, bytes: 2.5 MB, stream: gpu0/compute}
      - sync: {stream: gpu0/compute}
`, []want{
			{"up", 5*us + 100*us, 2 * us}, // from its call's return to an event placed within its step
			{"up2", 5*us + 100*us, sim.Nanosecond},
			{"down", 4*us + 100*us, sim.Nanosecond},
			{"down2", 4*us + 125*us, sim.Nanosecond},
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sc := load(t, "name: t\ntopology: two.yaml\nthreads:\n  - name: main\n    host: cpu0\n    ops:"+tc.ops)
			f := NewFake(testConfig())
			res, info, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if len(info.Warnings) > 0 {
				t.Errorf("warnings: %v", info.Warnings)
			}
			for _, c := range tc.want {
				r := rec(t, res, c.id)
				if r.End < 40*sim.Second {
					t.Fatalf("%s ended at %v: the run is not long", c.id, r.End)
				}
				if got := r.End - r.Start; got < c.d-c.within || got > c.d+c.within {
					t.Errorf("%s lasted %v, want %v within %v", c.id, got, c.d, c.within)
				}
			}
		})
	}
}

// TestRunChecksFreeMemory: each GPU's free memory is checked before its copy
// buffers are allocated. oneThread's largest copy on each GPU is the 10 MB
// peer copy: two buffers of 10,000,000 bytes (9.5 MiB) and a margin of 256
// MiB make 288,435,456 bytes, 275.1 MiB. gpu1 with 275 MiB free is refused
// after gpu0's buffers were made, and they are freed; exactly the need runs.
func TestRunChecksFreeMemory(t *testing.T) {
	const need = 2*10_000_000 + 256<<20
	for _, tc := range []struct {
		name string
		free []uint64
		want string // "" runs
	}{
		{"gpu0 short", []uint64{200 << 20}, "t needs 275.1 MiB of device memory on gpu0 (two buffers of 9.5 MiB for its copies, and 256.0 MiB left for the driver and the kernels) but gpu0 has 200.0 MiB free"},
		{"gpu1 short", []uint64{80e9, 275 << 20}, "t needs 275.1 MiB of device memory on gpu1 (two buffers of 9.5 MiB for its copies, and 256.0 MiB left for the driver and the kernels) but gpu1 has 275.0 MiB free"},
		{"exactly enough", []uint64{need, need}, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := testConfig()
			cfg.FreeMemory = tc.free
			f := NewFake(cfg)
			runOneThread(t, f, Options{}, tc.want)
			if tc.want == "" {
				return
			}
			allocs := 0
			for _, c := range f.Calls() {
				if c == "cuMemAlloc_v2" {
					allocs++
				}
			}
			// gpu0's buffers (2) where gpu1 is short; none where gpu0 is.
			if want := 2 * (len(tc.free) - 1); allocs != want {
				t.Errorf("%d device allocations before the refusal, want %d", allocs, want)
			}
		})
	}
}

// runOneThread runs oneThread on f, checks that it fails with want (or
// runs, for "") and that everything was freed, and returns its error.
func runOneThread(t *testing.T, f *Fake, opt Options, want string) error {
	t.Helper()
	sc := load(t, oneThread)
	_, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, opt)
	switch {
	case want == "" && err != nil:
		t.Errorf("error %v, want none", err)
	case want != "" && (err == nil || err.Error() != want):
		t.Errorf("error %v,\nwant %s", err, want)
	}
	if live := f.Live(); len(live) > 0 {
		t.Errorf("not freed: %v", live)
	}
	return err
}

// allSyncs waits in each of the ways a program can: for a stream, for an
// event, for a whole GPU.
const allSyncs = `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {id: k, stream: gpu0/compute, duration: 10 us}
      - record: {event: e, stream: gpu0/compute}
      - wait: {event: e, stream: gpu0/copy}
      - copy: {id: down, from: gpu0, to: cpu0, bytes: 1 MB, stream: gpu0/copy}
      - sync: {id: s1, event: e}
      - sync: {id: s2, stream: gpu0/copy}
      - kernel: {id: k2, stream: gpu0/compute, duration: 10 us}
      - sync: {id: s3, device: gpu0}
`

// TestRunKernelFailureAtALaterCall: a kernel that fails on the GPU
// (CUDA_ERROR_LAUNCH_FAILED, 719) is reported by the driver at a later call:
// a synchronize, or the next record, wait or launch. Wherever it surfaces,
// in the setup's measurements, in the program's ops or in the last
// synchronize before the events are read, the run stops with an error naming
// that call, where it was made (the op, or the GPU and the step of the
// setup) and saying a kernel failed, and frees everything.
func TestRunKernelFailureAtALaterCall(t *testing.T) {
	sc := load(t, allSyncs)
	clean := NewFake(testConfig())
	if _, _, err := Run(context.Background(), clean, sc.Topology.Machine, sc.Program, Options{}); err != nil {
		t.Fatal(err)
	}
	made := clean.CallCounts()
	for _, call := range []string{"cuStreamSynchronize", "cuEventSynchronize", "cuCtxSynchronize", "cuEventRecord", "cuStreamWaitEvent"} {
		n := made[call]
		if n == 0 {
			t.Errorf("a clean run made no %s", call)
			continue
		}
		// Every call of the kind (every few records: there are many).
		step := max(1, n/25)
		for after := 0; after < n; after += step {
			cfg := testConfig()
			cfg.Fail = map[string]int{call: 719}
			cfg.FailAfter = map[string]int{call: after}
			f := NewFake(cfg)
			_, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
			var ce *CUDAError
			switch {
			case call == "cuCtxSynchronize" && after == n-1:
				// The cleanup's, after the run: its error is reported
				// only where the run had none.
				if err == nil || !strings.HasPrefix(err.Error(), "freeing what the run allocated: cuCtxSynchronize: CUDA_ERROR_LAUNCH_FAILED (719): a kernel failed on the GPU") {
					t.Errorf("%s failing from call %d (the cleanup's): error %v", call, after, err)
				}
			case !errors.As(err, &ce) || ce.Call != call || ce.Code != 719:
				t.Errorf("%s failing from call %d: error %v, want that call's 719", call, after, err)
			case !strings.Contains(err.Error(), call+": CUDA_ERROR_LAUNCH_FAILED (719): a kernel failed on the GPU (CUDA reports it at a call after the failed kernel's launch"):
				t.Errorf("%s failing from call %d: error %q does not say a kernel failed", call, after, err)
			case !regexp.MustCompile(`^(test\.yaml:\d+:\d+: op [a-z0-9/]+|gpu0, before the run, [A-Za-z' ]+|gpu0, after the run, [A-Za-z' ]+|thread main, before its first op|gpu0, waiting for the program's work to end): ` + call).MatchString(err.Error()):
				t.Errorf("%s failing from call %d: error %q does not say where", call, after, err)
			}
			if live := f.Live(); len(live) > 0 {
				t.Errorf("%s failing from call %d: not freed: %v", call, after, live)
			}
		}
	}
}

// Graphs run op by op on hardware, said once for the program: three launches
// of a graph give one warning that counts them and names the first.
func TestRunGraphsWarnOnce(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - repeat: {count: 3, graph: true, ops: [{kernel: {id: k, stream: gpu0/s, duration: 10 us}}]}
`)
	res, _, err := Run(context.Background(), NewFake(testConfig()), sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := "CUDA graphs are issued op by op on hardware (the backend does not capture graphs): 3 graph launches, the first k#0 and the ops after it"
	if len(res.Warnings) != 1 || res.Warnings[0] != want {
		t.Errorf("warnings %q, want [%q]", res.Warnings, want)
	}
}

// TestRunMeasuresClockDrift: the event clock is placed on the host clock
// before the run and measured again after it. An event clock running 100
// ppm fast reads the interval between the two measurements, the run's
// 100 ms kernel and a few ms of setup, 100 ppm long: the offset has moved
// by -1e-4 of that interval, -10 us and a little more. Without drift it
// has not moved.
func TestRunMeasuresClockDrift(t *testing.T) {
	sc := load(t, `
name: d
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {stream: gpu0/compute, duration: 100 ms}
      - sync: {stream: gpu0/compute}
`)
	for _, rate := range []float64{0, 1e-4} {
		cfg := testConfig()
		cfg.EventRate = rate
		res, info, err := Run(context.Background(), NewFake(cfg), sc.Topology.Machine, sc.Program, Options{})
		if err != nil {
			t.Fatal(err)
		}
		// The interval is at least the makespan and at most 5 ms more (the
		// GPU timer's placement after the alignment runs busy kernels).
		span := res.Makespan.Seconds() * 1e9 // ns
		lo, hi := -rate*(span+5e6)-10, -rate*span+10
		if got := float64(info.Drift[0]); got < lo || got > hi {
			t.Errorf("event clock %g fast: drift %v, want %.0f to %.0f ns", rate, info.Drift[0], lo, hi)
		}
	}
}

// hostPtrs is the fake driver, noting the host memory each copy reads or
// writes.
type hostPtrs struct {
	*Fake
	mu       sync.Mutex
	h2d, d2h map[HostPtr]bool
}

func (d *hostPtrs) MemcpyHtoDAsync(dst DevicePtr, src HostPtr, n uint64, s Stream) error {
	d.mu.Lock()
	d.h2d[src] = true
	d.mu.Unlock()
	return d.Fake.MemcpyHtoDAsync(dst, src, n, s)
}

func (d *hostPtrs) MemcpyDtoHAsync(dst HostPtr, src DevicePtr, n uint64, s Stream) error {
	d.mu.Lock()
	d.d2h[dst] = true
	d.mu.Unlock()
	return d.Fake.MemcpyDtoHAsync(dst, src, n, s)
}

// Copies up and down at once, pinned and pageable, read and write separate
// host buffers, as calibrate's duplex measurement does: every H2D source
// differs from every D2H destination (one pinned buffer served both), and
// the two pinned buffers are allocated and freed.
func TestCopiesBothWaysUseTwoHostBuffers(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - copy: {id: up, from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/a}
      - copy: {id: down, from: gpu0, to: cpu0, bytes: 2 MB, stream: gpu0/b}
      - copy: {id: upp, from: cpu0, to: gpu0, bytes: 1 MB, memory: pageable, stream: gpu0/a}
      - copy: {id: downp, from: gpu0, to: cpu0, bytes: 1 MB, memory: pageable, stream: gpu0/b}
      - sync: {device: gpu0}
`)
	d := &hostPtrs{Fake: NewFake(testConfig()), h2d: map[HostPtr]bool{}, d2h: map[HostPtr]bool{}}
	if _, _, err := Run(context.Background(), d, sc.Topology.Machine, sc.Program, Options{}); err != nil {
		t.Fatal(err)
	}
	if len(d.h2d) != 2 || len(d.d2h) != 2 {
		t.Errorf("H2D copies read %d buffers and D2H copies wrote %d; want 2 each (pinned and pageable)", len(d.h2d), len(d.d2h))
	}
	for p := range d.h2d {
		if d.d2h[p] {
			t.Errorf("host buffer %#x is both read by H2D copies and written by D2H copies", p)
		}
	}
	if n := d.CallCounts()["cuMemHostAlloc"]; n != 2 {
		t.Errorf("%d pinned allocations, want 2 (one a direction)", n)
	}
	if live := d.Live(); len(live) != 0 {
		t.Errorf("still allocated after the run: %v", live)
	}
}

// A thread working on both GPUs' streams makes each GPU's context current
// before its ops: the fake, like CUDA, refuses a kernel launched on a
// stream of a context other than the OS thread's current one, and an event
// recorded on another context's stream.
func TestRunOneThreadTwoGPUs(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {id: k0, stream: gpu0/compute, duration: 30 us}
      - kernel: {id: k1, stream: gpu1/compute, duration: 50 us}
      - record: {event: e1, stream: gpu1/compute}
      - wait: {event: e1, stream: gpu0/compute}
      - kernel: {id: k0b, stream: gpu0/compute, duration: 10 us}
      - sync: {device: gpu1}
      - sync: {stream: gpu0/compute}
`)
	f := NewFake(testConfig())
	res, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if live := f.Live(); len(live) > 0 {
		t.Errorf("not freed: %v", live)
	}
	// k0b waits for k1 (on the other GPU) through the event.
	if k1, k0b := rec(t, res, "k1"), rec(t, res, "k0b"); k0b.Start < k1.End {
		t.Errorf("k0b started at %v, before k1 (which it waits for) ended at %v", k0b.Start, k1.End)
	}
	if r := rec(t, res, "k1"); r.GPU != 1 {
		t.Errorf("k1 ran on GPU %d, want 1", r.GPU)
	}
}

// A kernel given as memory traffic alone runs as the memory kernel, moving
// its bytes (half read, half written) over the whole GPU; one of a smaller
// SM share, or given FLOPs or a duration, spins for the predicted time.
func TestRunMemoryKernels(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {id: mem, stream: gpu0/compute, bytes: 1 GB}
      - kernel: {id: half, stream: gpu0/compute, bytes: 1 GB, sm_share: 0.5}
      - kernel: {id: odd, stream: gpu0/compute, bytes: 33 B}
      - sync: {stream: gpu0/compute}
`)
	cfg := testConfig()
	cfg.MemoryBandwidth = 500e9 // read and written: 1 GB moved in 2 ms
	f := &launches{Fake: NewFake(cfg)}
	res, info, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if live := f.Live(); len(live) > 0 {
		t.Errorf("not freed: %v", live)
	}
	if len(info.Warnings) > 0 {
		t.Errorf("warnings %q, want none", info.Warnings)
	}
	const us = sim.Microsecond
	predicted := func(id string) sim.Time {
		for _, op := range sc.Program.Threads[0].Ops {
			if op.ID == id {
				return op.Duration
			}
		}
		t.Fatalf("no op %s", id)
		return 0
	}
	// The fake's memory kernel: the kernel overhead (3 us) and 16 x n16
	// bytes each way at 500 GB/s: 1 GB is 31,250,000 elements (2 ms); 33 B
	// are 2 elements (64 B moved, 0.128 ns). The half-share kernel spins
	// for what H100's roofline gives it: 1 GB at half of 3.35 TB/s x 0.87,
	// plus the kernel overhead, much more than 2 ms less.
	for _, c := range []struct {
		id    string
		want  sim.Time
		bytes int64 // moved, in the measured record
	}{{"mem", 3*us + 2000*us, 1e9}, {"odd", 3 * us, 33}, {"half", predicted("half"), 0}} {
		r := rec(t, res, c.id)
		if got := r.End - r.Start; got < c.want-sim.Nanosecond || got > c.want+sim.Nanosecond {
			t.Errorf("%s lasted %v, want %v", c.id, got, c.want)
		}
		if r.Bytes != c.bytes {
			t.Errorf("%s: record of %d bytes moved, want %d", c.id, r.Bytes, c.bytes)
		}
	}
	if p := predicted("mem"); p > 1000*us {
		t.Errorf("mem predicted %v: the test wants the fake's memory far slower than the topology's", p)
	}
	// The program's two memory kernels take successive parts of the
	// buffers (of 500 MB each, half of 1 GB): mem from their start, and odd
	// from the next 256-byte boundary after mem's 500 MB, which is past
	// their end: from their start again (where mem began, long out of L2);
	// the warm-up before them runs over the whole buffers.
	const oddAt = 0
	if got := f.offsets(); len(got) != 3 || got[0] != [2]uint64{0, 500e6} || got[1] != [2]uint64{0, 500e6} || got[2] != [2]uint64{oddAt, 32} {
		t.Errorf("memory kernels at (offset, bytes each way) %v; want the warm-up and mem at 0 (500 MB), odd at %d (32 B)", got, oddAt)
	}

	// Without room for the buffers the memory kernels need, they spin, with
	// a warning, as before memory kernels: the 900 MB free here hold no two
	// buffers of 500 MB and the margin.
	cfg.FreeMemory = []uint64{900e6}
	res, info, err = Run(context.Background(), NewFake(cfg), sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "would not fit") {
		t.Errorf("warnings %q, want one that the memory kernels' buffers would not fit", info.Warnings)
	}
	if r := rec(t, res, "mem"); r.End-r.Start < predicted("mem")-sim.Nanosecond || r.End-r.Start > predicted("mem")+sim.Nanosecond || r.Bytes != 0 {
		t.Errorf("mem with no room: lasted %v (%d bytes moved), want the predicted %v, spun", r.End-r.Start, r.Bytes, predicted("mem"))
	}
}

// Memory kernels on a GPU whose kernels use two streams spin (with a
// warning): kernels there may overlap, and the memory kernel would not
// share the SMs as the model's SM shares say.
func TestRunMemoryKernelsSpinBesideOtherStreams(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - kernel: {id: mem, stream: gpu0/a, bytes: 1 GB}
      - kernel: {id: spin, stream: gpu0/b, duration: 1 ms}
      - kernel: {id: mem1, stream: gpu1/a, bytes: 1 GB}
      - sync: {device: gpu0}
      - sync: {device: gpu1}
`)
	cfg := testConfig()
	cfg.MemoryBandwidth = 500e9
	f := &launches{Fake: NewFake(cfg)}
	res, info, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(info.Warnings) != 1 || !strings.Contains(info.Warnings[0], "(mem and any others) spin on gpu0") {
		t.Errorf("warnings %q, want one that gpu0's memory kernels spin", info.Warnings)
	}
	if r := rec(t, res, "mem"); r.Bytes != 0 {
		t.Errorf("mem moved %d bytes, want it spun", r.Bytes)
	}
	// gpu1's kernels are on one stream: there it runs, over a region of
	// at least 256 MiB (the warm-up's).
	if r := rec(t, res, "mem1"); r.Bytes != 1e9 {
		t.Errorf("mem1 moved %d bytes, want 1 GB", r.Bytes)
	}
	if got := f.offsets(); len(got) != 2 {
		t.Errorf("memory kernels launched %v, want gpu1's warm-up and mem1", got)
	}
}

// A small memory kernel repeated walks through a region of 256 MiB, so that
// none finds its bytes in L2 from the one before.
func TestRunMemoryKernelsWalkTheBuffers(t *testing.T) {
	sc := load(t, `
name: t
topology: two.yaml
threads:
  - name: main
    host: cpu0
    ops:
      - repeat: {count: 5, ops: [{kernel: {id: m, stream: gpu0/s, bytes: 200 MiB}}]}
      - sync: {stream: gpu0/s}
`)
	cfg := testConfig()
	cfg.BlocksPerSM = 6 // as an Ada SM holds 256-thread blocks
	f := &launches{Fake: NewFake(cfg)}
	if _, _, err := Run(context.Background(), f, sc.Topology.Machine, sc.Program, Options{}); err != nil {
		t.Fatal(err)
	}
	// Each on as many blocks as the GPU holds at once: 6 on each of 100 SMs.
	for _, g := range f.grid {
		if g != 600 {
			t.Errorf("memory kernels on grids %v, want 600 blocks each", f.grid)
			break
		}
	}
	// Buffers of 256 MiB; 100 MiB each way a kernel: 0, 100 MiB, then 200
	// MiB would pass the end, so 0 again.
	const mib = 1 << 20
	want := [][2]uint64{{0, 256 * mib}, {0, 100 * mib}, {100 * mib, 100 * mib}, {0, 100 * mib}, {100 * mib, 100 * mib}, {0, 100 * mib}}
	if got := f.offsets(); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("memory kernels at %v, want %v", got, want)
	}
}

// launches is the fake driver, noting where each memory kernel writes
// and the bytes it moves each way.
type launches struct {
	*Fake
	mu   sync.Mutex
	mem  [][2]uint64 // destination, bytes each way
	grid []uint32
}

func (d *launches) Launch(fn Function, grid, block, shared uint32, s Stream, args ...Arg) error {
	d.Fake.mu.Lock()
	name := d.Fake.funcs[fn].name
	d.Fake.mu.Unlock()
	if name == kernels.Copy {
		d.mu.Lock()
		d.mem = append(d.mem, [2]uint64{args[0].Value, args[2].Value * kernels.CopyBytesPerElem})
		d.grid = append(d.grid, grid)
		d.mu.Unlock()
	}
	return d.Fake.Launch(fn, grid, block, shared, s, args...)
}

// offsets are the memory kernels' (offset, bytes each way), in the order
// launched, the offset from the first one's destination: the warm-up's,
// at the start of the write buffer (tests with memory kernels on one GPU).
func (d *launches) offsets() [][2]uint64 {
	d.mu.Lock()
	defer d.mu.Unlock()
	out := append([][2]uint64(nil), d.mem...)
	for i := range out {
		out[i][0] -= d.mem[0][0]
	}
	return out
}

// TestRunChecksFreeHostMemory: oneThread's host buffers are its largest
// pinned copy each way, 1 MB up and 2 MB down (3,000,000 bytes, 2.9 MiB);
// with the 1 GiB margin it needs 1,076,741,824 bytes of host memory. A
// byte less is refused before anything is pinned; exactly that, or a free
// memory not known, runs.
func TestRunChecksFreeHostMemory(t *testing.T) {
	const need = 3_000_000 + 1<<30
	for _, tc := range []struct {
		name  string
		free  uint64
		known bool
		want  string
	}{
		// A byte short: the sizes in bytes, which round alike.
		{"short", need - 1, true, "not enough host memory: t needs 1076741824 bytes, 2.9 MiB for the buffers of its copies (the largest copy of each kind and direction; 2.9 MiB of it pinned) and 1.0 GiB left for the rest, but 1076741823 bytes is free here: run where more memory is free, or make its host copies smaller"},
		{"far short", 512 << 20, true, "not enough host memory: t needs 1.0 GiB, 2.9 MiB for the buffers of its copies (the largest copy of each kind and direction; 2.9 MiB of it pinned) and 1.0 GiB left for the rest, but 512.0 MiB is free here: run where more memory is free, or make its host copies smaller"},
		{"exactly enough", need, true, ""},
		{"not known", 0, false, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := NewFake(testConfig())
			err := runOneThread(t, f, Options{HostFree: func() (uint64, bool) { return tc.free, tc.known }}, tc.want)
			if tc.want != "" && slices.Contains(f.Calls(), "cuMemHostAlloc") {
				t.Error("host memory pinned before the refusal")
			}
			if tc.want != "" && !errors.Is(err, ErrHostMemory) {
				t.Errorf("%v is not ErrHostMemory", err)
			}
		})
	}
}
