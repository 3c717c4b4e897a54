package plots_test

import (
	"io"
	"testing"

	"gpusim/plots"
	"gpusim/topologies"
)

// The shipped DGX H100 (8 GPUs on an NVSwitch); one thread per GPU, 12,500
// ops each: kernels of 5-20 us and a 1 MiB copy to the next GPU, 100,000 ops.
func eightGPU() string {
	src, _ := topologies.ShippedSource("dgx-h100")
	return string(src)
}

func benchScenario() string {
	s := "name: many\ntopology: topo.yaml\nthreads:\n"
	for g := 0; g < 8; g++ {
		next := (g + 1) % 8
		s += "  - name: t" + string(rune('0'+g)) + "\n    host: cpu0\n    ops:\n      - repeat:\n          count: 3125\n          ops:\n" +
			"            - kernel: {stream: gpu" + string(rune('0'+g)) + "/s, duration: 5 us}\n" +
			"            - kernel: {stream: gpu" + string(rune('0'+g)) + "/s, duration: 20 us}\n" +
			"            - copy: {from: gpu" + string(rune('0'+g)) + ", to: gpu" + string(rune('0'+next)) + ", bytes: 1 MiB, stream: gpu" + string(rune('0'+g)) + "/s}\n" +
			"            - kernel: {stream: gpu" + string(rune('0'+g)) + "/s, duration: 10 us}\n"
	}
	return s
}

// BenchmarkTimeline100k draws and renders to PNG the timeline of a run of
// 100,000 ops (the bar: under 5 s on one core).
func BenchmarkTimeline100k(b *testing.B) {
	res := run(b, eightGPU(), benchScenario())
	if len(res.Ops) != 100000 {
		b.Fatalf("%d ops, want 100000", len(res.Ops))
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		p, info, err := plots.Timeline(res, plots.TimelineOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := plots.Write(io.Discard, p, plots.TimelineWidth, info.Height, "png"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(len(res.Ops))*float64(b.N)/b.Elapsed().Seconds(), "ops/s")
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/timeline")
}

// BenchmarkUtilization100k draws and renders the utilization plots of the
// same run.
func BenchmarkUtilization100k(b *testing.B) {
	res := run(b, eightGPU(), benchScenario())
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		ps, err := plots.Utilization(res, "", 0)
		if err != nil {
			b.Fatal(err)
		}
		if err := plots.WriteTiles(io.Discard, ps, plots.TimelineWidth, plots.Pixels(420), "png"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "s/plot")
}
