package sim_test

import (
	"bytes"
	"strconv"
	"strings"
	"testing"

	"gpusim/sim"
)

// The topology of TestPeerToPeerVsHostStaged: 10 GB/s links, no latency
// or copy overhead, 1 MiB staging chunks over two buffers, with the
// driver's handoff of 10 us before each chunk's second DMA; P2P is off at
// the switch, so GPU-to-GPU copies are staged through cpu0.
var coalesceTopo = strings.Replace(strings.Replace(strings.Replace(twoGPUs, bareHost, stagingHost, 1),
	"{name: sw0}", "{name: sw0, p2p: false}", 1), "staging_handoff: 0 us", "staging_handoff: 10 us", 1)

func copyScenario(from, to, size, memory string) string {
	mem := ""
	if memory != "" {
		mem = ", memory: " + memory
	}
	return `
name: long
topology: topo.yaml
threads:
  - name: main
    ops:
      - copy: {id: c, from: ` + from + `, to: ` + to + `, bytes: ` + size + mem + `, stream: gpu0/a}
`
}

func jsonOf(t *testing.T, res *sim.Result) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := sim.WriteJSON(&b, res); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCopyUpToTheBoundRunsChunkByChunk: a copy of as many chunks as the
// bound (16,384 chunks of 1 MiB) runs exactly as it did before long copies
// were coalesced: every byte of the result is the same as chunk by chunk.
// The staged copy also takes what TestPeerToPeerVsHostStaged's formula says:
// the second leg (T + h a chunk, T = 1 MiB at 10 GB/s, h = 10 us) starts
// after the first chunk's first leg: T + N(T + h).
func TestCopyUpToTheBoundRunsChunkByChunk(t *testing.T) {
	if sim.CoalesceAbove != 16384 {
		t.Fatalf("the bound is %d chunks; this test's numbers are for 16384", sim.CoalesceAbove)
	}
	const n = 16384
	size := strconv.Itoa(n) + " MiB"
	for _, tc := range []struct{ from, to, memory string }{
		{"gpu0", "gpu1", ""},
		{"cpu0", "gpu0", "pageable"},
		{"gpu0", "cpu0", "pageable"},
	} {
		sc := mustLoad(t, coalesceTopo, copyScenario(tc.from, tc.to, size, tc.memory))
		m, p := sc.Topology.Machine, sc.Program
		got, err := sim.Run(m, p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := sim.RunChunkByChunk(m, p)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(jsonOf(t, got), jsonOf(t, want)) {
			t.Errorf("%s -> %s %s, %d chunks: the result differs from chunk by chunk", tc.from, tc.to, tc.memory, n)
		}
		if tc.from == "gpu0" && tc.to == "gpu1" {
			T := 1048576.0 / 10e9 * 1e6
			near(t, "staged end", op(t, got, "c").End, us(T+n*(T+10)), us(0.01))
		}
	}
}

// TestLongCopiesAreCoalesced: copies far past the bound finish in a bounded
// number of events, at the steady rate of their chunk pipeline.
func TestLongCopiesAreCoalesced(t *testing.T) {
	T := 1048576.0 / 10e9 * 1e6 // us: a 1 MiB DMA at 10 GB/s
	cp := 1048576.0 / 5e9 * 1e6 // us: a 1 MiB memcpy at 5 GB/s
	const h = 10.0              // us: the staging handoff
	// 1 PiB is N = 2^30 chunks of 1 MiB. Coalesced, the first and last 1024
	// chunks stay chunks and the N - 2048 between them are taken in at most
	// 16384 - 2048 = 14336 runs: ceil((2^30 - 2048) / 14336) = 74898 chunks
	// a run. Where the runs begin, the pipeline fills again (the second
	// stage waits for the first stage's first run), and where they end it
	// drains again (the first stage, at most two pieces ahead, waits for
	// the second stage's last run): the end is about one run of one stage
	// (74898 chunk times) past the chunk-by-chunk formula, 1/14336 of it.
	// We allow two runs of the slower stage.
	const n = 1 << 30
	const run = 74898.0
	for _, tc := range []struct {
		name, from, to, memory string
		want, tol              float64 // us
	}{
		// Staged GPU to GPU: the second leg (T + h a chunk) is the slower;
		// it starts after the first chunk's first leg.
		{"staged", "gpu0", "gpu1", "", T + n*(T+h), 2 * run * (T + h)},
		// Pageable H2D: the memcpy (5 GB/s) is slower than the DMA; the
		// last chunk's DMA follows the last memcpy.
		{"pageable H2D", "cpu0", "gpu0", "pageable", n*cp + T, 2 * run * cp},
		// Pageable D2H: the first chunk's DMA, then the memcpys out.
		{"pageable D2H", "gpu0", "cpu0", "pageable", T + n*cp, 2 * run * cp},
	} {
		res := simulate(t, coalesceTopo, copyScenario(tc.from, tc.to, "1 PiB", tc.memory))
		c := op(t, res, "c")
		near(t, tc.name+" end", c.End, us(tc.want), us(tc.tol))
		// At most 16384 pieces a stage, each a delay (DMAs), a flow's end
		// and a solve: 6 events a piece for two stages, and a few for the
		// op itself.
		if max := uint64(6*16384 + 16); res.Events > max {
			t.Errorf("%s: %d events, want at most %d", tc.name, res.Events, max)
		}
		// The link carried every byte once per leg that crosses it.
		if tc.name == "staged" {
			if got := linkDir(t, res, "gpu0", "sw0").Used; got < 0.999999*(1<<50) || got > 1.000001*(1<<50) {
				t.Errorf("staged: gpu0 -> sw0 carried %g bytes, want 2^50", got)
			}
		}
		// The thread's memcpys are its CPU time: N chunk memcpys.
		if tc.memory == "pageable" {
			near(t, tc.name+" CPU", res.Threads[0].CPU, us(n*cp), us(tc.tol))
		}
	}
}

// TestCoalescingJustPastTheBound: a copy one chunk past the bound, the first
// that is coalesced (runs of 2 chunks), ends within one run of its
// chunk-by-chunk end.
func TestCoalescingJustPastTheBound(t *testing.T) {
	sc := mustLoad(t, coalesceTopo, copyScenario("gpu0", "gpu1", "16385 MiB", ""))
	m, p := sc.Topology.Machine, sc.Program
	got, err := sim.Run(m, p)
	if err != nil {
		t.Fatal(err)
	}
	want, err := sim.RunChunkByChunk(m, p)
	if err != nil {
		t.Fatal(err)
	}
	T := 1048576.0 / 10e9 * 1e6
	near(t, "end", op(t, got, "c").End, op(t, want, "c").End, us(2*(T+10)))
	if got.Events >= want.Events {
		t.Errorf("coalesced: %d events, chunk by chunk %d; want fewer", got.Events, want.Events)
	}
}
