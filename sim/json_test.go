package sim

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"testing"
)

// TestJSONStringsAsMarshalWritesThem checks the writers' string quoting
// against encoding/json on names that need no escaping and on every kind
// that does: quotes, backslashes, HTML characters, control characters,
// DEL, non-ASCII, invalid UTF-8 and the line separators JSON escapes for
// JavaScript.
func TestJSONStringsAsMarshalWritesThem(t *testing.T) {
	marshal := func(s string) string {
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false) // "a->b" as it is
		enc.Encode(s)
		return strings.TrimSuffix(b.String(), "\n")
	}
	for _, s := range []string{"", "gpu0/compute", "k 12.5 us", `a"b`, `a\b`, "<x>&y", "pcie0->gpu0", "tab\there", "nl\n", "\x7f", "gpu·0", "\xff\xfe", "a\u2028b", "über"} {
		want := marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+want {
			t.Errorf("appendJSONString(%q) = %s, want x%s", s, got, want)
		}
		for _, prefix := range []string{"", "launch ", `"`, "é"} {
			want := marshal(prefix + s)
			if got := appendJSONString2(nil, prefix, s); string(got) != want {
				t.Errorf("appendJSONString2(%q, %q) = %s, want %s", prefix, s, got, want)
			}
		}
	}
	if got := string(appendJSONString(nil, "pcie0->gpu0")); got != `"pcie0->gpu0"` {
		t.Errorf("a link's name is %s, want it as it is", got)
	}
}

// TestTimeFormatsAppendAsTheyPrint checks appendNS against hand-written
// forms, negative times and the extremes included.
func TestTimeFormatsAppendAsTheyPrint(t *testing.T) {
	for _, c := range []struct {
		t  Time
		ns string
	}{
		{0, "0"},
		{1, "0.001"},
		{1500, "1.5"},
		{Microsecond, "1000"},
		{Microsecond + 10, "1000.01"},
		{-2500, "-2.5"},
		{MaxTime, "9223372036854775.807"},
	} {
		if got := string(c.t.appendNS([]byte("x"))); got != "x"+c.ns {
			t.Errorf("appendNS(%d) = %q, want x%s", int64(c.t), got, c.ns)
		}
		if got := c.t.NS(); got != c.ns {
			t.Errorf("NS(%d) = %q, want %q", int64(c.t), got, c.ns)
		}
	}
}

// The trace's times are whole nanoseconds written as microseconds that a
// reader gets back whether it truncates or rounds the double it parses
// times 1000: by hand for a few (261.9 us parses to 261.89999999999998,
// whose thousandfold truncates to 261899, so it is written with 0.1 ns
// more), and for every nanosecond of the first 3 ms and random ones up to
// a day, by parsing what is written.
func TestTraceTimesSurviveTruncation(t *testing.T) {
	for _, c := range []struct {
		t    Time
		want string
	}{
		{0, "0"}, {499, "0"}, {500, "0.001"}, {1500, "0.002"}, {261500 * Nanosecond, "261.5"},
		{261900 * Nanosecond, "261.9001"}, {Microsecond, "1"}, {3 * Second, "3000000"},
	} {
		if got := string(appendUS(nil, traceNS(c.t))); got != c.want {
			t.Errorf("trace time of %d ps: %q, want %q", int64(c.t), got, c.want)
		}
	}
	check := func(ns int64) {
		s := string(appendUS(nil, ns))
		v, err := strconv.ParseFloat(s, 64)
		if err != nil || int64(v*1000) != ns || int64(math.Round(v*1000)) != ns || math.Abs(v*1000-float64(ns)) > 0.11 {
			t.Fatalf("%d ns written %q: read back as %v (%v)", ns, s, v*1000, err)
		}
	}
	for ns := int64(0); ns < 3_000_000; ns++ {
		check(ns)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 1_000_000 {
		check(rng.Int64N(86_400 * 1_000_000_000))
	}
}
