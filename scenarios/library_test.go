package scenarios

import (
	"bytes"
	"flag"
	"fmt"
	"math"
	"os"
	"slices"
	"strings"
	"testing"

	"gpusim/sim"
)

var update = flag.Bool("update", false, "rewrite scenarios/README.md from the studies")

// point is one run of a study.
type point struct {
	vars map[string]string
	res  *sim.Result
}

func (p point) is(kv ...string) bool {
	for i := 0; i+1 < len(kv); i += 2 {
		if p.vars[kv[i]] != kv[i+1] {
			return false
		}
	}
	return true
}

func find(ps []point, kv ...string) *sim.Result {
	for _, p := range ps {
		if p.is(kv...) {
			return p.res
		}
	}
	panic(fmt.Sprintf("no point %v", kv))
}

func ms(t sim.Time) float64 { return t.Seconds() * 1e3 }

// study is one scenario of the library: the figure its table shows, and
// the check of the conclusion its header comment states.
type study struct {
	name   string
	metric string
	value  func(*sim.Result) string
	check  func([]point) error
}

func idleInput(res *sim.Result, g int) float64 {
	return float64(res.GPUs[g].IdleInput) / float64(res.Makespan)
}

// tokensPerS is a training's tokens a second.
func tokensPerS(res *sim.Result) float64 {
	return res.Program.Work.Tokens / res.Makespan.Seconds()
}

// tokensMFUFits is a training's tokens a second, MFU, and whether it fits
// ("no: needs about N GiB" where it does not).
func tokensMFUFits(r *sim.Result) string {
	mfu, _ := r.Program.Work.MFU(r.Makespan)
	fits := "fits"
	if w := memoryWarning(r); w != "" {
		fits = "no: " + w
	}
	return fmt.Sprintf("%.0fk, %.1f%%, %s", tokensPerS(r)/1e3, 100*mfu, fits)
}

// neededGiB is N of a run's memory warning, "needs about N GiB", or 0.
func neededGiB(res *sim.Result) float64 {
	var n float64
	fmt.Sscanf(memoryWarning(res), "needs about %g GiB", &n)
	return n
}

// memoryWarning is "needs about N GiB" from a run's memory warning, or "".
func memoryWarning(res *sim.Result) string {
	for _, w := range res.Warnings {
		if i := strings.Index(w, "needs about "); i >= 0 && strings.Contains(w, "would not fit") {
			if j := strings.Index(w[i:], " GiB"); j >= 0 {
				return w[i : i+j+4]
			}
		}
	}
	return ""
}

// commShare is the share of the makespan GPU g spent in collectives with no
// kernel running.
func commShare(res *sim.Result, g int) float64 {
	return float64(res.GPUs[g].Comm) / float64(res.Makespan)
}

func computeShare(res *sim.Result, g int) float64 {
	return float64(res.GPUs[g].Compute) / float64(res.Makespan)
}

var studies = []study{
	{
		name: "pinned-vs-pageable", metric: "H2D GB/s",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.1f", 8*256*(1<<20)/r.Makespan.Seconds()/1e9) },
		check: func(ps []point) error {
			pin, page := find(ps, "memory", "pinned").Makespan, find(ps, "memory", "pageable").Makespan
			if ratio := float64(page) / float64(pin); ratio < 1.5 {
				return fmt.Errorf("pageable/pinned = %.2f, want at least 1.5", ratio)
			}
			// The thread copies every byte itself: its CPU time is nearly the
			// whole run (all but the last chunk's DMA and the sync).
			r := find(ps, "memory", "pageable")
			if busy := float64(r.Threads[0].CPU) / float64(page); busy < 0.95 {
				return fmt.Errorf("pageable: the thread's CPU time is %.1f%% of the run, want at least 95%%", 100*busy)
			}
			return nil
		},
	},
	{
		name: "gpu-to-gpu-paths", metric: "GB/s",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.1f", float64(1<<30)/r.Makespan.Seconds()/1e9) },
		check: func(ps []point) error {
			nv := find(ps, "topo", "dgx-h100", "dst", "gpu1").Makespan
			p2p := find(ps, "topo", "pcie-4x-l40s", "dst", "gpu1").Makespan
			staged := find(ps, "topo", "pcie-4x-l40s", "dst", "gpu2").Makespan
			if r := float64(staged) / float64(nv); r < 10 {
				return fmt.Errorf("staged/NVLink = %.1f, want at least 10", r)
			}
			if r := float64(staged) / float64(p2p); r < 1.15 {
				return fmt.Errorf("staged/P2P = %.2f, want at least 1.15", r)
			}
			return nil
		},
	},
	{
		name: "dataloader-workers", metric: "gpu0 waiting on input",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.1f%%", 100*idleInput(r, 0)) },
		check: func(ps []point) error {
			if in := idleInput(find(ps, "workers", "1"), 0); in <= 0.5 {
				return fmt.Errorf("1 worker: input wait %.1f%%, want more than half", 100*in)
			}
			for _, w := range []string{"4", "8", "16"} {
				if in := idleInput(find(ps, "workers", w), 0); in >= 0.05 {
					return fmt.Errorf("%s workers: input wait %.1f%%, want under 5%%", w, 100*in)
				}
			}
			return nil
		},
	},
	{
		name: "allreduce-overlap", metric: "step (ms)",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.1f", ms(r.Makespan)/2) },
		check: func(ps []point) error {
			on := find(ps, "topo", "dgx-h100", "overlap", "true", "bucket", "25 MiB").Makespan
			off := find(ps, "topo", "dgx-h100", "overlap", "false", "bucket", "25 MiB").Makespan
			if r := float64(off) / float64(on); r < 1.05 {
				return fmt.Errorf("DGX H100: without/with overlap = %.3f, want at least 1.05", r)
			}
			pc := find(ps, "topo", "pcie-8x-4090", "overlap", "true", "bucket", "25 MiB").Makespan
			if r := float64(pc) / float64(on); r < 3 {
				return fmt.Errorf("RTX 4090 / DGX H100 = %.2f, want at least 3", r)
			}
			for _, b := range []string{"25 MiB", "200 MiB"} {
				on := find(ps, "topo", "pcie-8x-4090", "overlap", "true", "bucket", b).Makespan
				off := find(ps, "topo", "pcie-8x-4090", "overlap", "false", "bucket", b).Makespan
				if r := float64(off) / float64(on); r < 1.2 {
					return fmt.Errorf("RTX 4090, %s buckets: without/with overlap = %.3f, want at least 1.2", b, r)
				}
			}
			return nil
		},
	},
	{
		name: "h100-vs-b200", metric: "step (ms)",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.1f", ms(r.Makespan)/2) },
		check: func(ps []point) error {
			const peaks = 2250 / 989.5 // bf16 TFLOP/s, B200 over H100 SXM (datasheets)
			h := find(ps, "topo", "dgx-h100", "overlap", "true").Makespan
			b := find(ps, "topo", "dgx-b200", "overlap", "true").Makespan
			if r := float64(h) / float64(b); r < 2 || math.Abs(r/peaks-1) > 0.05 {
				return fmt.Errorf("with overlap, H100/B200 step = %.3f, want at least 2 and within 5%% of %.3f", r, peaks)
			}
			hOff := find(ps, "topo", "dgx-h100", "overlap", "false").Makespan
			bOff := find(ps, "topo", "dgx-b200", "overlap", "false").Makespan
			if rh, rb := float64(hOff)/float64(h), float64(bOff)/float64(b); rb <= rh {
				return fmt.Errorf("without/with overlap: B200 %.3f, H100 %.3f; want the B200's larger", rb, rh)
			}
			return nil
		},
	},
	{
		name: "tensor-parallel", metric: "gpu0 in all-reduces",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.1f%%", 100*commShare(r, 0)) },
		check: func(ps []point) error {
			speedup := func(topo string) float64 {
				return float64(find(ps, "topo", topo, "tensor", "2").Makespan) / float64(find(ps, "topo", topo, "tensor", "8").Makespan)
			}
			h, b := speedup("dgx-h100"), speedup("dgx-b200")
			if h < 2.8 || h >= 4 {
				return fmt.Errorf("DGX H100: 8 GPUs %.2fx as fast as 2, want at least 2.8 and under 4", h)
			}
			if b < 2.4 || b >= h {
				return fmt.Errorf("DGX B200: 8 GPUs %.2fx as fast as 2, want at least 2.4 and under the H100's %.2f", b, h)
			}
			return nil
		},
	},
	{
		name: "tp-inference", metric: "ms a token",
		value: func(r *sim.Result) string {
			_, per, _ := r.TokenTimes()
			return fmt.Sprintf("%.2f", ms(per))
		},
		check: func(ps []point) error {
			token := func(topo, tensor, graphs string) float64 {
				_, per, ok := find(ps, "topo", topo, "tensor", tensor, "graphs", graphs).TokenTimes()
				if !ok {
					return math.NaN()
				}
				return float64(per)
			}
			if r := token("dgx-h100", "2", "true") / token("dgx-h100", "8", "true"); !(r >= 1.8 && r < 4) {
				return fmt.Errorf("DGX H100, graphs: 8 GPUs decode %.2fx as fast as 2, want at least 1.8 and under 4", r)
			}
			if r := token("dgx-h100", "8", "false") / token("dgx-h100", "8", "true"); !(r >= 1.5) {
				return fmt.Errorf("DGX H100, 8 GPUs: op by op / graphs = %.2f, want at least 1.5", r)
			}
			if r := token("dgx-h100", "2", "false") / token("dgx-h100", "2", "true"); !(math.Abs(r-1) < 0.05) {
				return fmt.Errorf("DGX H100, 2 GPUs: op by op / graphs = %.3f, want within 5%% of 1", r)
			}
			for _, t := range []string{"2", "4", "8"} {
				if r := token("pcie-8x-4090", t, "false") / token("pcie-8x-4090", t, "true"); !(math.Abs(r-1) < 0.05) {
					return fmt.Errorf("RTX 4090, %s GPUs: op by op / graphs = %.3f, want within 5%% of 1", t, r)
				}
			}
			return nil
		},
	},
	{
		name: "mixture-of-experts", metric: "gpu0 in collectives",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.1f%%", 100*commShare(r, 0)) },
		check: func(ps []point) error {
			h, b, p := find(ps, "topo", "dgx-h100"), find(ps, "topo", "dgx-b200"), find(ps, "topo", "pcie-8x-4090")
			if ch, cb := commShare(h, 0), commShare(b, 0); ch >= 0.25 || cb >= 0.25 || cb <= ch {
				return fmt.Errorf("collectives take %.1f%% of the H100's step and %.1f%% of the B200's; want both under 25%%, the B200's more", 100*ch, 100*cb)
			}
			if cp := commShare(p, 0); cp < 1.0/3 {
				return fmt.Errorf("collectives take %.1f%% of the RTX 4090's step, want at least a third", 100*cp)
			}
			if r := float64(p.Makespan) / float64(h.Makespan); r < 5 {
				return fmt.Errorf("RTX 4090 / DGX H100 = %.2f, want at least 5", r)
			}
			return nil
		},
	},
	{
		name: "activation-recompute", metric: "fits in 80 GiB",
		value: func(r *sim.Result) string {
			if w := memoryWarning(r); w != "" {
				return "no: " + w
			}
			return "yes"
		},
		check: func(ps []point) error {
			for _, c := range []struct {
				recompute, batch string
				fits             bool
			}{{"none", "4", true}, {"none", "8", false}, {"full", "16", true}} {
				if w := memoryWarning(find(ps, "recompute", c.recompute, "batch", c.batch)); (w == "") != c.fits {
					return fmt.Errorf("recompute %s, batch %s: fits %v (%q), want %v", c.recompute, c.batch, w == "", w, c.fits)
				}
			}
			for _, batch := range []string{"2", "4", "8", "16"} {
				none, full := find(ps, "recompute", "none", "batch", batch).Makespan, find(ps, "recompute", "full", "batch", batch).Makespan
				if r := float64(full) / float64(none); r < 1.265 || r >= 1.345 {
					return fmt.Errorf("batch %s: full/none = %.3f, want 27%% to 34%% more", batch, r)
				}
			}
			perSample := float64(find(ps, "recompute", "full", "batch", "16").Makespan) / 16 / (float64(find(ps, "recompute", "none", "batch", "4").Makespan) / 4)
			if perSample < 1.15 || perSample > 1.25 {
				return fmt.Errorf("a sample at 16 with recomputation / at 4 without = %.3f, want 1.15 to 1.25", perSample)
			}
			return nil
		},
	},
	{
		name: "pipeline-stages", metric: "tokens/s, MFU, fits",
		value: tokensMFUFits,
		check: func(ps []point) error {
			tps := func(topo, stages string) float64 { return tokensPerS(find(ps, "topo", topo, "stages", stages)) }
			for _, st := range []string{"1", "2", "4", "8"} {
				if w := memoryWarning(find(ps, "topo", "dgx-h100", "stages", st)); w != "" {
					return fmt.Errorf("DGX H100, %s stages: %s, want it to fit", st, w)
				}
				fits := memoryWarning(find(ps, "topo", "pcie-8x-4090", "stages", st)) == ""
				if want := st == "4" || st == "8"; fits != want {
					return fmt.Errorf("RTX 4090, %s stages: fits %v, want %v", st, fits, want)
				}
			}
			for _, pair := range [][2]string{{"1", "2"}, {"2", "4"}, {"4", "8"}} {
				if a, b := tps("dgx-h100", pair[0]), tps("dgx-h100", pair[1]); a <= b {
					return fmt.Errorf("DGX H100: %s stages %.0f tokens/s, %s stages %.0f; want fewer stages faster", pair[0], a, pair[1], b)
				}
			}
			if r := tps("pcie-8x-4090", "4") / tps("pcie-8x-4090", "8"); r < 1.25 || r > 1.35 {
				return fmt.Errorf("RTX 4090: 4 stages / 8 stages = %.3f tokens/s, want about 1.3", r)
			}
			return nil
		},
	},
	{
		name: "interleaved-stages", metric: "tokens/s, MFU, fits",
		value: tokensMFUFits,
		check: func(ps []point) error {
			for _, topo := range []string{"dgx-h100", "pcie-8x-4090"} {
				for _, m := range []string{"8", "32"} {
					tps := func(v string) float64 { return tokensPerS(find(ps, "topo", topo, "micro", m, "chunks", v)) }
					if a, b, c := tps("1"), tps("2"), tps("4"); a >= b || b >= c {
						return fmt.Errorf("%s, %s micro-batches: %.0f, %.0f, %.0f tokens/s with 1, 2, 4 chunks; want more with more", topo, m, a, b, c)
					}
					// The bubble model: (m + 7) / (m + 7/4) times faster.
					gain, model := tps("4")/tps("1"), 15/(8+7.0/4)
					switch {
					case m == "8" && (gain <= 1.25 || gain >= math.Min(1.35, model)):
						return fmt.Errorf("%s, 8 micro-batches: 4 chunks %.3fx 1, want about 1.3, under the bubble model's %.3f", topo, gain, model)
					case m == "32" && (gain <= 1.05 || gain >= 1.15):
						return fmt.Errorf("%s, 32 micro-batches: 4 chunks %.3fx 1, want about 1.1", topo, gain)
					}
				}
			}
			return nil
		},
	},
	{
		name: "zero-stages", metric: "tokens/s, MFU, fits",
		value: tokensMFUFits,
		check: func(ps []point) error {
			tps := func(topo, z string) float64 { return tokensPerS(find(ps, "topo", topo, "sharding", z)) }
			fits := func(topo, z string) bool { return memoryWarning(find(ps, "topo", topo, "sharding", z)) == "" }
			for _, z := range []string{"none", "zero1", "zero2", "zero3"} {
				if want := z != "none"; !fits("dgx-h100", z) || fits("pcie-8x-4090", z) != want {
					return fmt.Errorf("%s: fits %v on the DGX H100 and %v on the 4090s, want true and %v", z, fits("dgx-h100", z), fits("pcie-8x-4090", z), want)
				}
			}
			h := func(z string) float64 { return tps("dgx-h100", z) }
			if !(h("zero1") > h("zero2") && h("zero1") > h("none") && min(h("zero2"), h("none")) > h("zero3")) {
				return fmt.Errorf("DGX H100: %.0f, %.0f, %.0f, %.0f tokens/s with none, zero1, zero2, zero3; want zero1 the fastest, zero3 the slowest", h("none"), h("zero1"), h("zero2"), h("zero3"))
			}
			g := func(z string) float64 { return tps("pcie-8x-4090", z) / tps("pcie-8x-4090", "none") }
			if g("zero1") < 0.95 || g("zero2") < 0.95 || g("zero3") > 0.9 {
				return fmt.Errorf("RTX 4090: zero1 %.3f, zero2 %.3f, zero3 %.3f of none's tokens/s; want zero1 and zero2 over 0.95, zero3 under 0.9", g("zero1"), g("zero2"), g("zero3"))
			}
			if need := neededGiB(find(ps, "topo", "pcie-8x-4090", "sharding", "none")); need < 26 || need > 28 {
				return fmt.Errorf("RTX 4090 without sharding: needs %g GiB, want about 27", need)
			}
			return nil
		},
	},
	{
		name: "pipeline-split", metric: "tokens/s, MFU, fits",
		value: tokensMFUFits,
		check: func(ps []point) error {
			for _, topo := range []string{"dgx-h100", "pcie-8x-4090"} {
				last := 1.0
				for _, st := range []string{"2", "4", "8"} {
					gain := tokensPerS(find(ps, "topo", topo, "stages", st, "split", "balanced")) / tokensPerS(find(ps, "topo", topo, "stages", st, "split", "even"))
					if gain <= last {
						return fmt.Errorf("%s, %s stages: balanced %.4fx even, want faster, and more so than with fewer stages (%.4fx)", topo, st, gain, last)
					}
					if st == "2" && (gain < 1.01 || gain > 1.02) || st == "8" && (gain < 1.04 || gain > 1.08) {
						return fmt.Errorf("%s, %s stages: balanced %.4fx even, want about 1.015 with 2 stages, 1.06 with 8", topo, st, gain)
					}
					last = gain
					fits := memoryWarning(find(ps, "topo", topo, "stages", st, "split", "balanced")) == ""
					if want := topo == "dgx-h100" || st != "2"; fits != want || (memoryWarning(find(ps, "topo", topo, "stages", st, "split", "even")) == "") != want {
						return fmt.Errorf("%s, %s stages: balanced fits %v, want %v either way", topo, st, fits, want)
					}
				}
			}
			even := neededGiB(find(ps, "topo", "pcie-8x-4090", "stages", "2", "split", "even"))
			bal := neededGiB(find(ps, "topo", "pcie-8x-4090", "stages", "2", "split", "balanced"))
			if bal <= even || bal < 27 || bal > 28 {
				return fmt.Errorf("RTX 4090, 2 stages: balanced needs %g GiB, even %g; want balanced about 27.5, more", bal, even)
			}
			return nil
		},
	},
	{
		name: "parallel-layout", metric: "tokens/s, MFU",
		value: func(r *sim.Result) string {
			mfu, _ := r.Program.Work.MFU(r.Makespan)
			return fmt.Sprintf("%.0fk, %.1f%%", tokensPerS(r)/1e3, 100*mfu)
		},
		check: func(ps []point) error {
			layouts := []string{"tensor=8 stages=1", "tensor=4 stages=2", "tensor=2 stages=4", "tensor=1 stages=8"}
			best := func(topo string) (string, float64) {
				top, v := "", 0.0
				for _, l := range layouts {
					if x := tokensPerS(find(ps, "topo", topo, "layout", l)); x > v {
						top, v = l, x
					}
				}
				return top, v / tokensPerS(find(ps, "topo", topo, "layout", layouts[0]))
			}
			if l, r := best("dgx-h100"); l != "tensor=2 stages=4" || r < 1.3 {
				return fmt.Errorf("DGX H100: %s moves the most tokens, %.2fx tensor 8; want tensor=2 stages=4, at least 1.3x", l, r)
			}
			if l, r := best("pcie-8x-4090"); l != "tensor=1 stages=8" || r < 2.4 {
				return fmt.Errorf("RTX 4090: %s moves the most tokens, %.2fx tensor 8; want tensor=1 stages=8, at least 2.4x", l, r)
			}
			return nil
		},
	},
	{
		name: "launch-bound", metric: "ms",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.2f", ms(r.Makespan)) },
		check: func(ps []point) error {
			eager, graph := find(ps, "kernel", "2 us", "graph", "false").Makespan, find(ps, "kernel", "2 us", "graph", "true").Makespan
			if r := float64(eager) / float64(graph); r < 1.3 {
				return fmt.Errorf("2 us kernels: eager/graph = %.2f, want at least 1.3", r)
			}
			eager, graph = find(ps, "kernel", "20 us", "graph", "false").Makespan, find(ps, "kernel", "20 us", "graph", "true").Makespan
			if r := float64(eager) / float64(graph); math.Abs(r-1) >= 0.05 {
				return fmt.Errorf("20 us kernels: eager/graph = %.3f, want within 5%% of 1", r)
			}
			return nil
		},
	},
	{
		name: "numa-near-far", metric: "GB/s per GPU",
		value: func(r *sim.Result) string { return fmt.Sprintf("%.1f", 8*256*(1<<20)/r.Makespan.Seconds()/1e9) },
		check: func(ps []point) error {
			near, far := find(ps, "from", "cpu0").Makespan, find(ps, "from", "cpu1").Makespan
			if r := float64(far) / float64(near); r < 1.5 {
				return fmt.Errorf("far/near = %.2f, want at least 1.5", r)
			}
			return nil
		},
	},
	{
		name: "dp-scaling", metric: "scaling efficiency",
		value: nil, // filled per row below
		check: func(ps []point) error {
			one, eight := find(ps, "gpus", "1").Makespan, find(ps, "gpus", "8").Makespan
			if r := float64(eight) / float64(one); r >= 1.10 {
				return fmt.Errorf("8-GPU step / 1-GPU step = %.3f, want under 1.10", r)
			}
			return nil
		},
	},
	{
		name: "pipeline-bubble", metric: "bubble (model: (p-1)/(vm+p-1))",
		value: nil,
		check: func(ps []point) error {
			for _, p := range ps {
				m := 0
				fmt.Sscan(p.vars["microbatches"], &m)
				want := 3.0 / float64(chunksOf(p.vars["schedule"])*m+3)
				if got := 1 - computeShare(p.res, 0); math.Abs(got-want) > 0.01 {
					return fmt.Errorf("%s, %d micro-batches: bubble %.4f, want %.4f within 0.01", p.vars["schedule"], m, got, want)
				}
				if p.vars["schedule"] != "interleaved" {
					continue
				}
				// Faster than 1F1B by the bubble saved, within 5%: the
				// schedules' bubbles are 3 x 30 ms and half that.
				one := ps[slices.IndexFunc(ps, func(q point) bool {
					return q.vars["schedule"] == "1f1b" && q.vars["microbatches"] == p.vars["microbatches"]
				})].res.Makespan
				saved := 45 * sim.Millisecond
				if r := float64(one-p.res.Makespan) / float64(saved); r < 0.95 || r > 1.05 {
					return fmt.Errorf("%d micro-batches: interleaved %s against 1F1B's %s, want faster by the %s of bubble saved, within 5%%", m, p.res.Makespan, one, saved)
				}
			}
			return nil
		},
	},
}

// chunksOf is the model chunks a GPU runs in pipeline-bubble's schedule:
// the interleaved schedule's default of 2, else 1.
func chunksOf(schedule string) int {
	if schedule == "interleaved" {
		return 2
	}
	return 1
}

// header returns a study's question and answer from its header comment.
func header(src []byte) (question, answer string) {
	var q, a []string
	inAnswer := false
	for _, line := range strings.Split(string(src), "\n") {
		if !strings.HasPrefix(line, "#") {
			break
		}
		text := strings.TrimSpace(strings.TrimPrefix(line, "#"))
		switch {
		case strings.HasPrefix(text, "Study: "):
			q = append(q, strings.TrimPrefix(text, "Study: "))
		case strings.HasPrefix(text, "Answer (asserted by TestLibrary): "):
			inAnswer = true
			a = append(a, strings.TrimPrefix(text, "Answer (asserted by TestLibrary): "))
		case inAnswer:
			a = append(a, text)
		case len(a) == 0 && len(q) == 1 && !strings.Contains(strings.Join(q, " "), "?"):
			q = append(q, text)
		}
	}
	return strings.Join(q, " "), strings.Join(a, " ")
}

// TestLibrary runs every point of every study in scenarios/, checks the
// conclusion each states in its header, and requires scenarios/README.md to
// be what the studies produce (go test ./scenarios -run TestLibrary -update
// rewrites it).
func TestLibrary(t *testing.T) {
	var readme bytes.Buffer
	readme.WriteString("# Scenario library\n\n")
	readme.WriteString("Each study answers one question from a few lines of YAML. Its header comment states the question\n")
	readme.WriteString("and the answer; `TestLibrary` (scenarios/library_test.go) runs every point of its sweep and asserts\n")
	readme.WriteString("the answer. The tables below are generated by `go test ./scenarios -run TestLibrary -update`;\n")
	readme.WriteString("their columns are read from each point's result (`gpusim run --json`), so `gpusim sweep\n")
	readme.WriteString("scenarios/NAME.yaml`, which runs the same points, prints its own columns. The `hw-*` scenarios\n")
	readme.WriteString("are not studies: they are what `gpusim replay` runs on a GPU ([docs/hardware.md](../docs/hardware.md)).\n")
	for _, st := range studies {
		src, err := os.ReadFile(st.name + ".yaml")
		if err != nil {
			t.Fatal(err)
		}
		base, err := Load(st.name+".yaml", src, Options{ReadFile: readShipped})
		if err != nil {
			t.Fatalf("%s: %v", st.name, err)
		}
		var ps []point
		for _, pt := range Points(base.Sweep) {
			set := pt.Set(base.Sweep)
			sc, err := Load(st.name+".yaml", src, Options{ReadFile: readShipped, Set: set})
			if err != nil {
				t.Fatalf("%s %v: %v", st.name, set, err)
			}
			res, err := sim.Run(sc.Topology.Machine, sc.Program)
			if err != nil {
				t.Fatalf("%s %v: %v", st.name, set, err)
			}
			ps = append(ps, point{vars: set, res: res})
		}
		if err := st.check(ps); err != nil {
			t.Errorf("%s: the conclusion in its header does not hold: %v", st.name, err)
		}
		q, a := header(src)
		fmt.Fprintf(&readme, "\n## [%s](%s.yaml)\n\n**%s**\n\n%s\n\n", st.name, st.name, q, a)
		fmt.Fprint(&readme, "|")
		for _, sv := range base.Sweep {
			fmt.Fprintf(&readme, " %s |", sv.Name)
		}
		fmt.Fprintf(&readme, " makespan | %s | bottleneck |\n|", st.metric)
		for range base.Sweep {
			fmt.Fprint(&readme, "---|")
		}
		fmt.Fprint(&readme, "---|---|---|\n")
		for _, p := range ps {
			fmt.Fprint(&readme, "|")
			for _, sv := range base.Sweep {
				fmt.Fprintf(&readme, " %s |", p.vars[sv.Name])
			}
			var v string
			switch {
			case st.value != nil:
				v = st.value(p.res)
			case st.name == "dp-scaling":
				one := find(ps, "gpus", "1").Makespan
				v = fmt.Sprintf("%.1f%%", 100*float64(one)/float64(p.res.Makespan))
			case st.name == "pipeline-bubble":
				m := 0
				fmt.Sscan(p.vars["microbatches"], &m)
				v = fmt.Sprintf("%.1f%% (%.1f%%)", 100*(1-computeShare(p.res, 0)), 100*3.0/float64(chunksOf(p.vars["schedule"])*m+3))
			}
			fmt.Fprintf(&readme, " %s | %s | %s |\n", p.res.Makespan, v, p.res.Bottleneck())
		}
	}
	if *update {
		if err := os.WriteFile("README.md", readme.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	committed, err := os.ReadFile("README.md")
	if err != nil || !bytes.Equal(committed, readme.Bytes()) {
		t.Error("scenarios/README.md is stale: run go test ./scenarios -run TestLibrary -update")
	}
}
