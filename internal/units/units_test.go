package units

import (
	"math"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind Kind
		want float64
	}{
		{"450 GB/s", Bandwidth, 450e9},
		{"25 GiB/s", Bandwidth, 25 * 1024 * 1024 * 1024},
		{"400 Gb/s", Bandwidth, 50e9},
		{"400 Gbps", Bandwidth, 50e9},
		{"12GB/s", Bandwidth, 12e9},
		{"1e9", Bandwidth, 1e9},
		{"256 MiB", Bytes, 256 << 20},
		{"4 GiB", Bytes, 4 << 30},
		{"100 MB", Bytes, 1e8},
		{"2 PiB", Bytes, 2 << 50},
		{"4 EiB", Bytes, 4 << 60},
		{"1 EB", Bytes, 1e18},
		{"8 b", Bytes, 1},
		{"1.5 us", Duration, 1.5e-6},
		{"3 µs", Duration, 3e-6},
		{"250ns", Duration, 250e-9},
		{"2 min", Duration, 120},
		{"0.5", Duration, 0.5},
		{"989 TFLOP/s", FLOPRate, 989e12},
		{"989 TFLOPS", FLOPRate, 989e12},
		{"20 TFLOP", FLOPs, 20e12},
		{"2 EFLOP", FLOPs, 2e18},
		{"3 GFLOPs", FLOPs, 3e9},
		{"-2 GB/s", Bandwidth, -2e9},
	} {
		got, err := Parse(tc.in, tc.kind)
		if err != nil {
			t.Errorf("Parse(%q, %v): %v", tc.in, tc.kind, err)
			continue
		}
		if math.Abs(got-tc.want) > 1e-9*math.Abs(tc.want) {
			t.Errorf("Parse(%q, %v) = %g, want %g", tc.in, tc.kind, got, tc.want)
		}
	}
}

func TestParseErrorsSayWhatIsValid(t *testing.T) {
	for _, tc := range []struct {
		in   string
		kind Kind
		want string
	}{
		{"25 GB", Bandwidth, `is a size, but a bandwidth is needed here, such as 25 GB/s`},
		{"25 GB/s", Bytes, `is a bandwidth, but a size is needed here`},
		{"3 parsecs", Duration, `unknown unit "parsecs"`},
		{"NaN", Bytes, `is not a size`},
		{"Inf GB/s", Bandwidth, `is not a bandwidth`},
		{"1e999 B", Bytes, `not a finite number`},
		{"", Duration, `expected a number with a unit`},
		{"fast", Bandwidth, `such as 25 GB/s`},
	} {
		_, err := Parse(tc.in, tc.kind)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Parse(%q, %v) error %v, want it to contain %q", tc.in, tc.kind, err, tc.want)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		kind Kind
		want string
	}{
		{26e9, Bandwidth, "26 GB/s"},
		{256 << 20, Bytes, "256 MiB"},
		{1.5e-6, Duration, "1.5 us"},
		{989.5e12, FLOPRate, "989.5 TFLOP/s"},
		{0, Bytes, "0 B"},
	} {
		if got := Format(tc.v, tc.kind); got != tc.want {
			t.Errorf("Format(%g, %v) = %q, want %q", tc.v, tc.kind, got, tc.want)
		}
	}
}

// FuzzParse checks that no input makes Parse panic, and that what it accepts
// is finite.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"450 GB/s", "1.5 us", "20 TFLOP", "25 GB", "NaN", "1e309", "-3 s", "4 Gbps", "µs", "1e", ".5", "+.5e-3 ms"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for k := Bytes; k <= FLOPRate; k++ {
			v, err := Parse(s, k)
			if err == nil && (math.IsNaN(v) || math.IsInf(v, 0)) {
				t.Errorf("Parse(%q, %v) = %g without error", s, k, v)
			}
			_ = Format(v, k)
		}
	})
}
