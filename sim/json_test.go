package sim

import (
	"encoding/json"
	"testing"
)

// TestJSONStringsAsMarshalWritesThem checks the writers' string quoting
// against encoding/json on names that need no escaping and on every kind
// that does: quotes, backslashes, HTML characters, control characters,
// DEL, non-ASCII, invalid UTF-8 and the line separators JSON escapes for
// JavaScript.
func TestJSONStringsAsMarshalWritesThem(t *testing.T) {
	for _, s := range []string{"", "gpu0/compute", "k 12.5 us", `a"b`, `a\b`, "<x>&y", "tab\there", "nl\n", "\x7f", "gpu·0", "\xff\xfe", "a\u2028b", "über"} {
		want, _ := json.Marshal(s)
		if got := appendJSONString([]byte("x"), s); string(got) != "x"+string(want) {
			t.Errorf("appendJSONString(%q) = %s, want x%s", s, got, want)
		}
		for _, prefix := range []string{"", "launch ", `"`, "é"} {
			want, _ := json.Marshal(prefix + s)
			if got := appendJSONString2(nil, prefix, s); string(got) != string(want) {
				t.Errorf("appendJSONString2(%q, %q) = %s, want %s", prefix, s, got, want)
			}
		}
	}
}

// TestTimeFormatsAppendAsTheyPrint checks appendNS and appendUS against
// hand-written forms, negative times and the extremes included.
func TestTimeFormatsAppendAsTheyPrint(t *testing.T) {
	for _, c := range []struct {
		t      Time
		ns, us string
	}{
		{0, "0", "0"},
		{1, "0.001", "0.000001"},
		{1500, "1.5", "0.001500"},
		{Microsecond, "1000", "1"},
		{Microsecond + 10, "1000.01", "1.000010"},
		{-2500, "-2.5", "-0.002500"},
		{MaxTime, "9223372036854775.807", "9223372036854.775807"},
	} {
		if got := string(c.t.appendNS([]byte("x"))); got != "x"+c.ns {
			t.Errorf("appendNS(%d) = %q, want x%s", int64(c.t), got, c.ns)
		}
		if got := c.t.NS(); got != c.ns {
			t.Errorf("NS(%d) = %q, want %q", int64(c.t), got, c.ns)
		}
		if got := string(appendUS([]byte("x"), c.t)); got != "x"+c.us {
			t.Errorf("appendUS(%d) = %q, want x%s", int64(c.t), got, c.us)
		}
	}
}
