package models

import (
	"math"
	"strings"
	"testing"

	"gpusim/sim"
)

func TestPresetsAreComplete(t *testing.T) {
	for _, name := range GPUNames() {
		g, ok := LookupGPU(name)
		if !ok {
			t.Fatalf("%s not found", name)
		}
		if len(g.Peak) == 0 || !(g.MemoryBandwidth > 0) || g.SMs <= 0 || g.CopyEngines <= 0 || g.MemoryBytes <= 0 {
			t.Errorf("%s: incomplete preset %+v", name, g)
		}
		if _, ok := LookupLink(g.PCIe); !ok {
			t.Errorf("%s: unknown PCIe type %q", name, g.PCIe)
		}
		if g.NVLinks > 0 {
			if _, ok := LookupLink(g.NVLinkGen); !ok {
				t.Errorf("%s: unknown NVLink generation %q", name, g.NVLinkGen)
			}
		}
		if !(g.ComputeEfficiency > 0 && g.ComputeEfficiency <= 1 && g.MemoryEfficiency > 0 && g.MemoryEfficiency <= 1) {
			t.Errorf("%s: efficiencies %g, %g", name, g.ComputeEfficiency, g.MemoryEfficiency)
		}
	}
	for _, name := range LinkNames() {
		l, _ := LookupLink(name)
		if !(l.Bandwidth() > 0) || l.Efficiency > 1 {
			t.Errorf("%s: bandwidth %g, efficiency %g", name, l.Bandwidth(), l.Efficiency)
		}
	}
	// Lookups are case-insensitive and hand out copies.
	a, _ := LookupGPU("h100-sxm")
	a.Peak[BF16] = 1
	if b, _ := LookupGPU("H100-SXM"); b.Peak[BF16] != 989.5e12 {
		t.Errorf("changing a looked-up preset changed the preset: %g", b.Peak[BF16])
	}
}

func TestKernelTimeIsARoofline(t *testing.T) {
	g := GPU{Name: "toy", Peak: map[DType]float64{FP16: 100e12}, MemoryBandwidth: 1e12,
		ComputeEfficiency: 0.5, MemoryEfficiency: 0.5, KernelOverhead: 2 * sim.Microsecond}
	for _, tc := range []struct {
		flops, bytes, share float64
		want                sim.Time
	}{
		{50e9, 0, 1, 1002 * sim.Microsecond},      // 50 GFLOP at 50 TFLOP/s: 1 ms, + 2 us
		{50e9, 1e9, 1, 2002 * sim.Microsecond},    // 1 GB at 0.5 TB/s: 2 ms bounds it
		{0, 0, 1, 2 * sim.Microsecond},            // only the overhead
		{0, 0.25e9, 1, 502 * sim.Microsecond},     // memory only, no dtype needed
		{100e9, 0.5e9, 1, 2002 * sim.Microsecond}, // 2 ms compute vs 1 ms memory
		// A quarter of the SMs computes at a quarter of the peak and
		// reaches a quarter of the bandwidth: 4 ms and 8 ms.
		{50e9, 0, 0.25, 4002 * sim.Microsecond},
		{50e9, 1e9, 0.25, 8002 * sim.Microsecond},
		{0, 0.25e9, 0.5, 1002 * sim.Microsecond},
	} {
		got, err := KernelTime(g, tc.flops, FP16, tc.bytes, tc.share)
		if err != nil || got != tc.want {
			t.Errorf("KernelTime(%g FLOP, %g B, share %g) = %v, %v; want %v", tc.flops, tc.bytes, tc.share, got, err, tc.want)
		}
	}
	// Which side sets the time: 50 GFLOP take 1 ms; 0.25 GB 0.5 ms, 1 GB 2 ms.
	for _, tc := range []struct {
		flops, bytes float64
		want         bool
	}{
		{50e9, 0.25e9, false}, {50e9, 1e9, true}, {50e9, 0.5e9, false}, // a tie is compute's
		{0, 1, true}, {1, 0, false}, {0, 0, false},
	} {
		if got := MemoryBound(g, tc.flops, FP16, tc.bytes); got != tc.want {
			t.Errorf("MemoryBound(%g FLOP, %g B) = %v, want %v", tc.flops, tc.bytes, got, tc.want)
		}
	}
	if _, err := KernelTime(g, 1, BF16, 0, 1); err == nil || !strings.Contains(err.Error(), "toy has no bf16 rate (it has: fp16)") {
		t.Errorf("unsupported dtype: %v", err)
	}
	if _, err := KernelTime(g, 1e30, FP16, 0, 1); err == nil {
		t.Error("a kernel past the time range is not an error")
	}
	for _, share := range []float64{0, -1, 1.5, math.NaN()} {
		if _, err := KernelTime(g, 1, FP16, 0, share); err == nil {
			t.Errorf("SM share %g is not an error", share)
		}
	}
}

// TestTreeCorrectionStopsAt512MiB: NCCL multiplies tree all-reduce
// bandwidth by treeCorrectionFactor[p][log2(bytes/64)] only while that
// index is below 23 (methods.md §1.5): 256 MiB (index 22) takes the
// table's Simple .9, 512 MiB (index 23) and more none.
func TestTreeCorrectionStopsAt512MiB(t *testing.T) {
	for _, c := range []struct {
		bytes int64
		want  float64
	}{{256 << 20, .9}, {512<<20 - 1, .9}, {512 << 20, 1}, {1 << 30, 1}, {1 << 40, 1}, {63, 1}, {64 * 16, .9}} {
		if got := treeCorrectionFactor(protoSimple, c.bytes); got != c.want {
			t.Errorf("Simple at %d bytes: %g, want %g", c.bytes, got, c.want)
		}
	}
}
