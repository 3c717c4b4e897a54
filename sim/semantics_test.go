package sim_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"gpusim/sim"
)

// A tree: cpu0 -- sw0 (uplink) -- gpu0, gpu1, gpu2, with round bandwidths and
// no latencies unless a test says otherwise.
func tree(uplink, gpu0, gpu1, gpu2 string) string {
	return `
name: tree
hosts: [` + bareHost + `]
gpus: [` + bareGPU("gpu0") + `, ` + bareGPU("gpu1") + `, ` + bareGPU("gpu2") + `]
switches: [{name: sw0}]
links:
  - {ends: [sw0, cpu0], bandwidth: ` + uplink + `}
  - {ends: [gpu0, sw0], bandwidth: ` + gpu0 + `}
  - {ends: [gpu1, sw0], bandwidth: ` + gpu1 + `}
  - {ends: [gpu2, sw0], bandwidth: ` + gpu2 + `}
`
}

func TestOneCopyIsLatencyPlusBytesOverBottleneck(t *testing.T) {
	topo := `
name: one
hosts: [{name: cpu0, api_overhead: 2 us, memory_bandwidth: 1000 GB/s}]
gpus: [{name: gpu0, model: H100-SXM, copy_overhead: 1 us}]
switches: [{name: sw0}]
links:
  - {ends: [gpu0, sw0], bandwidth: 32 GB/s, latency: 0.5 us}
  - {ends: [sw0, cpu0], bandwidth: 25 GB/s, latency: 1 us}
`
	res := simulate(t, topo, `
name: one-copy
threads:
  - name: main
    ops:
      - copy: {id: c, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/copy}
`)
	c := op(t, res, "c")
	// Issued after the 2 us API overhead; then the copy engine's 1 us, the
	// route's latencies 0.5 + 1 us, and 1e8 B at the 25 GB/s bottleneck: 4 ms.
	if c.Issued != us(2) || c.Start != us(2) {
		t.Errorf("issued %s start %s, want 2 us both", c.Issued, c.Start)
	}
	near(t, "end", c.End, us(2+1+1.5+4000), 1)
	if c.Copy != sim.CopyH2D {
		t.Errorf("copy kind %v, want h2d", c.Copy)
	}
	if res.Makespan != c.End {
		t.Errorf("makespan %s, want the copy's end %s", res.Makespan, c.End)
	}
}

func TestTwoCopiesShareALink(t *testing.T) {
	res := simulate(t, tree("20 GB/s", "16 GB/s", "16 GB/s", "16 GB/s"), `
name: two
threads:
  - name: main
    ops:
      - copy: {id: a, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/c}
      - copy: {id: b, from: cpu0, to: gpu1, bytes: 100 MB, stream: gpu1/c}
`)
	// Both cross the 20 GB/s uplink: 10 GB/s each, 1e8 B in 10 ms.
	near(t, "a end", op(t, res, "a").End, us(10_000), 1)
	near(t, "b end", op(t, res, "b").End, us(10_000), 1)
}

func TestMaxMinFreesBandwidthOfAFlowLimitedElsewhere(t *testing.T) {
	res := simulate(t, tree("20 GB/s", "4 GB/s", "16 GB/s", "16 GB/s"), `
name: three
threads:
  - name: main
    ops:
      - copy: {id: a, from: cpu0, to: gpu0, bytes: 40 MB, stream: gpu0/c}
      - copy: {id: b, from: cpu0, to: gpu1, bytes: 160 MB, stream: gpu1/c}
      - copy: {id: c, from: cpu0, to: gpu2, bytes: 160 MB, stream: gpu2/c}
`)
	// Max-min: a is held to 4 GB/s by its own link; b and c split the other
	// 16 GB/s of the uplink, 8 each. a ends at 4e7/4e9 = 10 ms; by then b and
	// c have moved 8e7 each and split the uplink 10/10: 8e7 more take 8 ms.
	near(t, "a end", op(t, res, "a").End, us(10_000), 1)
	near(t, "b end", op(t, res, "b").End, us(18_000), 2)
	near(t, "c end", op(t, res, "c").End, us(18_000), 2)
	// The uplink carried 3.6e8 bytes in 18 ms of its 20 GB/s.
	up := linkDir(t, res, "cpu0", "sw0")
	if up.Used < 3.6e8-1 || up.Used > 3.6e8+1 {
		t.Errorf("uplink carried %g bytes, want 3.6e8", up.Used)
	}
	near(t, "uplink busy", up.Busy, us(18_000), 2)
}

func TestTransferStartingWhileAnotherRuns(t *testing.T) {
	res := simulate(t, tree("20 GB/s", "16 GB/s", "16 GB/s", "16 GB/s"), `
name: late
threads:
  - name: first
    ops:
      - copy: {id: x, from: cpu0, to: gpu0, bytes: 160 MB, stream: gpu0/c}
  - name: second
    ops:
      - host: {duration: 5 ms}
      - copy: {id: y, from: cpu0, to: gpu1, bytes: 100 MB, stream: gpu1/c}
`)
	// x runs alone at 16 GB/s (its own link) for 5 ms: 8e7 moved. Then x and
	// y split the uplink, 10 GB/s each: x's other 8e7 take 8 ms (ends at
	// 13 ms), while y moves 8e7; y's last 2e7 alone at 16 GB/s take 1.25 ms.
	near(t, "x end", op(t, res, "x").End, us(13_000), 2)
	y := op(t, res, "y")
	if y.Start != us(5000) {
		t.Errorf("y start %s, want 5 ms", y.Start)
	}
	near(t, "y end", y.End, us(14_250), 2)
}

func TestStreamRunsItsOpsInIssueOrder(t *testing.T) {
	topo := `
name: one
hosts: [{name: cpu0, api_overhead: 3 us}]
gpus: [{name: gpu0, model: H100-SXM}]
links: [{ends: [gpu0, cpu0], type: pcie5x16}]
`
	res := simulate(t, topo, `
name: fifo
threads:
  - name: main
    ops:
      - kernel: {id: k1, stream: gpu0/s, duration: 10 us}
      - kernel: {id: k2, stream: gpu0/s, duration: 20 us}
`)
	k1, k2 := op(t, res, "k1"), op(t, res, "k2")
	// k1 is issued at 3 us and runs 3-13; k2 is issued at 6 us and waits
	// for k1: 13-33.
	if k1.Start != us(3) || k1.End != us(13) {
		t.Errorf("k1 %s-%s, want 3-13 us", k1.Start, k1.End)
	}
	if k2.Issued != us(6) || k2.Start != us(13) || k2.End != us(33) {
		t.Errorf("k2 issued %s, ran %s-%s, want issued 6, ran 13-33 us", k2.Issued, k2.Start, k2.End)
	}
	if k2.CauseKind != sim.CauseStream || res.Ops[k2.Cause].ID != "k1" {
		t.Errorf("k2 cause %v %d, want stream k1", k2.CauseKind, k2.Cause)
	}
}

const twoGPUs = `
name: two
hosts: [` + bareHost + `]
gpus: [{name: gpu0, model: H100-SXM, copy_overhead: 0 us}, {name: gpu1, model: H100-SXM, copy_overhead: 0 us}]
switches: [{name: sw0}]
links:
  - {ends: [gpu0, sw0], bandwidth: 10 GB/s}
  - {ends: [gpu1, sw0], bandwidth: 10 GB/s}
  - {ends: [sw0, cpu0], bandwidth: 10 GB/s}
`

func TestEventOrdersWorkAcrossGPUs(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: events
threads:
  - name: main
    ops:
      - kernel: {id: k1, stream: gpu0/a, duration: 100 us}
      - record: {id: r, event: e, stream: gpu0/a}
      - wait: {id: w, event: e, stream: gpu1/b}
      - kernel: {id: k2, stream: gpu1/b, duration: 50 us}
`)
	k2, w := op(t, res, "k2"), op(t, res, "w")
	if w.End != us(100) || k2.Start != us(100) || k2.End != us(150) {
		t.Errorf("wait ended %s, k2 ran %s-%s; want 100, 100-150 us", w.End, k2.Start, k2.End)
	}
	if w.CauseKind != sim.CauseEvent || res.Ops[w.Cause].ID != "r" {
		t.Errorf("wait cause %v, want event r", w.CauseKind)
	}
	// gpu1 idled 100 us waiting for gpu0, then finished at 150.
	g1 := res.GPUs[1]
	if g1.IdleGPU != us(100) || g1.Compute != us(50) {
		t.Errorf("gpu1 idle on other gpu %s, compute %s; want 100 us, 50 us", g1.IdleGPU, g1.Compute)
	}
}

func TestCopyOverlapsComputeOnTwoStreams(t *testing.T) {
	for _, tc := range []struct {
		stream string
		want   sim.Time
	}{
		{"gpu0/copy", us(1000)},    // copy and kernel overlap: max(1, 1) ms
		{"gpu0/compute", us(2000)}, // one stream: 1 + 1 ms
	} {
		res := simulate(t, twoGPUs, `
name: overlap
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/compute, duration: 1 ms}
      - copy: {id: c, from: cpu0, to: gpu0, bytes: 10 MB, stream: `+tc.stream+`}
`)
		if res.Makespan != tc.want {
			t.Errorf("copy on %s: makespan %s, want %s", tc.stream, res.Makespan, tc.want)
		}
	}
}

func TestCopiesQueueForCopyEngines(t *testing.T) {
	for _, tc := range []struct {
		engines int
		start   sim.Time
	}{{1, us(1000)}, {2, 0}} {
		topo := strings.Replace(twoGPUs, "{name: gpu0, model: H100-SXM, copy_overhead: 0 us}",
			"{name: gpu0, model: H100-SXM, copy_overhead: 0 us, copy_engines: "+string(rune('0'+tc.engines))+"}", 1)
		res := simulate(t, topo, `
name: engines
threads:
  - name: main
    ops:
      - copy: {id: in, from: cpu0, to: gpu0, bytes: 10 MB, stream: gpu0/in}
      - copy: {id: out, from: gpu0, to: cpu0, bytes: 10 MB, stream: gpu0/out}
`)
		// H2D and D2H use opposite link directions, so only the engines
		// can serialize them: 1 ms each.
		out := op(t, res, "out")
		if out.Start != tc.start || out.End != tc.start+us(1000) {
			t.Errorf("%d engines: out ran %s-%s, want from %s for 1 ms", tc.engines, out.Start, out.End, tc.start)
		}
		if tc.engines == 1 && (out.CauseKind != sim.CauseEngine || res.Ops[out.Cause].ID != "in") {
			t.Errorf("1 engine: out's cause %v, want the engine freed by in", out.CauseKind)
		}
		// With one engine both use engine 0; with two, out takes the free one.
		if wantEngine := tc.engines - 1; int(out.Engine) != wantEngine {
			t.Errorf("%d engines: out used engine %d, want %d", tc.engines, out.Engine, wantEngine)
		}
	}
}

const stagingHost = `{name: cpu0, api_overhead: 0 us, memory_bandwidth: 1000 GB/s, memcpy_bandwidth: 5 GB/s, staging_chunk: 1 MiB, staging_buffers: 2, staging_handoff: 0 us, staging_setup: 0 us}`

func TestPageableVsPinnedH2D(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, stagingHost, 1)
	run := func(memory string) sim.OpRecord {
		res := simulate(t, topo, `
name: h2d
threads:
  - name: main
    ops:
      - copy: {id: c, from: cpu0, to: gpu0, bytes: 4 MiB, memory: `+memory+`, stream: gpu0/a}
`)
		return op(t, res, "c")
	}
	// Pinned: one DMA of 4 MiB at 10 GB/s.
	chunk := 1048576.0
	dma := chunk / 10e9 * 1e6 // us per 1 MiB chunk
	cp := chunk / 5e9 * 1e6   // us per 1 MiB host memcpy
	pinned := run("pinned")
	near(t, "pinned end", pinned.End, us(4*dma), 1)
	if pinned.HostEnd != 0 {
		t.Errorf("pinned call returned at %s, want at once", pinned.HostEnd)
	}
	// Pageable: the thread memcpys 1 MiB chunks at 5 GB/s into two bounce
	// buffers while the DMA drains them at 10 GB/s. The memcpy is the
	// bottleneck, so chunks are staged back to back (the buffers never
	// fill): the call returns after 4 memcpys, the last DMA follows.
	pageable := run("pageable")
	near(t, "pageable host return", pageable.HostEnd, us(4*cp), 4)
	near(t, "pageable end", pageable.End, us(4*cp+dma), 4)
}

func TestPageableD2HBlocksUntilCopiedOut(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, stagingHost, 1)
	res := simulate(t, topo, `
name: d2h
threads:
  - name: main
    ops:
      - copy: {id: c, from: gpu0, to: cpu0, bytes: 4 MiB, memory: pageable, stream: gpu0/a}
      - host: {id: after, duration: 1 us}
`)
	dma := 1048576.0 / 10e9 * 1e6
	cp := 1048576.0 / 5e9 * 1e6
	// DMA of chunk 0, then four memcpys out of the buffers back to back (the
	// DMA of each next chunk is done before the memcpy is ready for it).
	c := op(t, res, "c")
	near(t, "end", c.End, us(dma+4*cp), 4)
	if c.HostEnd != c.End {
		t.Errorf("pageable D2H returned at %s, before its data was copied out at %s", c.HostEnd, c.End)
	}
	if a := op(t, res, "after"); a.Start != c.End {
		t.Errorf("host op after the copy started at %s, want %s", a.Start, c.End)
	}
}

// TestPageableMemcpyIsCPUTime: a thread in a pageable copy spends CPU
// time while its memcpy chunks run and is blocked while it waits for a
// staging buffer; here the DMA (10 GB/s) is slower than the memcpy
// (20 GB/s), so it waits.
func TestPageableMemcpyIsCPUTime(t *testing.T) {
	host := strings.Replace(stagingHost, "memcpy_bandwidth: 5 GB/s", "memcpy_bandwidth: 20 GB/s", 1)
	topo := strings.Replace(twoGPUs, bareHost, host, 1)
	chunk := 1048576.0
	dma := chunk / 10e9 * 1e6 // us per 1 MiB
	cp := chunk / 20e9 * 1e6
	for _, tc := range []struct {
		from, to     string
		cpu, blocked float64 // us
	}{
		// H2D: memcpys 0 and 1 fill both buffers; memcpy 2 waits for DMA 0
		// (ends at cp+dma), memcpy 3 for DMA 1 (cp+2dma); the call returns
		// at 2cp+2dma, of which 4cp copying.
		{"cpu0", "gpu0", 4 * cp, 2*dma - 2*cp},
		// D2H: the thread waits for DMA 0 (dma), then copies each chunk out
		// as its DMA ends (DMA k ends at (k+1)dma; DMAs 2 and 3 wait for a
		// buffer, freed at dma+cp and 2dma+cp): it returns at 4dma+cp.
		{"gpu0", "cpu0", 4 * cp, 4*dma - 3*cp},
	} {
		res := simulate(t, topo, `
name: cpu
threads:
  - name: main
    ops:
      - copy: {id: c, from: `+tc.from+`, to: `+tc.to+`, bytes: 4 MiB, memory: pageable, stream: gpu0/a}
`)
		th := res.Threads[0]
		near(t, tc.from+"->"+tc.to+" CPU", th.CPU, us(tc.cpu), 8)
		near(t, tc.from+"->"+tc.to+" blocked", th.Blocked, us(tc.blocked), 8)
		if c := op(t, res, "c"); th.CPU+th.Blocked != c.HostEnd-c.Call {
			t.Errorf("%s->%s: CPU %s + blocked %s, want the call's %s", tc.from, tc.to, th.CPU, th.Blocked, c.HostEnd-c.Call)
		}
	}
}

// TestPageableRatesPerDirection: pageable_h2d_bandwidth and
// pageable_d2h_bandwidth replace memcpy_bandwidth as the staging rate of
// their direction only.
func TestPageableRatesPerDirection(t *testing.T) {
	host := strings.Replace(stagingHost, "memcpy_bandwidth: 5 GB/s", "memcpy_bandwidth: 5 GB/s, pageable_h2d_bandwidth: 2.5 GB/s, pageable_d2h_bandwidth: 4 GB/s", 1)
	topo := strings.Replace(twoGPUs, bareHost, host, 1)
	res := simulate(t, topo, `
name: both
threads:
  - name: main
    ops:
      - copy: {id: up, from: cpu0, to: gpu0, bytes: 4 MiB, memory: pageable, stream: gpu0/a}
      - sync: {stream: gpu0/a}
      - copy: {id: down, from: gpu0, to: cpu0, bytes: 4 MiB, memory: pageable, stream: gpu0/a}
`)
	chunk := 1048576.0
	dma := chunk / 10e9 * 1e6
	// Up: four memcpys at 2.5 GB/s back to back, then the last DMA.
	up := op(t, res, "up")
	near(t, "up", up.End-up.Start, us(4*chunk/2.5e9*1e6+dma), 4)
	// Down: the first chunk's DMA, then four memcpys at 4 GB/s.
	down := op(t, res, "down")
	near(t, "down", down.End-down.Start, us(dma+4*chunk/4e9*1e6), 4)
}

func TestPeerToPeerVsHostStaged(t *testing.T) {
	scen := `
name: p2p
threads:
  - name: main
    ops:
      - copy: {id: c, from: gpu0, to: gpu1, bytes: 4 MiB, stream: gpu0/a}
`
	topo := strings.Replace(twoGPUs, bareHost, stagingHost, 1)
	dma := 1048576.0 / 10e9 * 1e6
	p2p := op(t, simulate(t, topo, scen), "c")
	if p2p.Copy != sim.CopyP2P {
		t.Errorf("copy kind %v, want pcie-p2p", p2p.Copy)
	}
	near(t, "p2p end", p2p.End, us(4*dma), 1)
	// Without P2P at the switch the copy goes gpu0 -> cpu0 -> gpu1 in 1 MiB
	// chunks over two buffers: the two legs use opposite directions of the
	// uplink, so they pipeline: 4 chunks + 1 stage of fill = 5 chunk times.
	staged := op(t, simulate(t, strings.Replace(topo, "{name: sw0}", "{name: sw0, p2p: false}", 1), scen), "c")
	if staged.Copy != sim.CopyStaged {
		t.Errorf("copy kind %v, want host-staged", staged.Copy)
	}
	near(t, "staged end", staged.End, us(5*dma), 4)
	// With the driver's handoff h before each chunk's second DMA, the second
	// leg takes h + T a chunk: it starts at T and runs 4 chunks: 5T + 4h.
	handoff := strings.Replace(strings.Replace(topo, "{name: sw0}", "{name: sw0, p2p: false}", 1), "staging_handoff: 0 us", "staging_handoff: 10 us", 1)
	near(t, "staged end with handoff", op(t, simulate(t, handoff, scen), "c").End, us(5*dma+4*10), 4)
}

func TestAPIOverheadMakesTinyKernelsLaunchBound(t *testing.T) {
	topo := `
name: one
hosts: [{name: cpu0, api_overhead: 5 us}]
gpus: [{name: gpu0, model: H100-SXM}]
links: [{ends: [gpu0, cpu0], type: pcie5x16}]
`
	res := simulate(t, topo, `
name: launch-bound
threads:
  - name: main
    ops:
      - repeat:
          count: 100
          ops:
            - kernel: {id: k, stream: gpu0/s, duration: 1 us}
`)
	// Kernel i is issued at 5(i+1) us and runs 1 us: the GPU waits on the
	// host. The last ends at 501 us, five times the kernels' 100 us.
	if res.Makespan != us(501) {
		t.Errorf("makespan %s, want 501 us", res.Makespan)
	}
	g := res.GPUs[0]
	if g.Compute != us(100) || g.IdleHost != us(401) {
		t.Errorf("gpu0 compute %s, idle on host %s; want 100 us, 401 us", g.Compute, g.IdleHost)
	}
}

func TestConcurrentKernelsShareSMs(t *testing.T) {
	for _, tc := range []struct {
		a, b   string
		endA   float64
		endB   float64
		reason string
	}{
		{"1", "1", 20, 20, "both claim every SM: each runs at half speed"},
		{"0.5", "0.5", 10, 10, "claims fit: both at full speed"},
		{"0.6", "0.6", 12, 12, "claims 1.2x the GPU: each at 1/1.2"},
		{"1", "25%", 12.5, 12.5, "claims 1.25x: each at 0.8"},
	} {
		res := simulate(t, twoGPUs, `
name: sm
threads:
  - name: one
    ops: [{kernel: {id: a, stream: gpu0/a, duration: 10 us, sm_share: `+tc.a+`}}]
  - name: two
    ops: [{kernel: {id: b, stream: gpu0/b, duration: 10 us, sm_share: "`+tc.b+`"}}]
`)
		near(t, tc.reason+": a end", op(t, res, "a").End, us(tc.endA), 1)
		near(t, tc.reason+": b end", op(t, res, "b").End, us(tc.endB), 1)
	}
}

func TestWaitOnAnEventNeverRecordedCompletesAtOnce(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: never
threads:
  - name: main
    ops:
      - wait: {id: w, event: ghost, stream: gpu0/b}
      - kernel: {id: k, stream: gpu0/b, duration: 10 us}
`)
	if k := op(t, res, "k"); k.Start != 0 {
		t.Errorf("kernel after a wait on a never-recorded event started at %s, want 0", k.Start)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "ghost") || !strings.Contains(res.Warnings[0], "scen.yaml:") {
		t.Errorf("warnings %q, want one naming event ghost and its position", res.Warnings)
	}
}

func TestWaitIgnoresARecordIssuedAfterIt(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: later
threads:
  - name: main
    ops:
      - wait: {id: w, event: e, stream: gpu1/b}
      - kernel: {id: k1, stream: gpu0/a, duration: 100 us}
      - record: {id: r, event: e, stream: gpu0/a}
      - kernel: {id: k2, stream: gpu1/b, duration: 10 us}
`)
	// As cudaStreamWaitEvent: the wait took the state of e when it was
	// issued, when e had no record; k2 does not wait for k1.
	if k2 := op(t, res, "k2"); k2.Start != 0 || k2.End != us(10) {
		t.Errorf("k2 ran %s-%s, want 0-10 us", k2.Start, k2.End)
	}
	if len(res.Warnings) != 1 {
		t.Errorf("got %d warnings, want 1", len(res.Warnings))
	}
}

func TestWaitBindsToTheLatestRecordIssuedBeforeIt(t *testing.T) {
	for _, tc := range []struct {
		order string
		want  sim.Time
	}{
		// record after k1, wait, then k2 and a second record: the wait
		// depends on the first record only.
		{`[k1, r1, w, k2, r2, k3]`, us(100)},
		// both records before the wait: it depends on the second.
		{`[k1, r1, k2, r2, w, k3]`, us(300)},
	} {
		ops := map[string]string{
			"k1": `{kernel: {id: k1, stream: gpu0/a, duration: 100 us}}`,
			"r1": `{record: {id: r1, event: e, stream: gpu0/a}}`,
			"k2": `{kernel: {id: k2, stream: gpu0/a, duration: 200 us}}`,
			"r2": `{record: {id: r2, event: e, stream: gpu0/a}}`,
			"w":  `{wait: {id: w, event: e, stream: gpu1/b}}`,
			"k3": `{kernel: {id: k3, stream: gpu1/b, duration: 10 us}}`,
		}
		var list []string
		for _, k := range strings.Split(strings.Trim(tc.order, "[]"), ", ") {
			list = append(list, ops[k])
		}
		res := simulate(t, twoGPUs, "name: latest\nthreads:\n  - name: main\n    ops: ["+strings.Join(list, ", ")+"]\n")
		if k3 := op(t, res, "k3"); k3.Start != tc.want {
			t.Errorf("order %s: k3 started at %s, want %s", tc.order, k3.Start, tc.want)
		}
	}
}

func TestThreadsShareHostCores(t *testing.T) {
	for _, tc := range []struct {
		cores, threads int
		want           float64
	}{{1, 2, 20}, {2, 2, 10}, {2, 3, 15}, {0, 3, 10}} {
		topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 0 us, cores: `+string(rune('0'+tc.cores))+`}`, 1)
		scen := "name: cores\nthreads:\n"
		for i := 0; i < tc.threads; i++ {
			scen += "  - {name: t" + string(rune('0'+i)) + ", ops: [{host: {id: h" + string(rune('0'+i)) + ", duration: 10 us}}]}\n"
		}
		res := simulate(t, topo, scen)
		if res.Makespan != us(tc.want) {
			t.Errorf("%d threads on %d cores: makespan %s, want %g us", tc.threads, tc.cores, res.Makespan, tc.want)
		}
	}
}

func TestSyncBlocksTheThreadUntilTheStreamDrains(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 2 us, sync_latency: 3 us}`, 1)
	res := simulate(t, topo, `
name: sync
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/a, duration: 100 us}
      - sync: {id: s, stream: gpu0/a}
      - host: {id: h, duration: 10 us}
`)
	// k is issued at 2 and runs 2-102; the sync pays 2-4 then blocks until
	// the host sees k done, 3 us later: 105; the host op runs 105-115.
	s, h := op(t, res, "s"), op(t, res, "h")
	if s.Start != us(4) || s.End != us(105) || h.Start != us(105) || h.End != us(115) {
		t.Errorf("sync %s-%s, host %s-%s; want 4-105, 105-115 us", s.Start, s.End, h.Start, h.End)
	}
	if res.Threads[0].Blocked != us(101) {
		t.Errorf("thread blocked %s, want 101 us", res.Threads[0].Blocked)
	}
}

// TestSyncLatency: a sync returns at the later of its call's end and its
// targets' completion plus the host's sync_latency (1 us calls, 4 us
// latency here), whether the target was still running when the call ended
// or had just completed, and at its call's end when the target completed
// long before. By hand:
//   - k1 (2 us) runs 1-3; s1's call ends at 2, k1 is seen at 7.
//   - k2 (1 us) is issued at 8 and runs 8-9; h runs 8-9; s2's call ends at
//     10 after k2 completed (9), which is seen at 13.
//   - h2 runs 13-33; s3's call ends at 34, long after k2: it returns then.
//   - r is issued at 35 and completes then; k3 (10 us, another stream) runs
//     36-46; se's call ends at 37, r is seen at 39; sd's call ends at 40,
//     k3 is seen at 50.
func TestSyncLatency(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 1 us, sync_latency: 4 us}`, 1)
	res := simulate(t, topo, `
name: synclat
threads:
  - name: main
    ops:
      - kernel: {id: k1, stream: gpu0/a, duration: 2 us}
      - sync: {id: s1, stream: gpu0/a}
      - kernel: {id: k2, stream: gpu0/a, duration: 1 us}
      - host: {id: h, duration: 1 us}
      - sync: {id: s2, stream: gpu0/a}
      - host: {id: h2, duration: 20 us}
      - sync: {id: s3, stream: gpu0/a}
      - record: {id: r, event: e, stream: gpu0/a}
      - kernel: {id: k3, stream: gpu0/b, duration: 10 us}
      - sync: {id: se, event: e}
      - sync: {id: sd, device: gpu0}
`)
	for _, w := range []struct {
		id    string
		end   float64
		cause string // the op the sync waited to see, "" for its call
	}{{"s1", 7, "k1"}, {"s2", 13, "k2"}, {"s3", 34, ""}, {"se", 39, "r"}, {"sd", 50, "k3"}} {
		rec := op(t, res, w.id)
		if rec.End != us(w.end) {
			t.Errorf("%s returned at %s, want %g us", w.id, rec.End, w.end)
		}
		switch {
		case w.cause == "" && rec.CauseKind == sim.CauseSync:
			t.Errorf("%s: caused by %s, want its call", w.id, res.Ops[rec.Cause].ID)
		case w.cause != "" && (rec.CauseKind != sim.CauseSync || res.Ops[rec.Cause].ID != w.cause):
			t.Errorf("%s: cause %v %d, want a sync on %s", w.id, rec.CauseKind, rec.Cause, w.cause)
		}
	}
	if res.Makespan != us(50) {
		t.Errorf("makespan %s, want 50 us", res.Makespan)
	}
	// The critical path charges each latency to the sync that waited.
	got := map[string]sim.Time{}
	for _, st := range res.CriticalPath {
		if r := res.Ops[st.Record]; r.Kind == sim.OpSync && st.Part == sim.PartOp {
			got[r.ID] += st.Time
		}
	}
	for _, id := range []string{"s1", "s2", "sd"} {
		if got[id] != us(4) {
			t.Errorf("critical path: %s for %s, want its 4 us of latency (path syncs: %v)", got[id], id, got)
		}
	}
}

// TestSyncLatencySeesWorkNotDiscardedCalls: a call NCCL discards (an
// in-place all-reduce over one GPU) reaches no GPU, so a sync after it sees
// the work before it. With 1 us calls and 4 us of latency: k runs 1-3, the
// host op 1-3.5, the discarded call costs nothing, the sync's call ends at
// 4.5 and k is seen at 7. With free calls the sync finds the discarded call
// still queued at 20 (k ran 0-2, seen at 6): it returns at 20, not 24.
func TestSyncLatencySeesWorkNotDiscardedCalls(t *testing.T) {
	scen := func(host string) string {
		return `
name: discarded
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/a, duration: 2 us}
      - host: {id: h, duration: ` + host + `}
      - allreduce: {id: ar, gpus: [gpu0], bytes: 1 MiB, stream: a, in_place: true}
      - sync: {id: s, stream: gpu0/a}
`
	}
	for _, c := range []struct {
		api, host string
		want      float64
	}{{"1 us", "2.5 us", 7}, {"0 us", "20 us", 20}} {
		topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: `+c.api+`, sync_latency: 4 us}`, 1)
		res := simulate(t, topo, scen(c.host))
		if s := op(t, res, "s"); s.End != us(c.want) {
			t.Errorf("api %s: sync returned at %s, want %g us", c.api, s.End, c.want)
		}
	}
}

// TestSyncLatencyOverflow: a sync_latency that would take the run past the
// simulator's range is the overflow error, naming the sync.
func TestSyncLatencyOverflow(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 1 us, sync_latency: 2000 h}`, 1)
	_, err := simulateErr(t, topo, `
name: far
threads:
  - name: main
    ops:
      - host: {duration: 600 h}
      - kernel: {stream: gpu0/a, duration: 1 us}
      - sync: {id: s, stream: gpu0/a}
`)
	if err == nil || !strings.Contains(err.Error(), "op s (sync)") || !strings.Contains(err.Error(), "returning sync_latency (7.2e+06 s) after the work it waits for ended") {
		t.Errorf("error %v, want the overflow naming op s and its sync_latency", err)
	}
}

func TestSemaphoresOrderHostThreads(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: sem
threads:
  - name: producer
    ops: [{host: {id: p, duration: 10 us}}, {signal: {id: s, semaphore: ready}}]
  - name: consumer
    ops: [{await: {id: a, semaphore: ready}}, {host: {id: c, duration: 5 us}}]
`)
	if c := op(t, res, "c"); c.Start != us(10) || c.End != us(15) {
		t.Errorf("consumer ran %s-%s, want 10-15 us", c.Start, c.End)
	}
}

func TestDeadlockNamesWhatIsStuck(t *testing.T) {
	_, err := simulateErr(t, twoGPUs, `
name: stuck
threads:
  - name: waiter
    ops: [{await: {id: a, semaphore: never}}]
`)
	var dl *sim.DeadlockError
	if !errors.As(err, &dl) {
		t.Fatalf("err = %v, want a deadlock", err)
	}
	if !strings.Contains(err.Error(), "thread waiter") || !strings.Contains(err.Error(), "semaphore never") {
		t.Errorf("deadlock message %q does not name the thread and the semaphore", err)
	}
}

func TestDeviceLocalCopyReadsAndWritesMemory(t *testing.T) {
	topo := strings.Replace(twoGPUs, "{name: gpu0, model: H100-SXM, copy_overhead: 0 us}",
		"{name: gpu0, model: H100-SXM, copy_overhead: 0 us, memory_bandwidth: 1000 GB/s, memory_efficiency: 1}", 1)
	res := simulate(t, topo, `
name: d2d
threads:
  - name: main
    ops: [{copy: {id: c, from: gpu0, to: gpu0, bytes: 1 GB, stream: gpu0/a}}]
`)
	// 1e9 B read and 1e9 B written at 1000 GB/s: 2 ms.
	c := op(t, res, "c")
	near(t, "end", c.End, us(2000), 1)
	if c.Copy != sim.CopyD2D {
		t.Errorf("copy kind %v, want d2d", c.Copy)
	}
}

func TestSimulatedTimeOverflowIsAnError(t *testing.T) {
	// 1 TiB over a 1 kB/s link would take 35 years: the run stops with an
	// error instead of wrapping its clock around.
	topo := strings.Replace(twoGPUs, "{ends: [gpu0, sw0], bandwidth: 10 GB/s}", "{ends: [gpu0, sw0], bandwidth: 1 kB/s}", 1)
	_, err := simulateErr(t, topo, `
name: long
threads:
  - name: main
    ops: [{copy: {from: cpu0, to: gpu0, bytes: 1 TiB, stream: gpu0/c}}]
`)
	if err == nil || !strings.Contains(err.Error(), "overflows") {
		t.Errorf("err = %v, want a time overflow", err)
	}
}

// Work of no size takes no GPU time: CUDA moves nothing for a copy of no
// bytes (and the hw backend issues none), so it holds no copy engine, pays
// neither the engine's overhead nor a link's latency, and a staged or
// pageable one neither the staging setup nor its pipeline nor the host's
// memcpy. The host still pays each call's API overhead.
func TestZeroSizedWorkTakesOnlyItsFixedCosts(t *testing.T) {
	topo := `
name: z
hosts: [{name: cpu0, api_overhead: 1 us, staging_setup: 5 us}]
gpus:
  - {name: gpu0, model: H100-SXM, copy_overhead: 2 us}
  - {name: gpu1, model: H100-SXM, copy_overhead: 2 us}
switches: [{name: sw0, p2p: false}]
links:
  - {ends: [gpu0, sw0], bandwidth: 10 GB/s, latency: 0.5 us}
  - {ends: [gpu1, sw0], bandwidth: 10 GB/s, latency: 0.5 us}
  - {ends: [sw0, cpu0], bandwidth: 10 GB/s, latency: 0.5 us}
`
	res := simulate(t, topo, `
name: zero
threads:
  - name: main
    ops:
      - copy: {id: c, from: cpu0, to: gpu0, bytes: 0, stream: gpu0/a}
      - kernel: {id: k, stream: gpu0/a, duration: 0 s}
      - copy: {id: s, from: gpu0, to: gpu1, bytes: 0, stream: gpu0/a}
      - copy: {id: p, from: gpu0, to: cpu0, bytes: 0, memory: pageable, stream: gpu0/a}
`)
	// Each call costs 1 us of host time and its op ends as it is issued:
	// c at 1 us, k at 2, the staged s at 3 (no staging setup), the
	// pageable p at 4 (its call waits for no host memcpy).
	for i, id := range []string{"c", "k", "s", "p"} {
		at := us(float64(i + 1))
		if r := op(t, res, id); r.Start != at || r.End != at || r.HostEnd != at {
			t.Errorf("%s: ran %s-%s, its call returned at %s; want all at %s", id, r.Start, r.End, r.HostEnd, at)
		}
	}
	for _, l := range res.Links {
		if l.Bytes != 0 {
			t.Errorf("link %d carried %g bytes; want none", l.Link, l.Bytes)
		}
	}
}

func TestSyncOnEventAndDevice(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: syncs
threads:
  - name: main
    ops:
      - kernel: {id: a, stream: gpu0/a, duration: 100 us}
      - record: {id: r, event: e, stream: gpu0/a}
      - kernel: {id: b, stream: gpu0/a, duration: 50 us}
      - kernel: {id: c, stream: gpu0/c, duration: 10 us, sm_share: 0.1}
      - sync: {id: se, event: e}
      - host: {id: h1, duration: 1 us}
      - sync: {id: sd, device: gpu0}
      - host: {id: h2, duration: 1 us}
`)
	// c claims 10% of the SMs while a claims all of them: both slow to
	// 1/1.1 speed while they overlap. c needs 10 us alone: it ends at 11 us
	// having delayed a by 1 us, so a ends at 101 us and b at 151 us. The event
	// sync returns when a's record completes (101), the device sync when b
	// ends (151).
	near(t, "c end", op(t, res, "c").End, us(11), 1)
	near(t, "a end", op(t, res, "a").End, us(101), 1)
	near(t, "event sync end", op(t, res, "se").End, us(101), 1)
	near(t, "h1 start", op(t, res, "h1").Start, us(101), 1)
	near(t, "device sync end", op(t, res, "sd").End, us(151), 1)
	near(t, "h2 end", op(t, res, "h2").End, us(152), 1)
}

func TestHostMemoryBandwidthIsShared(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 0 us, memory_bandwidth: 15 GB/s}`, 1)
	topo = strings.Replace(topo, "{ends: [sw0, cpu0], bandwidth: 10 GB/s}", "{ends: [sw0, cpu0], bandwidth: 100 GB/s}", 1)
	res := simulate(t, topo, `
name: memory
threads:
  - name: main
    ops:
      - copy: {id: a, from: cpu0, to: gpu0, bytes: 75 MB, stream: gpu0/c}
      - copy: {id: b, from: gpu1, to: cpu0, bytes: 75 MB, stream: gpu1/c}
`)
	// The GPU links allow 10 GB/s each, but both copies touch cpu0's memory,
	// 15 GB/s in all: 7.5 GB/s each, 75 MB in 10 ms.
	near(t, "a end", op(t, res, "a").End, us(10_000), 1)
	near(t, "b end", op(t, res, "b").End, us(10_000), 1)
	if mem := res.HostMemory[0]; mem.Used < 1.5e8-1 || mem.Used > 1.5e8+1 {
		t.Errorf("host memory carried %g bytes, want 1.5e8", mem.Used)
	}
}

func TestFarSocketFeedsAGPUOverTheSocketLink(t *testing.T) {
	topo := `
name: two-sockets
hosts: [{name: cpu0, api_overhead: 0 us}, {name: cpu1, api_overhead: 0 us}]
gpus: [{name: gpu0, model: H100-SXM, host: cpu0, copy_overhead: 0 us}]
links:
  - {ends: [gpu0, cpu0], bandwidth: 50 GB/s}
  - {ends: [cpu0, cpu1], bandwidth: 20 GB/s, latency: 1 us}
`
	res := simulate(t, topo, `
name: far
threads:
  - {name: near, host: cpu0, ops: [{copy: {id: near, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/a}}]}
  - {name: far, host: cpu1, ops: [{host: {duration: 10 ms}}, {copy: {id: far, from: cpu1, to: gpu0, bytes: 100 MB, stream: gpu0/b}}]}
`)
	// Near: 1e8 B at 50 GB/s = 2 ms. Far, alone later: 1 us of socket-link
	// latency, then 1e8 B at the 20 GB/s socket link = 5 ms.
	near(t, "near end", op(t, res, "near").End, us(2000), 1)
	far := op(t, res, "far")
	near(t, "far duration", far.End-far.Start, us(5001), 1)
}

func TestNVLinkIsPreferredOverPCIe(t *testing.T) {
	topo := strings.Replace(twoGPUs, "links:\n", "links:\n  - {ends: [gpu0, gpu1], bandwidth: 100 GB/s}\n", 1)
	res := simulate(t, topo, `
name: nv
threads:
  - name: main
    ops: [{copy: {id: c, from: gpu0, to: gpu1, bytes: 100 MB, stream: gpu1/a}}]
`)
	// gpu0 and gpu1 share a PCIe switch (10 GB/s) and a direct 100 GB/s
	// NVLink (its kind inferred from its GPU ends): the copy takes the NVLink.
	c := op(t, res, "c")
	if c.Copy != sim.CopyNVLink {
		t.Errorf("copy kind %v, want nvlink", c.Copy)
	}
	near(t, "end", c.End, us(1000), 1)
}

// pathTotals sums the critical path by part and by op id.
func pathTotals(res *sim.Result) (byPart map[sim.PathPart]sim.Time, byID map[string]sim.Time) {
	byPart, byID = map[sim.PathPart]sim.Time{}, map[string]sim.Time{}
	for _, s := range res.CriticalPath {
		byPart[s.Part] += s.Time
		byID[res.Ops[s.Record].ID] += s.Time
	}
	return
}

func TestCriticalPathOfALaunchBoundLoop(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 5 us}`, 1)
	res := simulate(t, topo, `
name: launch-bound
threads:
  - name: main
    ops: [{repeat: {count: 100, ops: [{kernel: {id: k, stream: gpu0/s, duration: 1 us}}]}}]
`)
	// The host's 100 launches of 5 us each, then the last kernel's 1 us.
	byPart, byID := pathTotals(res)
	if byPart[sim.PartAPI] != us(500) || byPart[sim.PartOp] != us(1) || byID["k#99"] != us(6) {
		t.Errorf("critical path: api %s, ops %s, k#99 %s; want 500 us, 1 us, 6 us", byPart[sim.PartAPI], byPart[sim.PartOp], byID["k#99"])
	}
}

// A collective issued rank by rank whose second rank's thread first works
// 50 ms on the host: the path runs through that host op, not through the
// first rank's thread, which issued its part at once and then a 1 us
// kernel behind it (the op that ends last).
func TestCriticalPathThroughTheLastRankToIssue(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 0 us}`, 1)
	res := simulate(t, topo, `
name: straggler
threads:
  - name: r0
    ops:
      - allreduce: {id: ar, gpus: [gpu0, gpu1], bytes: 1 MB, stream: s, rank: gpu0}
      - kernel: {id: k, stream: gpu0/s, duration: 1 us}
  - name: r1
    ops:
      - host: {id: h, duration: 50 ms}
      - allreduce: {id: ar, gpus: [gpu0, gpu1], bytes: 1 MB, stream: s, rank: gpu1}
`)
	byPart, byID := pathTotals(res)
	ar := op(t, res, "ar@gpu0")
	if byID["h"] != us(50_000) || byID["ar@gpu0"] != ar.End-us(50_000) || byID["k"] != us(1) || byPart[sim.PartOp] != res.Makespan {
		t.Errorf("critical path: h %s, ar@gpu0 %s, k %s, ops %s of %s; want 50 ms, %s, 1 us, all of it", byID["h"], byID["ar@gpu0"], byID["k"], byPart[sim.PartOp], res.Makespan, ar.End-us(50_000))
	}
	if ar.CauseKind != sim.CauseRank || res.Ops[ar.Cause].ID != "ar@gpu1" {
		t.Errorf("ar@gpu0 cause %v %s, want rank ar@gpu1", ar.CauseKind, res.Ops[ar.Cause].ID)
	}
	if got := res.Bottleneck(); !strings.HasPrefix(got, "host-bound") {
		t.Errorf("bottleneck %q, want host-bound", got)
	}
}

func TestCriticalPathThroughPageableStagingBehindAKernel(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, stagingHost, 1)
	res := simulate(t, topo, `
name: staged-behind
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/a, duration: 50 ms}
      - copy: {id: up, from: cpu0, to: gpu0, bytes: 4 MiB, memory: pageable, stream: gpu0/a}
      - host: {id: h, duration: 1 ms}
`)
	// The thread stages two chunks at once, then waits for the DMA, which
	// waits for k; the host op after the call ends last. The path runs
	// through k (50 ms), the copy's staging after k, then h.
	_, byID := pathTotals(res)
	if byID["k"] != us(50_000) {
		t.Errorf("k contributes %s to the critical path, want 50 ms", byID["k"])
	}
	var staging sim.Time
	for _, s := range res.CriticalPath {
		if s.Part == sim.PartStaging {
			staging += s.Time
		}
	}
	up := op(t, res, "up")
	if staging != up.HostEnd-up.Start {
		t.Errorf("staging on the path %s, want the copy's host side after its start, %s", staging, up.HostEnd-up.Start)
	}
}

func TestIdleBlameFollowsLongQueues(t *testing.T) {
	// gpu0 waits for an event recorded on gpu1 behind 1,500 queued kernels:
	// all that time gpu0 waits on another GPU, however long the queue.
	res := simulate(t, twoGPUs, `
name: chain
threads:
  - name: main
    ops:
      - repeat: {count: 1500, ops: [{kernel: {stream: gpu1/a, duration: 10 us}}]}
      - record: {event: e, stream: gpu1/a}
      - wait: {event: e, stream: gpu0/b}
      - kernel: {id: last, stream: gpu0/b, duration: 10 us}
`)
	g0 := res.GPUs[0]
	if g0.IdleGPU != us(15_000) || g0.Compute != us(10) {
		t.Errorf("gpu0 idle on other GPU %s, compute %s; want 15 ms, 10 us", g0.IdleGPU, g0.Compute)
	}
}

func TestDeadlockedOpsAreMarkedUnfinished(t *testing.T) {
	res, err := simulateErr(t, twoGPUs, `
name: stuck
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/a, duration: 1 us}
      - await: {id: a, semaphore: never}
`)
	if err == nil {
		t.Fatal("no deadlock")
	}
	a := op(t, res, "a")
	if !a.Unfinished || a.End != res.Makespan || a.Start > a.End {
		t.Errorf("await: unfinished %v, %s-%s, makespan %s", a.Unfinished, a.Start, a.End, res.Makespan)
	}
	if k := op(t, res, "k"); k.Unfinished {
		t.Error("the finished kernel is marked unfinished")
	}
	// The JSON's bottleneck says what stopped the run, not what its
	// critical path held up to then.
	if b := res.Bottleneck(); b != "deadlock: 1 op can never finish" {
		t.Errorf("bottleneck %q, want the deadlock of the one await", b)
	}
}

// A thread stuck in a pageable copy's call behind a collective whose other
// rank never comes: the copy was issued at 2 us (its 1 us call after the
// collective's), later than anything else happened, and the makespan covers
// it, so every op starts no earlier than it was issued and the GPU's time
// and the critical path add up to the makespan.
func TestDeadlockMakespanCoversIssues(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 1 us}`, 1)
	res, err := simulateErr(t, topo, `
name: stuck
threads:
  - name: main
    ops:
      - allreduce: {id: ar, gpus: [gpu0, gpu1], bytes: 1 MB, stream: s, rank: gpu0}
      - copy: {id: d, from: gpu0, to: cpu0, bytes: 1 MB, memory: pageable, stream: gpu0/s}
  - name: other
    ops:
      - await: {semaphore: never}
      - allreduce: {id: ar, gpus: [gpu0, gpu1], bytes: 1 MB, stream: s, rank: gpu1}
`)
	if err == nil || !strings.Contains(err.Error(), "thread main: op d (scen.yaml:8:15) is blocked in the call of a pageable copy") {
		t.Fatalf("deadlock %v, want thread main named blocked in the pageable copy's call", err)
	}
	d := op(t, res, "d")
	if d.Issued != us(2) || res.Makespan < d.Issued || d.Start < d.Issued {
		t.Errorf("copy issued at %s, started %s; makespan %s: want issued at 2 us, no later than either", d.Issued, d.Start, res.Makespan)
	}
	for _, r := range res.Ops {
		if r.Issued >= 0 && r.Start < r.Issued {
			t.Errorf("%s starts at %s, before it was issued at %s", r.ID, r.Start, r.Issued)
		}
	}
	g := res.GPUs[0]
	if sum := g.Compute + g.Comm + g.Copy + g.Idle(); sum != res.Makespan {
		t.Errorf("gpu0's time adds up to %s, want the makespan %s", sum, res.Makespan)
	}
	var path sim.Time
	for _, s := range res.CriticalPath {
		path += s.Time
	}
	if path != res.Makespan {
		t.Errorf("critical path adds up to %s, want the makespan %s", path, res.Makespan)
	}
}

func TestStagingSharesACoreWithHostWork(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, `{name: cpu0, api_overhead: 0 us, cores: 1, memory_bandwidth: 1000 GB/s, memcpy_bandwidth: 5 GB/s, staging_chunk: 1 MiB}`, 1)
	res := simulate(t, topo, `
name: one-core
threads:
  - {name: busy, ops: [{host: {id: h, duration: 10 ms}}]}
  - {name: copier, ops: [{copy: {id: c, from: cpu0, to: gpu0, bytes: 4 MiB, memory: pageable, stream: gpu0/a}}]}
`)
	// One core, two threads: the memcpy runs at half of 5 GB/s, 4 chunks of
	// 1 MiB in 4 x 419.43 us while the host op gets the other half; then the
	// host op runs alone.
	chunk := 1048576.0 / 2.5e9 * 1e6
	c := op(t, res, "c")
	near(t, "staging done", c.HostEnd, us(4*chunk), 8)
	near(t, "host op end", op(t, res, "h").End, us(10_000+4*chunk/2), 8)
}

// What a link carried is counted exactly: 300 H2D copies of 1 MiB each
// and 300 of 3 MiB back over a 26.15138462 GB/s PCIe link (a bandwidth
// at which no copy ends on a whole picosecond) carry 300 MiB and 900 MiB.
// Loads integrated over time miss by the rounding of each completion to
// the picosecond, up to 0.013 bytes a copy, unless each completion makes
// up the difference.
func TestLinkBytesAreExact(t *testing.T) {
	res := simulate(t, `
name: odd
hosts: [`+bareHost+`]
gpus: [{name: gpu0, model: H100-SXM, copy_overhead: 0 us}]
links: [{ends: [gpu0, cpu0], bandwidth: 26.15138462 GB/s}]
`, `
name: many
threads:
  - name: main
    ops:
      - repeat:
          count: 300
          ops:
            - copy: {from: cpu0, to: gpu0, bytes: 1 MiB, memory: pinned, stream: gpu0/up}
            - copy: {from: gpu0, to: cpu0, bytes: 3 MiB, memory: pinned, stream: gpu0/down}
`)
	// The link's ends are gpu0, cpu0: the forward direction is D2H.
	want := map[bool]float64{false: 900 << 20, true: 300 << 20}
	for _, l := range res.Links {
		if w := want[l.Reverse]; math.Abs(l.Used-w) > 1e-3 {
			t.Errorf("link direction reverse=%v carried %.6f bytes, want %.0f", l.Reverse, l.Used, w)
		}
	}
}

// A pageable copy's memcpy runs on the calling thread's cores, wherever the
// memory is: thread a on cpu0 copies 10 MB of cpu1's pageable memory to
// gpu0 at 5 GB/s (2 ms of memcpy) while thread b on cpu0 and thread c on
// cpu1 each run 4 ms of host work, one core per host. On cpu0 the memcpy
// and b's work share the core for 4 ms (each at half speed: the memcpy is
// done, b has 2 ms left), then b runs alone: b ends at 6 ms. c has cpu1's
// core to itself: it ends at 4 ms.
func TestPageableMemcpyUsesTheThreadsCores(t *testing.T) {
	res := simulate(t, `
name: two-sockets
hosts:
  - {name: cpu0, cores: 1, api_overhead: 0 us, memory_bandwidth: 1000 GB/s, memcpy_bandwidth: 5 GB/s, staging_chunk: 10 MB}
  - {name: cpu1, cores: 1, api_overhead: 0 us, memory_bandwidth: 1000 GB/s, memcpy_bandwidth: 5 GB/s, staging_chunk: 10 MB}
gpus: [{name: gpu0, model: H100-SXM, host: cpu0, copy_overhead: 0 us}]
links:
  - {ends: [gpu0, cpu0], bandwidth: 1000 GB/s}
  - {ends: [cpu0, cpu1], bandwidth: 1000 GB/s}
`, `
name: remote-pageable
threads:
  - {name: a, host: cpu0, ops: [{copy: {id: c, from: cpu1, to: gpu0, bytes: 10 MB, memory: pageable, stream: gpu0/s}}]}
  - {name: b, host: cpu0, ops: [{host: {id: hb, duration: 4 ms}}]}
  - {name: c, host: cpu1, ops: [{host: {id: hc, duration: 4 ms}}]}
`)
	near(t, "staging done", op(t, res, "c").HostEnd, us(4000), 8)
	near(t, "b's host work", op(t, res, "hb").End, us(6000), 8)
	near(t, "c's host work", op(t, res, "hc").End, us(4000), 8)
}

// With two copy engines or more, each direction keeps one (CUDA's
// asyncEngineCount 2: copies in both directions at once). One GPU, a
// 10 GB/s link each way, copies of 100 MB (10 ms alone):
//   - 2 engines, in1 and in2 into the GPU, out out of it, issued in that
//     order: in1 takes an engine, in2 may not take the last one (copies in
//     hold one, copies out none), out takes it. in1 and out run side by
//     side on the two directions and end at 10 ms; in2 then runs alone:
//     20 ms. Engines taken in the order asked would run in1 and in2 side by
//     side (both end at 20 ms) and out after them: 30 ms.
//   - 3 engines, in1, in2, in3 and out: in1 and in2 take two engines, in3
//     may not take the third, out does. in1 and in2 share the inbound
//     direction (5 GB/s each) and end at 20 ms; out ends at 10 ms, and in3
//     still may not take the last engine (copies in hold two, copies out
//     none now); it runs 20-30 ms.
func TestCopyEnginesKeepOneForEachDirection(t *testing.T) {
	topo := func(engines string) string {
		return `
name: one
hosts: [` + bareHost + `]
gpus: [{name: gpu0, model: H100-SXM, host: cpu0, copy_overhead: 0 us, copy_engines: ` + engines + `}]
links: [{ends: [gpu0, cpu0], bandwidth: 10 GB/s}]
`
	}
	res := simulate(t, topo("2"), `
name: two-engines
threads:
  - name: main
    ops:
      - copy: {id: in1, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/a}
      - copy: {id: in2, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/b}
      - copy: {id: out, from: gpu0, to: cpu0, bytes: 100 MB, stream: gpu0/c}
`)
	near(t, "in1 end", op(t, res, "in1").End, us(10_000), 8)
	near(t, "out end", op(t, res, "out").End, us(10_000), 8)
	in2 := op(t, res, "in2")
	near(t, "in2 start", in2.Start, us(10_000), 8)
	near(t, "in2 end", in2.End, us(20_000), 8)
	if in2.CauseKind != sim.CauseEngine || res.Ops[in2.Cause].ID != "in1" {
		t.Errorf("in2 waited for %v of %s, want the engine in1 freed", in2.CauseKind, res.Ops[in2.Cause].ID)
	}

	res = simulate(t, topo("3"), `
name: three-engines
threads:
  - name: main
    ops:
      - copy: {id: in1, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/a}
      - copy: {id: in2, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/b}
      - copy: {id: in3, from: cpu0, to: gpu0, bytes: 100 MB, stream: gpu0/c}
      - copy: {id: out, from: gpu0, to: cpu0, bytes: 100 MB, stream: gpu0/d}
`)
	near(t, "out end", op(t, res, "out").End, us(10_000), 8)
	near(t, "in1 end", op(t, res, "in1").End, us(20_000), 8)
	near(t, "in2 end", op(t, res, "in2").End, us(20_000), 8)
	near(t, "in3 start", op(t, res, "in3").Start, us(20_000), 8)
	near(t, "in3 end", op(t, res, "in3").End, us(30_000), 8)
}

// A sync on a stream that no op of the program uses returns at once, with
// one warning however often it is called (a misspelt stream); a sync on a
// stream used only later in the program is not warned of.
func TestSyncOnAStreamNothingUsesWarns(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: typo
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/compute, duration: 1 ms}
      - sync: {id: s0, stream: gpu0/later}
      - repeat: {count: 3, ops: [{sync: {id: s, stream: gpu0/comptue}}]}
      - kernel: {id: k2, stream: gpu0/later, duration: 1 ms}
`)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "op s#0: syncs stream gpu0/comptue, to which no op") {
		t.Errorf("warnings %q, want one for s#0 on gpu0/comptue", res.Warnings)
	}
	near(t, "s#2 returns", op(t, res, "s#2").HostEnd, 0, 0)

	// The same for a device no op uses: gpu1 here; gpu0 is used.
	res = simulate(t, twoGPUs, `
name: typo
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/compute, duration: 1 ms}
      - sync: {id: d0, device: gpu0}
      - repeat: {count: 2, ops: [{sync: {id: d, device: gpu1}}]}
`)
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "op d#0: syncs device gpu1, to which no op") {
		t.Errorf("warnings %q, want one for d#0 on gpu1", res.Warnings)
	}
}

// A GPU-to-GPU copy the driver stages through host memory costs the calling
// thread staging_setup on top of the API overhead; a peer copy, a host
// copy and a copy asking for no peer access where peer access is there
// cost the API overhead, and the staged one the setup too. Host: 2 us API
// overhead, 5 us setup. In order: p2p returns at 2 us; nopeer (p2p: false,
// so staged) at 2 + 7 = 9 us; h2d at 11 us. With the switch forbidding
// P2P, the first copy is staged too: 7, then 14 (nopeer), then 16.
func TestStagedCopyCallsPayTheSetup(t *testing.T) {
	host := `{name: cpu0, api_overhead: 2 us, memory_bandwidth: 1000 GB/s, staging_setup: 5 us}`
	scen := `
name: setup
threads:
  - name: main
    ops:
      - copy: {id: p2p, from: gpu0, to: gpu1, bytes: 1 MiB, stream: gpu0/a}
      - copy: {id: nopeer, from: gpu0, to: gpu1, bytes: 1 MiB, stream: gpu0/b, p2p: false}
      - copy: {id: h2d, from: cpu0, to: gpu1, bytes: 1 MiB, stream: gpu1/c}
`
	topo := strings.Replace(twoGPUs, bareHost, host, 1)
	for _, c := range []struct {
		topo string
		want [3]float64
	}{
		{topo, [3]float64{2, 9, 11}},
		{strings.Replace(topo, "{name: sw0}", "{name: sw0, p2p: false}", 1), [3]float64{7, 14, 16}},
	} {
		res := simulate(t, c.topo, scen)
		for i, id := range []string{"p2p", "nopeer", "h2d"} {
			near(t, id+" returns", op(t, res, id).HostEnd, us(c.want[i]), 0)
		}
	}
}

// The program's own warnings (its builder's) come first, and the run's
// repeats are still counted on the run's warnings.
func TestProgramWarningsComeFirst(t *testing.T) {
	sc := mustLoad(t, twoGPUs, `
name: warned
topology: topo.yaml
threads:
  - name: main
    ops:
      - repeat: {count: 3, ops: [{wait: {id: w, event: never, stream: gpu0/s}}]}
`)
	sc.Program.Warnings = make([]string, 1, 4) // room to grow: the run must not append to it
	sc.Program.Warnings[0] = "built so"
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 2 || res.Warnings[0] != "built so" || !strings.HasSuffix(res.Warnings[1], "(and 2 more times from this place)") {
		t.Errorf("warnings %q, want the program's, then w#0's with 2 more", res.Warnings)
	}
	if len(sc.Program.Warnings) != 1 {
		t.Errorf("the run changed the program's warnings: %q", sc.Program.Warnings)
	}
}

// A warning given by every op a repeat makes of one op is given once, with
// the count of the others; the same warning from another place is its own.
func TestRepeatedWarningsAreCounted(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: warned
threads:
  - name: main
    ops:
      - repeat: {count: 500, ops: [{wait: {id: w, event: never, stream: gpu0/s}}, {kernel: {stream: gpu0/s, duration: 1 us}}]}
      - wait: {id: v, event: never, stream: gpu0/s}
`)
	if len(res.Warnings) != 2 {
		t.Fatalf("%d warnings, want 2: %q", len(res.Warnings), res.Warnings)
	}
	if w := res.Warnings[0]; !strings.Contains(w, "op w#0: waits on event never") || !strings.HasSuffix(w, "(and 499 more times from this place)") {
		t.Errorf("first warning %q, want w#0's with 499 more", w)
	}
	if w := res.Warnings[1]; !strings.Contains(w, "op v: waits on event never") || strings.Contains(w, "more times") {
		t.Errorf("second warning %q, want v's alone", w)
	}

	// One place, two threads (a list shared through an alias): a warning
	// each, each with its own count.
	res = simulate(t, twoGPUs, `
name: shared
threads:
  - name: a
    ops: &body [{repeat: {count: 3, ops: [{wait: {event: never, stream: gpu0/s}}]}}]
  - name: b
    ops: *body
`)
	if len(res.Warnings) != 2 || !strings.Contains(res.Warnings[0], "op a/0:") || !strings.Contains(res.Warnings[1], "op b/0:") ||
		!strings.HasSuffix(res.Warnings[0], "(and 2 more times from this place)") || !strings.HasSuffix(res.Warnings[1], "(and 2 more times from this place)") {
		t.Errorf("warnings %q, want one for each thread, each with 2 more", res.Warnings)
	}
}

// TestDuplexLimitSharesBothDirections: a link of 50 GB/s each way that
// carries 80 GB/s both ways together. An H2D copy alone moves at 50; with a
// D2H at once each moves at 40 until the smaller one ends, and then the
// other at 50 again: 100 MB out ends at 100/40 = 2.5 ms, and 400 MB in has
// 300 MB left to move at 50 GB/s, 6 ms more.
func TestDuplexLimitSharesBothDirections(t *testing.T) {
	topo := `
name: duplex
hosts: [` + bareHost + `]
gpus: [{name: gpu0, model: H100-SXM, copy_overhead: 0 us}]
links: [{ends: [gpu0, cpu0], bandwidth: 50 GB/s, duplex_bandwidth: 80 GB/s}]
`
	res := simulate(t, topo, `
name: alone
threads: [{name: main, ops: [{copy: {id: in, from: cpu0, to: gpu0, bytes: 400 MB, stream: gpu0/in}}]}]
`)
	near(t, "in alone", op(t, res, "in").End, us(8000), 2)
	res = simulate(t, topo, `
name: both
threads:
  - name: main
    ops:
      - copy: {id: in, from: cpu0, to: gpu0, bytes: 400 MB, stream: gpu0/in}
      - copy: {id: out, from: gpu0, to: cpu0, bytes: 100 MB, stream: gpu0/out}
`)
	near(t, "out", op(t, res, "out").End, us(2500), 2)
	near(t, "in", op(t, res, "in").End, us(2500+6000), 2)
	// Each direction's statistics count its own bytes, and the joint
	// limit's (an entry after the directions) those of both, 500 MB,
	// against its 80 GB/s.
	if len(res.Links) != 3 {
		t.Fatalf("%d entries in the link statistics, want 2 directions and the joint limit", len(res.Links))
	}
	if d := linkDir(t, res, "cpu0", "gpu0"); d.Used != 400e6 {
		t.Errorf("cpu0->gpu0 carried %g bytes, want 4e8", d.Used)
	}
	both := res.Links[2]
	if !both.Both || both.Used != 500e6 || both.Capacity != 80e9 || both.LinkName(res.Machine) != "link:gpu0-cpu0 gpu0<->cpu0 both ways" {
		t.Errorf("joint limit: %+v named %q; want both ways, 5e8 bytes, 80 GB/s", both, both.LinkName(res.Machine))
	}
	if _, name, _ := res.BusiestLink(); name != "link:gpu0-cpu0 cpu0->gpu0" {
		t.Errorf("busiest link %q, want cpu0->gpu0 (400 MB in 8.5 ms of 50 GB/s: 94%%; both ways: 500 MB of 80 GB/s, 74%%)", name)
	}
	// 400 MB each way: 10 ms at 40 GB/s each; each direction is 80% used,
	// the joint limit 100%, and it is the busiest.
	res = simulate(t, topo, `
name: even
threads:
  - name: main
    ops:
      - copy: {id: in, from: cpu0, to: gpu0, bytes: 400 MB, stream: gpu0/in}
      - copy: {id: out, from: gpu0, to: cpu0, bytes: 400 MB, stream: gpu0/out}
`)
	if l, name, _ := res.BusiestLink(); name != "link:gpu0-cpu0 gpu0<->cpu0 both ways" || l.Utilization(res.Makespan) < 0.9999 {
		t.Errorf("busiest link %q at %.4f, want both ways at 1", name, l.Utilization(res.Makespan))
	}
	// Without the limit, both move at 50 GB/s.
	res = simulate(t, strings.Replace(topo, ", duplex_bandwidth: 80 GB/s", "", 1), `
name: both
threads:
  - name: main
    ops:
      - copy: {id: in, from: cpu0, to: gpu0, bytes: 400 MB, stream: gpu0/in}
      - copy: {id: out, from: gpu0, to: cpu0, bytes: 100 MB, stream: gpu0/out}
`)
	near(t, "in without the limit", op(t, res, "in").End, us(8000), 2)
}

// TestDuplexLimitSlowsACollective: a two-rank ring all-reduce sends both
// ways at once over the 100 GB/s link; held to 150 GB/s both ways, each
// direction moves 75 GB/s: each step's 500 MB takes 6.667 ms instead of 5
// (NCCL's Simple ring latencies as in TestRingAllReduceOnTwoGPUs).
func TestDuplexLimitSlowsACollective(t *testing.T) {
	topo := strings.Replace(nvPair, "{ends: [gpu0, gpu1], bandwidth: 100 GB/s}", "{ends: [gpu0, gpu1], bandwidth: 100 GB/s, duplex_bandwidth: 150 GB/s}", 1)
	res := simulate(t, topo, allreduce("[gpu0, gpu1]", "1 GB", ", algorithm: ring, protocol: simple"))
	near(t, "end", op(t, res, "ar@gpu0").End, us(8.4+2*(3.4+500e6/75e9*1e6)), 8)
}

// TestTimingOverheadIsChargedToStreamOps: a run that times each op (the hw
// backend, as replay predicts it) costs the host TimingOverhead more for
// every kernel, copy, record and wait call, and nothing more for a sync:
// with 1 us calls and 2 us of timing, a kernel's call ends at 3 us, a
// record's at 6 us, and the sync's call at 7 us.
func TestTimingOverheadIsChargedToStreamOps(t *testing.T) {
	sc := mustLoad(t, strings.Replace(twoGPUs, "api_overhead: 0 us", "api_overhead: 1 us", 1), `
topology: topo.yaml
name: timed
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/s, duration: 1 us}
      - record: {id: r, event: e, stream: gpu0/s}
      - sync: {id: y, stream: gpu0/s}
`)
	sc.Topology.Machine.Hosts[0].TimingOverhead = 2 * sim.Microsecond
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatal(err)
	}
	for id, want := range map[string]sim.Time{"k": us(3), "r": us(6), "y": us(7)} {
		if got := op(t, res, id).HostEnd; got != want {
			t.Errorf("%s: the thread went on at %s, want %s", id, got, want)
		}
	}
}

// TestProgressIsReportedAndChangesNothing: a run with a progress callback
// reports every 2^20 events, in order, within the run, and its result is
// the one without.
func TestProgressIsReportedAndChangesNothing(t *testing.T) {
	sc := mustLoad(t, twoGPUs, `
name: long
topology: t.yaml
threads:
  - name: main
    ops: [{repeat: {count: 300000, ops: [{kernel: {stream: gpu0/s, duration: 1 us}}]}}]
`)
	var times []sim.Time
	var counts []uint64
	res, err := sim.RunOptions(sc.Topology.Machine, sc.Program, sim.Options{Progress: func(now sim.Time, events uint64) {
		times, counts = append(times, now), append(counts, events)
	}})
	if err != nil {
		t.Fatal(err)
	}
	plain, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatal(err)
	}
	if res.Makespan != plain.Makespan || res.Events != plain.Events {
		t.Errorf("with progress: makespan %s, %d events; without: %s, %d", res.Makespan, res.Events, plain.Makespan, plain.Events)
	}
	if want := int(res.Events / (1 << 20)); len(counts) != want || want == 0 {
		t.Fatalf("%d reports over %d events, want %d (and at least one)", len(counts), res.Events, want)
	}
	for i := range counts {
		if counts[i] != uint64(i+1)<<20 || times[i] > res.Makespan || i > 0 && times[i] < times[i-1] {
			t.Errorf("report %d: %d events at %s (makespan %s)", i, counts[i], times[i], res.Makespan)
		}
	}
}

// No copy moves faster than the memory at either end: a peer copy over an
// NVLink of 1,000 GB/s into a GPU whose memory gives 100 GB/s takes
// 1 GB / 100 GB/s = 10 ms (plus the engine's 1 us and the link's 1 us).
// Copies are bound one by one: two H2D copies from two hosts into that
// GPU, each over its own 80 GB/s link, run at 80 GB/s each (12.5 ms),
// though together they outrun its memory.
func TestCopiesAreBoundByGPUMemory(t *testing.T) {
	topo := `
name: m
hosts: [{name: cpu0, api_overhead: 0 us, memory_bandwidth: 10000 GB/s}, {name: cpu1, api_overhead: 0 us, memory_bandwidth: 10000 GB/s}]
gpus:
  - {name: gpu0, model: H100-SXM, host: cpu0, copy_overhead: 1 us, memory_bandwidth: 100 GB/s, memory_efficiency: 1}
  - {name: gpu1, model: H100-SXM, host: cpu0, copy_overhead: 1 us, memory_bandwidth: 10000 GB/s, memory_efficiency: 1}
links:
  - {ends: [gpu1, gpu0], kind: nvlink, bandwidth: 1000 GB/s, latency: 1 us}
  - {ends: [gpu0, cpu0], bandwidth: 80 GB/s, latency: 0 us}
  - {ends: [gpu0, cpu1], bandwidth: 80 GB/s, latency: 0 us}
  - {ends: [gpu1, cpu0], bandwidth: 80 GB/s, latency: 0 us}
`
	res := simulate(t, topo, `
name: m
threads:
  - name: main
    host: cpu0
    ops:
      - copy: {id: p, from: gpu1, to: gpu0, bytes: 1 GB, stream: gpu1/s}
      - sync: {stream: gpu1/s}
      - copy: {id: a, from: cpu0, to: gpu0, bytes: 1 GB, stream: gpu0/a}
      - copy: {id: b, from: cpu1, to: gpu0, bytes: 1 GB, stream: gpu0/b}
`)
	p := op(t, res, "p")
	near(t, "peer copy", p.End-p.Start, us(10000+2), 1000)
	for _, id := range []string{"a", "b"} {
		r := op(t, res, id)
		near(t, id, r.End-r.Start, us(12500+1), 1000)
	}
}

// A pageable copy of no bytes stages nothing: the critical path through
// its call (a host op after it ends last) has the call's overhead, and no
// staging step (it had one of 0 ns).
func TestZeroBytePageableHasNoStagingStep(t *testing.T) {
	topo := `
name: z
hosts: [{name: cpu0, api_overhead: 1 us}]
gpus: [{name: gpu0, model: H100-SXM, copy_overhead: 2 us}]
links: [{ends: [gpu0, cpu0], bandwidth: 10 GB/s, latency: 0.5 us}]
`
	res := simulate(t, topo, `
name: zero
threads:
  - name: main
    ops:
      - kernel: {id: k, stream: gpu0/a, duration: 5 us}
      - copy: {id: c, from: cpu0, to: gpu0, bytes: 0, memory: pageable, stream: gpu0/a}
      - host: {id: last, duration: 10 us}
`)
	if len(res.CriticalPath) != 3 {
		t.Errorf("path %+v; want k's call, c's call, last", res.CriticalPath)
	}
	for _, s := range res.CriticalPath {
		if s.Part == sim.PartStaging {
			t.Errorf("a staging step on the path: %+v", s)
		}
	}
}

// Lint finds, without running, what a run warns of that the program's
// text shows (syncs on a stream or GPU no op uses, waits and syncs on an
// event nothing records), in the run's words and counts; what depends on
// the order ops run in (a wait issued before the event's first record) is
// left to the run.
func TestLintSaysWhatTheTextShows(t *testing.T) {
	sc := mustLoad(t, twoGPUs, `
topology: topo.yaml
name: lint
threads:
  - name: main
    ops:
      - repeat: {count: 4, ops: [{wait: {id: w, event: never, stream: gpu0/s}}, {kernel: {stream: gpu0/s, duration: 1 us}}]}
      - sync: {id: se, event: never}
      - sync: {id: ss, stream: gpu0/typo}
      - sync: {id: ss2, stream: gpu0/typo}
      - sync: {id: sd, device: gpu1}
      - wait: {id: early, event: later, stream: gpu0/s}
      - record: {event: later, stream: gpu0/s}
`)
	lint := sim.Lint(sc.Topology.Machine, sc.Program)
	want := []string{
		"op w#0: waits on event never, which has no record issued before the wait",
		"op se: syncs on event never, which has no record issued before the sync",
		"op ss: syncs stream gpu0/typo, to which no op of the program is issued",
		"op sd: syncs device gpu1, to which no op of the program is issued",
	}
	if len(lint) != len(want) {
		t.Fatalf("lint gives %d warnings, want %d: %q", len(lint), len(want), lint)
	}
	for i, w := range want {
		if !strings.Contains(lint[i], w) {
			t.Errorf("lint warning %d = %q, want it to say %q", i, lint[i], w)
		}
	}
	if !strings.HasSuffix(lint[0], "(and 3 more times from this place)") {
		t.Errorf("lint warning %q does not count the repeat's other 3", lint[0])
	}
	res, err := sim.Run(sc.Topology.Machine, sc.Program)
	if err != nil {
		t.Fatal(err)
	}
	// The run says each of them the same way, and the early wait besides.
	run := strings.Join(res.Warnings, "\n")
	for _, l := range lint {
		if !strings.Contains(run, l) {
			t.Errorf("the run does not say %q; it says:\n%s", l, run)
		}
	}
	if len(res.Warnings) != len(lint)+1 || !strings.Contains(run, "op early: waits on event later") {
		t.Errorf("the run's warnings %q, want lint's and early's", res.Warnings)
	}
}

// What Lint says of a program, a run of it says in the same words and
// counts: random one-thread programs of records, waits and syncs on a few
// streams, events and GPUs (some never used, some never recorded), with
// repeats. Every Lint warning is one of the run's.
func TestLintIsWhatTheRunSays(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 11))
	streams := []string{"gpu0/a", "gpu0/b", "gpu1/a"}
	events := []string{"e1", "e2", "e3"}
	op := func() string {
		s, e := streams[rng.IntN(len(streams))], events[rng.IntN(len(events))]
		switch rng.IntN(7) {
		case 0, 1:
			return fmt.Sprintf("{kernel: {stream: %s, duration: 1 us}}", s)
		case 2:
			return fmt.Sprintf("{record: {event: %s, stream: %s}}", e, s)
		case 3:
			return fmt.Sprintf("{wait: {event: %s, stream: %s}}", e, s)
		case 4:
			return fmt.Sprintf("{sync: {stream: %s}}", s)
		case 5:
			return fmt.Sprintf("{sync: {event: %s}}", e)
		default:
			return fmt.Sprintf("{sync: {device: gpu%d}}", rng.IntN(2))
		}
	}
	warned := 0
	for i := range 200 {
		var ops []string
		for range 1 + rng.IntN(6) {
			if rng.IntN(4) == 0 {
				ops = append(ops, fmt.Sprintf("{repeat: {count: %d, ops: [%s, %s]}}", 1+rng.IntN(3), op(), op()))
			} else {
				ops = append(ops, op())
			}
		}
		scen := "topology: topo.yaml\nname: r\nthreads: [{name: t, ops: [" + strings.Join(ops, ", ") + "]}]\n"
		sc := mustLoad(t, twoGPUs, scen)
		lint := sim.Lint(sc.Topology.Machine, sc.Program)
		res, err := sim.Run(sc.Topology.Machine, sc.Program)
		if err != nil {
			t.Fatalf("program %d: %v\n%s", i, err, scen)
		}
		for _, l := range lint {
			if !slices.Contains(res.Warnings, l) {
				t.Fatalf("program %d: lint says %q; the run says %q\n%s", i, l, res.Warnings, scen)
			}
		}
		warned += len(lint)
	}
	if warned == 0 {
		t.Fatal("no program drew a lint warning: the test tests nothing")
	}
}
