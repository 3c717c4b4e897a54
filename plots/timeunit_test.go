package plots

import (
	"testing"

	"gpusim/sim"
)

// TestTimeUnit: a time axis is in the largest unit in which its span is 1
// or more, so that its tick labels stay under 1000: a 5 ms run reads 0 to
// 5 ms, not 0 to 5000 us.
func TestTimeUnit(t *testing.T) {
	for _, c := range []struct {
		span sim.Time
		unit string
	}{
		{500 * sim.Nanosecond, "ns"},
		{999 * sim.Nanosecond, "ns"},
		{sim.Microsecond, "us"},
		{999 * sim.Microsecond, "us"},
		{sim.Millisecond, "ms"},
		{5 * sim.Millisecond, "ms"},
		{999 * sim.Millisecond, "ms"},
		{1500 * sim.Millisecond, "s"},
	} {
		unit, scale := timeUnit(c.span)
		if unit != c.unit {
			t.Errorf("timeUnit(%s) = %s, want %s", c.span, unit, c.unit)
		}
		if v := float64(c.span) / scale; v < 1 && unit != "ns" || v >= 1000 && unit != "s" {
			t.Errorf("timeUnit(%s): the span is %g %s", c.span, v, unit)
		}
	}
}
