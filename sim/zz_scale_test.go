package sim_test

import (
	"os"
	"testing"

	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

func BenchmarkScaleProbe(b *testing.B) {
	data, _ := os.ReadFile("/tmp/mid-ar.yaml")
	sc, err := scenarios.Load("mid.yaml", data, scenarios.Options{ReadFile: func(p string) ([]byte, error) {
		src, _ := topologies.ShippedSource("dgx-h100")
		return src, nil
	}})
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res, err := sim.Run(sc.Topology.Machine, sc.Program)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Events), "events")
	}
	b.ReportMetric(float64(sc.Program.NumOps()), "ops")
}
