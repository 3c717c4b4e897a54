package sim

import (
	"math"
	"strconv"
)

// Time is simulated time, an integer count of picoseconds since the start of a run.
// Integer time keeps runs exact and deterministic; human units exist only at the
// parse and print boundary. Its range is about ±106 days.
type Time int64

// Units of Time.
const (
	Picosecond  Time = 1
	Nanosecond       = 1000 * Picosecond
	Microsecond      = 1000 * Nanosecond
	Millisecond      = 1000 * Microsecond
	Second           = 1000 * Millisecond
)

// MaxTime is the largest representable simulated time.
const MaxTime Time = math.MaxInt64

// Seconds returns t in seconds as a float64.
func (t Time) Seconds() float64 { return float64(t) / float64(Second) }

// FromSeconds converts seconds to Time, rounding to the nearest picosecond.
// ok is false when s is negative, not finite, or past MaxTime.
func FromSeconds(s float64) (t Time, ok bool) {
	ps := s * 1e12
	if math.IsNaN(ps) || ps < 0 || ps >= float64(MaxTime) {
		return 0, false
	}
	return Time(math.Round(ps)), true
}

// NS formats t as decimal nanoseconds with up to three fractional digits
// (picoseconds), trimmed of trailing zeros: 1500 ps is "1.5". The result is exact.
func (t Time) NS() string { return string(t.appendNS(nil)) }

// appendNS appends NS's form of t to b.
func (t Time) appendNS(b []byte) []byte {
	u := uint64(t)
	if t < 0 {
		b = append(b, '-')
		u = uint64(-t)
	}
	b = strconv.AppendUint(b, u/1000, 10)
	if frac := u % 1000; frac != 0 {
		d := [4]byte{'.', byte('0' + frac/100), byte('0' + frac/10%10), byte('0' + frac%10)}
		n := 4
		for d[n-1] == '0' {
			n--
		}
		b = append(b, d[:n]...)
	}
	return b
}

// String formats t in the largest unit that keeps it at least 1, with up to
// four significant decimals: "3 us", "1.25 ms", "812.5 ns".
func (t Time) String() string {
	a := t
	if a < 0 {
		a = -a
	}
	type unit struct {
		name string
		size Time
	}
	units := []unit{{"s", Second}, {"ms", Millisecond}, {"us", Microsecond}, {"ns", Nanosecond}}
	for _, u := range units {
		if a >= u.size {
			return strconv.FormatFloat(float64(t)/float64(u.size), 'g', 6, 64) + " " + u.name
		}
	}
	return strconv.FormatInt(int64(t), 10) + " ps"
}
