package scenarios

import (
	"fmt"
	"strings"
	"testing"
)

// sweepSource is quickstart with a sweep of n batch sizes: a small
// scenario, so loading dominates each point's cost.
func sweepSource(b *testing.B, n int) []byte {
	src, ok := ShippedSource("quickstart")
	if !ok {
		b.Fatal("quickstart is not shipped")
	}
	vals := make([]string, n)
	for i := range vals {
		vals[i] = fmt.Sprintf("%d MiB", i+1)
	}
	return []byte(string(src) + "sweep:\n  batch: [" + strings.Join(vals, ", ") + "]\n")
}

// BenchmarkLoadPoint loads one point of a 10,000-value sweep, as gpusim
// sweep and validate do for each point: parsing the file each time
// (Load), or once (Source.Load).
func BenchmarkLoadPoint(b *testing.B) {
	data := sweepSource(b, 10000)
	opt := Options{ReadFile: readShipped}
	base, err := Load("q.yaml", data, opt)
	if err != nil {
		b.Fatal(err)
	}
	points := Points(base.Sweep)
	b.Run("parse-each", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			opt.Point = points[i%len(points)].Set(base.Sweep)
			if _, err := Load("q.yaml", data, opt); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parse-once", func(b *testing.B) {
		src, err := Parse("q.yaml", data)
		if err != nil {
			b.Fatal(err)
		}
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			opt.Point = points[i%len(points)].Set(base.Sweep)
			if _, err := src.Load(opt); err != nil {
				b.Fatal(err)
			}
		}
	})
}
