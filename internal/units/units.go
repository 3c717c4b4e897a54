// Package units parses the quantities of topology and scenario files:
// sizes ("256 MiB"), bandwidths ("450 GB/s", "400 Gb/s"), durations ("1.5 us"),
// FLOP counts ("20 TFLOP") and FLOP rates ("989 TFLOP/s"). A plain number is
// in the base unit of its kind: bytes, bytes/s, seconds, FLOP, FLOP/s.
// Decimal prefixes are powers of 1000 (GB = 1e9 B), binary ones powers of
// 1024 (GiB); a lower-case b is a bit.
package units

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Kind is the dimension of a quantity.
type Kind uint8

// Kinds.
const (
	Bytes     Kind = iota // a size in bytes
	Bandwidth             // bytes per second
	Duration              // seconds
	FLOPs                 // floating-point operations
	FLOPRate              // floating-point operations per second
)

var kindNames = [...]string{"size", "bandwidth", "duration", "FLOP count", "FLOP rate"}

func (k Kind) String() string { return kindNames[k] }

var examples = [...]string{"256 MiB", "25 GB/s", "1.5 us", "20 TFLOP", "989 TFLOP/s"}

// Example returns an example quantity of kind k.
func (k Kind) Example() string { return examples[k] }

var sizeUnits = map[string]float64{
	"B": 1, "byte": 1, "bytes": 1,
	"kB": 1e3, "KB": 1e3, "MB": 1e6, "GB": 1e9, "TB": 1e12, "PB": 1e15, "EB": 1e18,
	"KiB": 1 << 10, "MiB": 1 << 20, "GiB": 1 << 30, "TiB": 1 << 40, "PiB": 1 << 50, "EiB": 1 << 60,
	"b": 1.0 / 8, "bit": 1.0 / 8, "bits": 1.0 / 8,
	"kb": 1e3 / 8, "Kb": 1e3 / 8, "Mb": 1e6 / 8, "Gb": 1e9 / 8, "Tb": 1e12 / 8,
	"kbit": 1e3 / 8, "Mbit": 1e6 / 8, "Gbit": 1e9 / 8, "Tbit": 1e12 / 8,
}

var timeUnits = map[string]float64{
	"ps": 1e-12, "ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3,
	"s": 1, "sec": 1, "min": 60, "h": 3600,
}

var flopUnits = map[string]float64{
	"FLOP": 1, "kFLOP": 1e3, "KFLOP": 1e3, "MFLOP": 1e6, "GFLOP": 1e9, "TFLOP": 1e12, "PFLOP": 1e15, "EFLOP": 1e18,
}

// unitLists are the units each kind accepts, for messages.
var unitLists = [...]string{
	"B, kB, MB, GB, TB, PB, EB, KiB, MiB, GiB, TiB, PiB, EiB, or bits (b, kb, Mb, Gb, Tb)",
	"B/s, kB/s, MB/s, GB/s, TB/s, PB/s, EB/s, KiB/s, MiB/s, GiB/s, TiB/s, PiB/s, EiB/s, or bit rates (Mb/s, Gb/s, Gbps)",
	"ps, ns, us, ms, s, min, h",
	"FLOP, kFLOP, MFLOP, GFLOP, TFLOP, PFLOP, EFLOP",
	"FLOP/s, GFLOP/s, TFLOP/s, PFLOP/s, EFLOP/s (or TFLOPS)",
}

var numRe = regexp.MustCompile(`^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?`)

// Parse parses s as a quantity of kind k and returns it in the base unit.
// The error says what would be valid.
func Parse(s string, k Kind) (float64, error) {
	t := strings.TrimSpace(s)
	loc := numRe.FindStringIndex(t)
	if loc == nil {
		return 0, fmt.Errorf("%q is not a %s: expected a number with a unit, such as %s", s, k, k.Example())
	}
	v, err := strconv.ParseFloat(t[:loc[1]], 64)
	if err != nil || math.IsInf(v, 0) || math.IsNaN(v) {
		return 0, fmt.Errorf("%q is not a finite number", s)
	}
	unit := strings.TrimSpace(t[loc[1]:])
	if unit == "" {
		return v, nil
	}
	if f, ok := lookup(unit, k); ok {
		r := v * f
		if math.IsInf(r, 0) {
			return 0, fmt.Errorf("%q is too large", s)
		}
		return r, nil
	}
	// A known unit of the wrong kind gets a pointed message.
	for other := Bytes; other <= FLOPRate; other++ {
		if other == k {
			continue
		}
		if _, ok := lookup(unit, other); ok {
			return 0, fmt.Errorf("%q is a %s, but a %s is needed here, such as %s", s, other, k, k.Example())
		}
	}
	return 0, fmt.Errorf("unknown unit %q in %q: a %s takes %s", unit, s, k, unitLists[k])
}

// Bare reports whether s is a number with no unit.
func Bare(s string) bool {
	t := strings.TrimSpace(s)
	loc := numRe.FindStringIndex(t)
	return loc != nil && loc[1] == len(t)
}

func lookup(unit string, k Kind) (float64, bool) {
	switch k {
	case Bytes:
		f, ok := sizeUnits[unit]
		return f, ok
	case Duration:
		f, ok := timeUnits[unit]
		return f, ok
	case FLOPs:
		f, ok := flopUnits[unit]
		if !ok && strings.HasSuffix(unit, "s") && !strings.HasSuffix(unit, "PS") {
			f, ok = flopUnits[strings.TrimSuffix(unit, "s")] // "FLOPs"
		}
		return f, ok
	case Bandwidth:
		if base, ok := strings.CutSuffix(unit, "/s"); ok {
			f, ok := sizeUnits[base]
			return f, ok
		}
		if base, ok := strings.CutSuffix(unit, "ps"); ok && len(base) > 0 && base[len(base)-1] == 'b' {
			f, ok := sizeUnits[base] // "Gbps"
			return f, ok
		}
		if base, ok := strings.CutSuffix(unit, "Bps"); ok {
			f, ok := sizeUnits[base+"B"] // "GBps"
			return f, ok
		}
	case FLOPRate:
		if base, ok := strings.CutSuffix(unit, "/s"); ok {
			f, ok := flopUnits[base]
			return f, ok
		}
		if base, ok := strings.CutSuffix(unit, "FLOPS"); ok {
			f, ok := flopUnits[base+"FLOP"] // "TFLOPS"
			return f, ok
		}
	}
	return 0, false
}

// Format writes v of kind k with a readable unit and four significant digits:
// 2.5e10 bytes/s is "25 GB/s".
func Format(v float64, k Kind) string {
	type u struct {
		name string
		f    float64
	}
	var us []u
	switch k {
	case Bytes:
		us = []u{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"B", 1}}
	case Bandwidth:
		us = []u{{"TB/s", 1e12}, {"GB/s", 1e9}, {"MB/s", 1e6}, {"kB/s", 1e3}, {"B/s", 1}}
	case Duration:
		us = []u{{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"ns", 1e-9}, {"ps", 1e-12}}
	case FLOPs:
		us = []u{{"PFLOP", 1e15}, {"TFLOP", 1e12}, {"GFLOP", 1e9}, {"MFLOP", 1e6}, {"FLOP", 1}}
	case FLOPRate:
		us = []u{{"PFLOP/s", 1e15}, {"TFLOP/s", 1e12}, {"GFLOP/s", 1e9}, {"MFLOP/s", 1e6}, {"FLOP/s", 1}}
	}
	for _, x := range us {
		if math.Abs(v) >= x.f {
			return strconv.FormatFloat(v/x.f, 'g', 4, 64) + " " + x.name
		}
	}
	last := us[len(us)-1]
	return strconv.FormatFloat(v/last.f, 'g', 4, 64) + " " + last.name
}
