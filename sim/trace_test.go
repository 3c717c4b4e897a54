package sim_test

import (
	"bytes"
	"encoding/json"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gpusim/sim"
)

type traceEvent struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Pid  int             `json:"pid"`
	Tid  int             `json:"tid"`
	Ts   json.Number     `json:"ts"`
	Dur  json.Number     `json:"dur"`
	ID   int             `json:"id"`
	Args json.RawMessage `json:"args"`
}

// TestTraceIsWellFormed checks the rules a trace viewer relies on: valid JSON,
// every track named, slices on one track never partly overlapping, every flow
// arrow with both ends, and every op present on its tracks.
func TestTraceIsWellFormed(t *testing.T) {
	topo := strings.Replace(twoGPUs, bareHost, stagingHost, 1)
	res := simulate(t, topo, `
name: trace
threads:
  - name: main
    ops:
      - copy: {id: in, from: cpu0, to: gpu0, bytes: 4 MiB, memory: pageable, stream: gpu0/in}
      - record: {id: r, event: loaded, stream: gpu0/in}
      - wait: {id: w, event: loaded, stream: gpu0/compute}
      - kernel: {id: k, stream: gpu0/compute, duration: 100 us}
      - copy: {id: p, from: gpu0, to: gpu1, bytes: 8 MiB, stream: gpu0/compute}
      - copy: {id: q, from: cpu0, to: gpu1, bytes: 8 MiB, stream: gpu1/other}
      - sync: {device: gpu0}
  - name: side
    ops: [{host: {id: h, duration: 50 us}}]
`)
	var buf bytes.Buffer
	if err := sim.WriteTrace(&buf, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	named := map[[2]int]string{}
	type span struct{ start, end float64 }
	slices := map[[2]int][]span{}
	flows := map[int]string{}
	seen := map[string]int{}
	for _, e := range doc.TraceEvents {
		key := [2]int{e.Pid, e.Tid}
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				var a struct{ Name string }
				_ = json.Unmarshal(e.Args, &a)
				named[key] = a.Name
			}
		case "X":
			ts, _ := strconv.ParseFloat(string(e.Ts), 64)
			dur, _ := strconv.ParseFloat(string(e.Dur), 64)
			if dur < 0 {
				t.Errorf("slice %s has negative duration", e.Name)
			}
			slices[key] = append(slices[key], span{ts, ts + dur})
			seen[e.Name]++
		case "s", "f":
			flows[e.ID] += e.Ph
		}
	}
	for key, ss := range slices {
		if _, ok := named[key]; !ok {
			t.Errorf("track pid %d tid %d has slices but no name", key[0], key[1])
		}
		sort.Slice(ss, func(i, j int) bool { return ss[i].start < ss[j].start })
		for i := 1; i < len(ss); i++ {
			if ss[i].start < ss[i-1].end-1e-9 && ss[i].end > ss[i-1].end+1e-9 {
				t.Errorf("track %q: slices %v and %v overlap without nesting", named[key], ss[i-1], ss[i])
			}
		}
	}
	for id, ends := range flows {
		if ends != "sf" {
			t.Errorf("flow %d has ends %q, want s then f", id, ends)
		}
	}
	if len(flows) != 1 {
		t.Errorf("%d flow arrows, want 1 (the wait on loaded)", len(flows))
	}
	// Copies appear on the stream, the copy engine and each of the two link
	// directions they cross.
	if seen["p"] != 2+2 || seen["in"] != 2+2 || seen["q"] != 2+2 || seen["k"] != 1 || seen["h"] != 1 {
		t.Errorf("slices per op: %v", seen)
	}
	if !strings.Contains(buf.String(), `"ph":"C"`) {
		t.Error("no link utilization counters")
	}
}
