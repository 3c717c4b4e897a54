package sim_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"gpusim/sim"
)

// TestJSONHasEveryListKey: "links" and "links_both_ways" are in every
// run's JSON, empty where nothing goes in them (links_both_ways was left
// out where no link has a joint limit, so a reader found the key in one
// run and not in another).
func TestJSONHasEveryListKey(t *testing.T) {
	for _, tc := range []struct {
		name, topo string
		both       int
	}{
		{"no joint limits", twoGPUs, 0},
		{"a joint limit", `
name: duplex
hosts: [` + bareHost + `]
gpus: [{name: gpu0, model: H100-SXM}, {name: gpu1, model: H100-SXM}]
links:
  - {ends: [gpu0, cpu0], bandwidth: 10 GB/s, duplex_bandwidth: 15 GB/s}
  - {ends: [gpu1, cpu0], bandwidth: 10 GB/s}
`, 1},
	} {
		res := simulate(t, tc.topo, `
name: copies
threads:
  - name: main
    ops:
      - copy: {from: cpu0, to: gpu0, bytes: 1 MB, stream: gpu0/s}
      - copy: {from: gpu0, to: cpu0, bytes: 1 MB, stream: gpu0/t}
`)
		var b bytes.Buffer
		if err := sim.WriteJSON(&b, res); err != nil {
			t.Fatal(err)
		}
		var doc map[string]json.RawMessage
		if err := json.Unmarshal(b.Bytes(), &doc); err != nil {
			t.Fatal(err)
		}
		for _, key := range []string{"links", "links_both_ways"} {
			var list []any
			if err := json.Unmarshal(doc[key], &list); err != nil || list == nil {
				t.Errorf("%s: %q is %s, want a list", tc.name, key, doc[key])
			}
		}
		var both []any
		_ = json.Unmarshal(doc["links_both_ways"], &both)
		if len(both) != tc.both {
			t.Errorf("%s: %d links both ways, want %d", tc.name, len(both), tc.both)
		}
	}
}
