package sim_test

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"gpusim/sim"
)

const nvPair = `
name: nvpair
hosts: [{name: cpu0, api_overhead: 0 us}]
gpus: [{name: gpu0, model: H100-SXM}, {name: gpu1, model: H100-SXM}]
links:
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
  - {ends: [gpu0, gpu1], bandwidth: 100 GB/s}
`

// nvSwitch4 is four GPUs on one NVSwitch at 100 GB/s per direction.
const nvSwitch4 = `
name: nvswitch4
hosts: [{name: cpu0, api_overhead: 0 us}]
gpus: [{name: gpu0, model: H100-SXM}, {name: gpu1, model: H100-SXM}, {name: gpu2, model: H100-SXM}, {name: gpu3, model: H100-SXM}]
switches: [{name: nvs, kind: nvswitch}, {name: pcie}]
links:
  - {ends: [pcie, cpu0], type: pcie5x16}
  - {ends: [gpu0, pcie], type: pcie5x16}
  - {ends: [gpu1, pcie], type: pcie5x16}
  - {ends: [gpu2, pcie], type: pcie5x16}
  - {ends: [gpu3, pcie], type: pcie5x16}
  - {ends: [gpu0, nvs], bandwidth: 100 GB/s}
  - {ends: [gpu1, nvs], bandwidth: 100 GB/s}
  - {ends: [gpu2, nvs], bandwidth: 100 GB/s}
  - {ends: [gpu3, nvs], bandwidth: 100 GB/s}
`

func allreduce(gpus, bytes, extra string) string {
	return `
name: ar
threads:
  - name: main
    ops:
      - allreduce: {id: ar, gpus: ` + gpus + `, bytes: ` + bytes + `, stream: comm` + extra + `}
`
}

func TestRingAllReduceOnTwoGPUs(t *testing.T) {
	res := simulate(t, nvPair, allreduce("[gpu0, gpu1]", "1 GB", ", algorithm: ring, protocol: simple"))
	// Two steps (reduce-scatter, all-gather), each rank sending half the data
	// to the other over its direction of the 100 GB/s link: 5 ms a step, plus
	// NCCL's Simple ring latencies, 8.4 us at the start and 3.4 us a step.
	want := us(8.4 + 2*(3.4+5000))
	for _, id := range []string{"ar@gpu0", "ar@gpu1"} {
		near(t, id+" end", op(t, res, id).End, want, 4)
	}
	r := op(t, res, "ar@gpu0")
	if r.Kind != sim.OpCollective || res.GPUs[0].Comm != want {
		t.Errorf("kind %v, gpu0 communication %s; want a collective and %s", r.Kind, res.GPUs[0].Comm, want)
	}
}

func TestRingAllReduceOnFourGPUs(t *testing.T) {
	res := simulate(t, nvSwitch4, allreduce("all", "1 GB", ", algorithm: ring, protocol: simple"))
	// Six steps of a quarter of the data at 100 GB/s per GPU link direction.
	near(t, "end", res.Makespan, us(8.4+6*(3.4+2500)), 4)
}

func TestLargeAllReduceApproachesTheBottleneckTimesProtocolEfficiency(t *testing.T) {
	for _, tc := range []struct {
		proto string
		eff   float64
	}{{"simple", 1}, {"ll128", 0.92}} {
		res := simulate(t, nvSwitch4, allreduce("all", "16 GB", ", algorithm: ring, protocol: "+tc.proto))
		algbw := 16e9 / res.Makespan.Seconds()
		busbw := algbw * 2 * 3 / 4
		if want := 100e9 * tc.eff; busbw < 0.995*want || busbw > want {
			t.Errorf("%s: busbw %.4g GB/s, want just under %.4g", tc.proto, busbw/1e9, want/1e9)
		}
	}
}

func TestSmallAllReduceIsLatencyBound(t *testing.T) {
	res := simulate(t, nvSwitch4, allreduce("all", "8 B", ""))
	// The tuner picks LL: 6.6 us base and 0.6 us for each of 6 steps; each
	// step moves a quarter of the 8 bytes, doubled on the wire by LL: 4 bytes
	// at 100 GB/s, 40 ps.
	r := op(t, res, "ar@gpu0")
	if r.ID == "" || res.Ops[0].Kind != sim.OpCollective {
		t.Fatal("no collective")
	}
	near(t, "makespan", res.Makespan, us(6.6+6*0.6)+6*40, 2)
}

func TestAllReduceAndComputeSlowEachOther(t *testing.T) {
	alone := simulate(t, nvSwitch4, allreduce("all", "1 GB", ", algorithm: ring, protocol: simple")).Makespan
	k := simulate(t, nvSwitch4, "name: k\nthreads: [{name: m, ops: [{kernel: {id: k, stream: gpu0/s, duration: 10 ms}}]}]\n")
	both := simulate(t, nvSwitch4, `
name: both
threads:
  - name: comm
    ops: [{allreduce: {id: ar, gpus: all, bytes: 1 GB, stream: comm, algorithm: ring, protocol: simple}}]
  - name: compute
    ops: [{kernel: {id: k, stream: gpu0/s, duration: 10 ms}}]
`)
	kEnd, arEnd := op(t, both, "k").End, op(t, both, "ar@gpu0").End
	if kEnd <= op(t, k, "k").End || arEnd <= alone {
		t.Errorf("together: kernel %s (alone %s), all-reduce %s (alone %s): both should be slower", kEnd, op(t, k, "k").End, arEnd, alone)
	}
	// The all-reduce claims 24 channels of 132 SMs; with the kernel's whole
	// GPU that is 1.18 GPUs: the kernel runs at 1/1.18 while they overlap
	// (the whole 10 ms of its work is done by 11.8 ms if the overlap lasts).
	share := 24.0 / 132
	if want := us(10_000 * (1 + share)); kEnd != want && (kEnd < want-us(1) || kEnd > want+us(1)) {
		t.Errorf("kernel ended at %s, want %s", kEnd, want)
	}
}

func TestAllReduceOverHostStagedPathsIsSlowerThanP2P(t *testing.T) {
	topo := `
name: pcie
hosts: [{name: cpu0, api_overhead: 0 us}]
gpus: [{name: gpu0, model: L40S}, {name: gpu1, model: L40S}]
switches: [{name: sw0, p2p: P2P}]
links:
  - {ends: [gpu0, sw0], type: pcie4x16}
  - {ends: [gpu1, sw0], type: pcie4x16}
  - {ends: [sw0, cpu0], type: pcie4x16}
`
	p2p := simulate(t, strings.Replace(topo, "P2P", "true", 1), allreduce("all", "256 MiB", "")).Makespan
	shm := simulate(t, strings.Replace(topo, "P2P", "false", 1), allreduce("all", "256 MiB", "")).Makespan
	// Through host memory each transfer crosses the switch's uplink twice
	// (down to memory and back up), so both directions of the uplink carry
	// both ranks' data: half the bandwidth of P2P.
	if ratio := shm.Seconds() / p2p.Seconds(); ratio < 1.9 || ratio > 2.1 {
		t.Errorf("host-staged %s vs P2P %s: ratio %.3f, want about 2", shm, p2p, ratio)
	}
}

func TestCollectivesJoinedInDifferentOrdersDeadlock(t *testing.T) {
	// One thread per GPU, as one process per rank. In the same order both
	// collectives complete; in different orders each GPU's stream waits in
	// one collective for the other GPU, which waits in the other: NCCL hangs.
	scen := func(second string) string {
		return `
name: order
threads:
  - name: t0
    ops:
      - allreduce: {id: x, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu0}
      - allreduce: {id: y, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu0}
  - name: t1
    ops:
      - allreduce: {id: ` + second + `, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu1}
      - allreduce: {id: ` + map[string]string{"x": "y", "y": "x"}[second] + `, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu1}
`
	}
	res := simulate(t, nvPair, scen("x"))
	if x0, x1 := op(t, res, "x@gpu0"), op(t, res, "x@gpu1"); x0.Begin != x1.Begin || x0.End != x1.End {
		t.Errorf("x: ranks began %s, %s and ended %s, %s; want together", x0.Begin, x1.Begin, x0.End, x1.End)
	}
	_, err := simulateErr(t, nvPair, scen("y"))
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("err = %v, want a deadlock", err)
	}
	for _, want := range []string{"stream gpu0/c: op x@gpu0", "waits for the other ranks of the collective: gpu1 (op x@gpu1 queued behind other work)", "stream gpu1/c: op y@gpu1"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("deadlock report %q does not say %q", err, want)
		}
	}
}

// TestDeadlockedCollectiveNeverBegins: in a deadlock, the parts of a
// collective that never began waited for their ranks until the end, whether
// they reached their stream's head or stayed queued behind the other
// collective; no GPU communicated.
func TestDeadlockedCollectiveNeverBegins(t *testing.T) {
	res, err := simulateErr(t, nvPair, `
name: stuck
threads:
  - name: t0
    ops:
      - kernel: {stream: gpu0/c, duration: 10 us}
      - allreduce: {id: x, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu0}
      - allreduce: {id: y, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu0}
  - name: t1
    ops:
      - kernel: {stream: gpu1/c, duration: 10 us}
      - allreduce: {id: y, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu1}
      - allreduce: {id: x, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: c, rank: gpu1}
`)
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("err = %v, want a deadlock", err)
	}
	end := 10 * sim.Microsecond
	if res.Makespan != end {
		t.Fatalf("makespan %s, want the kernels' 10 us", res.Makespan)
	}
	for _, id := range []string{"x@gpu0", "x@gpu1", "y@gpu0", "y@gpu1"} {
		if r := op(t, res, id); r.Begin != end || r.End != end || !r.Unfinished {
			t.Errorf("%s: begins at %s, ends at %s (unfinished %v); want both at the end, %s", id, r.Begin, r.End, r.Unfinished, end)
		}
	}
	for _, g := range res.GPUs {
		if g.Comm != 0 || g.Compute != end {
			t.Errorf("%s: communicated %s, computed %s; want 0 and %s", g.Name, g.Comm, g.Compute, end)
		}
	}
}

// commPair is two 1 GB ring all-reduces on gpu0 and gpu1, x on streams a
// and y on streams b, issued back to back by one thread; extraX and extraY
// are added to each.
func commPair(extraX, extraY string) string {
	return `
name: comms
threads:
  - name: main
    ops:
      - allreduce: {id: x, gpus: [gpu0, gpu1], bytes: 1 GB, stream: a, algorithm: ring, protocol: simple` + extraX + `}
      - allreduce: {id: y, gpus: [gpu0, gpu1], bytes: 1 GB, stream: b, algorithm: ring, protocol: simple` + extraY + `}
`
}

// TestCollectivesOfOneCommunicatorRunOneAtATime: two collectives over the
// same GPUs share their communicator, and NCCL runs a communicator's
// collectives one after another whatever streams they are on: y starts on
// each GPU when x ends there. Alone, each takes NCCL's start latency and two
// steps of 500 MB each way over the 100 GB/s link (see
// TestRingAllReduceOnTwoGPUs).
func TestCollectivesOfOneCommunicatorRunOneAtATime(t *testing.T) {
	one := us(8.4 + 2*(3.4+5000))
	for _, tc := range []struct{ name, x, y string }{
		{"unnamed", "", ""},
		{"named", ", comm: world", ", comm: world"},
		{"reversed ranks", "", ""}, // see below: the same set in another order
	} {
		t.Run(tc.name, func(t *testing.T) {
			scen := commPair(tc.x, tc.y)
			if tc.name == "reversed ranks" {
				scen = strings.Replace(scen, "id: y, gpus: [gpu0, gpu1]", "id: y, gpus: [gpu1, gpu0]", 1)
			}
			res := simulate(t, nvPair, scen)
			for _, g := range []string{"gpu0", "gpu1"} {
				x, y := op(t, res, "x@"+g), op(t, res, "y@"+g)
				near(t, "x@"+g+" end", x.End, one, 4)
				if y.Start != x.End {
					t.Errorf("y@%s starts at %s, want at x's end %s", g, y.Start, x.End)
				}
				// The cause is the last rank's (see arrive): x's part
				// on either GPU; the target is x's part on this one.
				if c := res.Ops[y.Cause].ID; y.CauseKind != sim.CauseComm || (c != "x@gpu0" && c != "x@gpu1") || res.Ops[y.Target].ID != "x@"+g {
					t.Errorf("y@%s: cause %v %d, target %d; want comm, a part of x, and x@%s", g, y.CauseKind, y.Cause, y.Target, g)
				}
			}
			near(t, "makespan", res.Makespan, 2*one, 8)
			// The critical path runs through x, then y.
			_, byID := pathTotals(res)
			if byID["x@gpu0"]+byID["x@gpu1"] == 0 {
				t.Errorf("critical path %v does not pass through x", byID)
			}
		})
	}
}

// TestCollectivesOfTwoCommunicatorsOverlap: named apart, x and y run at
// once and share the link: each of the two steps moves 500 MB each way at
// half of 100 GB/s.
func TestCollectivesOfTwoCommunicatorsOverlap(t *testing.T) {
	res := simulate(t, nvPair, commPair(", comm: one", ", comm: two"))
	for _, id := range []string{"x@gpu0", "x@gpu1", "y@gpu0", "y@gpu1"} {
		r := op(t, res, id)
		if r.Start != 0 || r.Target != -1 {
			t.Errorf("%s starts at %s (target %d); want at once, waiting for nothing", id, r.Start, r.Target)
		}
		near(t, id+" end", r.End, us(8.4+2*(3.4+10000)), 8)
	}
	// Collectives over other GPUs have a communicator of their own too.
	res = simulate(t, nvSwitch4, `
name: sets
threads:
  - name: main
    ops:
      - allreduce: {id: x, gpus: [gpu0, gpu1], bytes: 1 GB, stream: a}
      - allreduce: {id: y, gpus: [gpu0, gpu1, gpu2], bytes: 1 GB, stream: b}
`)
	if y := op(t, res, "y@gpu0"); y.Start != 0 {
		t.Errorf("y@gpu0 starts at %s, want at once: x is over other GPUs", y.Start)
	}
}

// TestNamedCommunicatorSpansItsCollectivesGPUs: a communicator named by an
// all-reduce over four GPUs and by a send between two of them orders the
// send behind the all-reduce on those two only; a send between the other two
// without a name is in the communicator of its pair and starts at once.
func TestNamedCommunicatorSpansItsCollectivesGPUs(t *testing.T) {
	res := simulate(t, nvSwitch4, `
name: subset
threads:
  - name: main
    ops:
      - allreduce: {id: ar, gpus: all, bytes: 1 GB, stream: a, comm: world}
      - sendrecv: {id: s23, gpus: [gpu2, gpu3], bytes: 1 MB, stream: b, comm: world}
      - sendrecv: {id: s01, gpus: [gpu0, gpu1], bytes: 1 MB, stream: b}
`)
	for _, g := range []string{"gpu2", "gpu3"} {
		if s, ar := op(t, res, "s23@"+g), op(t, res, "ar@"+g); s.Start != ar.End || s.CauseKind != sim.CauseComm {
			t.Errorf("s23@%s starts at %s (cause %v), want at ar@%s's end %s (comm)", g, s.Start, s.CauseKind, g, ar.End)
		}
	}
	for _, g := range []string{"gpu0", "gpu1"} {
		if s := op(t, res, "s01@"+g); s.Start != 0 {
			t.Errorf("s01@%s starts at %s, want at once", g, s.Start)
		}
	}
}

// TestCommunicatorOrderMismatchDeadlocks: each rank issues x and y on
// different streams, but in opposite orders; NCCL runs them in issue order
// on each GPU, so gpu0 runs x and waits for gpu1's x, queued behind y there,
// which waits for gpu0's y, queued behind x: the job hangs. With a
// communicator each, they complete.
func TestCommunicatorOrderMismatchDeadlocks(t *testing.T) {
	scen := func(extraX, extraY string) string {
		x := func(g string) string {
			return `      - allreduce: {id: x, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: a, rank: ` + g + extraX + `}` + "\n"
		}
		y := func(g string) string {
			return `      - allreduce: {id: y, gpus: [gpu0, gpu1], bytes: 1 MiB, stream: b, rank: ` + g + extraY + `}` + "\n"
		}
		return "name: order\nthreads:\n  - name: t0\n    ops:\n" + x("gpu0") + y("gpu0") + "  - name: t1\n    ops:\n" + y("gpu1") + x("gpu1")
	}
	_, err := simulateErr(t, nvPair, scen("", ""))
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("err = %v, want a deadlock", err)
	}
	for _, want := range []string{
		"stream gpu0/b: op y@gpu0 (scen.yaml:7:20) waits for op x@gpu0 (scen.yaml:6:20) on stream gpu0/a, issued before it on the communicator of gpu0, gpu1",
		"stream gpu1/a: op x@gpu1 (scen.yaml:11:20) waits for op y@gpu1 (scen.yaml:10:20) on stream gpu1/b",
		"stream gpu0/a: op x@gpu0 (scen.yaml:6:20) waits for the other ranks of the collective: gpu1 (op x@gpu1 waits for y@gpu1 on its communicator)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("deadlock report %q does not say %q", err, want)
		}
	}
	res := simulate(t, nvPair, scen(", comm: cx", ", comm: cy"))
	if x, y := op(t, res, "x@gpu0"), op(t, res, "y@gpu1"); x.Start != 0 || y.Start != 0 {
		t.Errorf("with two communicators x@gpu0 starts at %s and y@gpu1 at %s, want both at once", x.Start, y.Start)
	}
}

// TestCollectiveLinkSpans: a run records when each collective's transfers
// used each link direction (for traces): the two-rank ring all-reduce of
// TestRingAllReduceOnTwoGPUs crosses the gpu0-gpu1 link (link 2) both ways,
// from its first step's start (NCCL's 8.4 us, then the step's 3.4 us) to
// its end. Unless asked for, nothing is recorded; a trace draws the
// collective, by its id, on both directions' tracks.
func TestCollectiveLinkSpans(t *testing.T) {
	scen := allreduce("[gpu0, gpu1]", "1 GB", ", algorithm: ring, protocol: simple")
	sc := mustLoad(t, nvPair, "topology: topo.yaml\n"+scen)
	res, err := sim.RunOptions(sc.Topology.Machine, sc.Program, sim.Options{CollLinks: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.CollLinks) != 2 {
		t.Fatalf("%d link spans, want 2: %+v", len(res.CollLinks), res.CollLinks)
	}
	dirs := map[int32]bool{}
	for _, sp := range res.CollLinks {
		dirs[sp.Dir] = true
		near(t, "span start", sp.Start, us(8.4+3.4), 4)
		near(t, "span end", sp.End, us(8.4+2*(3.4+5000)), 4)
		if id := res.Ops[sp.Rec].ID; id != "ar@gpu0" {
			t.Errorf("span of %s, want the first part, ar@gpu0", id)
		}
	}
	if !dirs[4] || !dirs[5] {
		t.Errorf("directions %v, want 4 and 5 (link 2 both ways)", dirs)
	}
	// A one-rank collective copies within its GPU: no link, no span (it
	// used to index an empty list of spans).
	one := mustLoad(t, nvPair, "topology: topo.yaml\n"+allreduce("[gpu0]", "1 GB", ""))
	if res, err := sim.RunOptions(one.Topology.Machine, one.Program, sim.Options{CollLinks: true}); err != nil {
		t.Errorf("one rank: %v", err)
	} else if len(res.CollLinks) != 0 {
		t.Errorf("one rank: %d link spans, want none", len(res.CollLinks))
	}
	if quiet := simulate(t, nvPair, scen); len(quiet.CollLinks) != 0 {
		t.Errorf("%d link spans not asked for, want none", len(quiet.CollLinks))
	}
	var buf bytes.Buffer
	if err := sim.WriteTrace(&buf, res); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), `"name":"ar","cat":"allreduce"`); n != 2 {
		t.Errorf("%d slices of ar on link tracks, want 2", n)
	}
}

// TestDiscardedCollectives: NCCL discards an empty collective and a
// one-rank one in place before anything reaches a stream (taskAppend and
// ncclLaunchOneRank in NCCL's enqueue.cc), though each rank's call still
// costs the host (nccl-tests on one GPU in place: 4.6-5.6 us a call,
// measured.md §4). Here gpu0's stream is busy with a 10 us kernel when a
// zero-byte all-reduce over both GPUs is called at 1 us (after the
// kernel's launch; the host's API overhead is 1 us a call): its two calls
// end at 3 us, when its part on gpu1 ends, without waiting for gpu0's;
// gpu0's part ends behind the kernel, with no time of its own. A one-rank
// in-place all-reduce of 1 GB, called at 3 us, takes no time once called
// (at 4 us); out of place, called at 4 us, it copies the buffer within
// the GPU (read and write at H100's 3.35 TB/s HBM, over 2: at least
// 0.6 ms).
func TestDiscardedCollectives(t *testing.T) {
	topo := strings.Replace(nvPair, "api_overhead: 0 us", "api_overhead: 1 us", 1)
	res := simulate(t, topo, `
name: discard
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/comm, duration: 10 us}
      - allreduce: {id: empty, gpus: [gpu0, gpu1], bytes: 0, stream: comm}
      - allreduce: {id: inplace, gpus: [gpu1], bytes: 1 GB, stream: comm, in_place: true}
      - allreduce: {id: copy, gpus: [gpu1], bytes: 1 GB, stream: comm}
`)
	k := op(t, res, "k")
	near(t, "kernel end", k.End, us(11), 0)
	e0, e1 := op(t, res, "empty@gpu0"), op(t, res, "empty@gpu1")
	if e1.Call != us(1) || e1.HostEnd != us(3) || e1.Start != us(3) || e1.End != us(3) {
		t.Errorf("empty@gpu1: call %s, host end %s, start %s, end %s; want a call at 1 us, the rest at 3 us", e1.Call, e1.HostEnd, e1.Start, e1.End)
	}
	if e0.Start != k.End || e0.End != k.End {
		t.Errorf("empty@gpu0: %s-%s, want both at the kernel's end %s", e0.Start, e0.End, k.End)
	}
	in := op(t, res, "inplace@gpu1")
	if in.Call != us(3) || in.Start != in.End || in.End != us(4) {
		t.Errorf("inplace@gpu1: call %s, %s-%s; want a call at 3 us, ending at 4 us", in.Call, in.Start, in.End)
	}
	cp := op(t, res, "copy@gpu1")
	if cp.Call != us(4) || cp.End-cp.Start < us(600) {
		t.Errorf("copy@gpu1: call %s, %s-%s; want a call at 4 us and a copy of at least 600 us", cp.Call, cp.Start, cp.End)
	}
	// Nor does a discarded collective wait for its communicator: issued
	// on other streams behind a 1 GB all-reduce over the same GPUs, it ends
	// as its calls do (the all-reduce's two calls of 1 us, then its own
	// two: at 4 us).
	after := simulate(t, topo, `
name: discard
threads:
  - name: main
    ops:
      - allreduce: {id: x, gpus: [gpu0, gpu1], bytes: 1 GB, stream: a}
      - allreduce: {id: empty, gpus: [gpu0, gpu1], bytes: 0, stream: b}
`)
	for _, g := range []string{"gpu0", "gpu1"} {
		if e := op(t, after, "empty@"+g); e.Start != us(4) || e.End != us(4) || e.Target >= 0 {
			t.Errorf("empty@%s after x: %s-%s, waits for %d; want both at 4 us, waiting for nothing", g, e.Start, e.End, e.Target)
		}
	}
	for _, id := range []string{"empty@gpu0", "empty@gpu1", "inplace@gpu1"} {
		o := op(t, res, id)
		if o.Coll == nil || o.Coll.Algorithm != "none" || len(o.Coll.Tasks) != 0 {
			t.Errorf("%s: plan %+v, want one without tasks (algorithm none)", id, o.Coll)
		}
	}
}

// TestOversubscribedCollectivesSlow: while kernels' claims on a GPU sum to
// S, a collective's transfers there run at 1/S of what they reach alone
// (docs/model.md), also where the collective's own transfers share a link
// (an all-to-all's three sends leave each GPU's 100 GB/s link together,
// 33.3 GB/s each alone) and where a protocol's cap, not the link, bounds
// them (one channel's, about 4 GB/s). Here a kernel claiming the whole GPU runs on every GPU
// through the collective, beside its own whole-GPU claim (sm_share 1):
// S = 2, so the transfers take twice as long as alone.
func TestOversubscribedCollectivesSlow(t *testing.T) {
	for _, c := range []struct{ name, op string }{
		{"all-to-all", "alltoall: {id: c, gpus: all, bytes: 1 GB, stream: comm, sm_share: 1, protocol: simple}"},
		{"one-channel send", "sendrecv: {id: c, gpus: [gpu0, gpu1], bytes: 256 MB, stream: comm, sm_share: 1, protocol: simple, channels: 1}"},
	} {
		alone := simulate(t, nvSwitch4, "name: a\nthreads: [{name: m, ops: [{"+c.op+"}]}]\n")
		busy := simulate(t, nvSwitch4, `
name: b
threads:
  - name: k
    ops:
      - kernel: {stream: gpu0/k, duration: 10 s}
      - kernel: {stream: gpu1/k, duration: 10 s}
      - kernel: {stream: gpu2/k, duration: 10 s}
      - kernel: {stream: gpu3/k, duration: 10 s}
  - name: m
    ops:
      - host: {duration: 1 ms}
      - `+c.op+`
`)
		a, b := op(t, alone, "c@gpu0"), op(t, busy, "c@gpu0")
		ta, tb := (a.End - a.Begin).Seconds(), (b.End - b.Begin).Seconds()
		if r := tb / ta; r < 1.98 || r > 2.02 {
			t.Errorf("%s: transfers took %.4g s alone and %.4g s beside a whole-GPU kernel (x%.3f), want twice", c.name, ta, tb, r)
		}
	}
}

// TestLinkBytesOfCollectives: a link counts the bytes that crossed it,
// while its utilization counts kernel-driven bytes at the link's copy rate.
// A ring all-reduce of 64 MB over four GPUs sends 2 x 3/4 x 64 MB = 96 MB
// out of each GPU (Simple: no wire overhead), over links whose kernel
// transfers reach half their 100 GB/s: 96 MB crossed, a load of 192 MB.
// A 1 GB copy beside it on the same link adds its bytes to both.
func TestLinkBytesOfCollectives(t *testing.T) {
	topo := strings.ReplaceAll(nvSwitch4, "bandwidth: 100 GB/s}", "bandwidth: 100 GB/s, sm_bandwidth: 50 GB/s}")
	for _, withCopy := range []bool{false, true} {
		scen := allreduce("all", "64 MB", ", algorithm: ring, protocol: simple")
		add := 0.0
		if withCopy {
			scen += "      - copy: {id: c, from: gpu0, to: gpu1, bytes: 1 GB, stream: gpu0/x}\n"
			add = 1e9
		}
		res := simulate(t, topo, scen)
		l := linkDir(t, res, "gpu0", "nvs")
		if math.Abs(l.Bytes-(96e6+add)) > 1 || math.Abs(l.Used-(192e6+add)) > 1 {
			t.Errorf("copy %v: gpu0->nvs carried %.0f bytes, load %.0f; want %.0f and %.0f", withCopy, l.Bytes, l.Used, 96e6+add, 192e6+add)
		}
	}
}

// TestChainHeadWaitsForItsSlowestHop: a broadcast's root cannot send ahead
// of the ranks after it by more than NCCL's buffers hold. Three GPUs in a
// triangle of 100, 10 and 100 GB/s links: the planner's two rings (one
// each way round) each take half the bytes through one 10 GB/s hop, which
// sets the broadcast's time (512 MiB at no more than 10 GB/s: at least
// 53 ms). The root's part used to end when it had sent everything over
// its own 100 GB/s hops (a tenth of that); now it ends earlier than the
// last rank's by what the receivers buffer: links between GPUs are NVLink
// paths to the planner, 24 channels, 12 a ring, each with NCCL's 4 MiB
// Simple buffers: 48 MiB, 5.03 ms at 10 GB/s, give or take a 2 MiB chunk
// (0.21 ms) or two.
func TestChainHeadWaitsForItsSlowestHop(t *testing.T) {
	topo := `
name: triangle
hosts: [{name: cpu0, api_overhead: 0 us}]
gpus: [{name: gpu0, model: H100-SXM}, {name: gpu1, model: H100-SXM}, {name: gpu2, model: H100-SXM}]
links:
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu0], type: pcie5x16}
  - {ends: [gpu2, cpu0], type: pcie5x16}
  - {ends: [gpu0, gpu1], bandwidth: 100 GB/s}
  - {ends: [gpu1, gpu2], bandwidth: 10 GB/s}
  - {ends: [gpu2, gpu0], bandwidth: 100 GB/s}
`
	res := simulate(t, topo, `
name: chain
threads:
  - name: main
    ops:
      - broadcast: {id: c, gpus: all, bytes: 1 GiB, stream: comm, root: gpu0, protocol: simple}
`)
	var last sim.Time
	for _, g := range []string{"gpu1", "gpu2"} {
		last = max(last, op(t, res, "c@"+g).End)
	}
	if last < 53*sim.Millisecond {
		t.Fatalf("the last rank ends at %s, want at least 53 ms (512 MiB at 10 GB/s)", last)
	}
	if gap := last - op(t, res, "c@gpu0").End; gap < 4500*sim.Microsecond || gap > 5500*sim.Microsecond {
		t.Errorf("the root's part ends %s before the last rank's, want 4.5-5.5 ms (48 MiB of buffers at 10 GB/s)", gap)
	}
}
