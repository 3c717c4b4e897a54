package sim_test

import (
	"bytes"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"

	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

type traceEvent struct {
	Ph   string          `json:"ph"`
	Name string          `json:"name"`
	Cat  string          `json:"cat"`
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
      - sync: {id: se, event: loaded}
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
	fTrack := map[int][2]int{} // where each flow ends
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
			if e.Ph == "f" {
				fTrack[e.ID] = key
			}
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
	if len(flows) != 2 {
		t.Errorf("%d flow arrows, want 2 (the wait and the event sync on loaded)", len(flows))
	}
	onThread := 0
	for _, k := range fTrack {
		if named[k] == "main" {
			onThread++
		}
	}
	if onThread != 1 {
		t.Errorf("%d arrows end on thread main, want 1 (the event sync's)", onThread)
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

// One call that issues several ops (a graph launch, a collective issued
// for all its ranks) is one slice on its thread, named for them all: two
// launches of a graph of three kernels are two slices, not six stacked; a
// collective on both GPUs is one slice.
func TestTraceDrawsOneSliceACall(t *testing.T) {
	apiSlices := func(res *sim.Result) []string {
		t.Helper()
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
		var api []string
		for _, e := range doc.TraceEvents {
			if e.Ph == "X" && e.Cat == "api" {
				api = append(api, e.Name)
			}
		}
		sort.Strings(api)
		return api
	}
	api := apiSlices(simulate(t, twoGPUs, `
name: calls
threads:
  - name: main
    ops:
      - repeat: {count: 2, graph: true, ops: [{kernel: {id: a, stream: gpu0/s, duration: 1 us}}, {kernel: {id: b, stream: gpu0/s, duration: 1 us}}, {kernel: {id: c, stream: gpu0/s, duration: 1 us}}]}
      - allreduce: {id: ar, gpus: all, bytes: 1 MiB, stream: comm}
`))
	want := []string{"collective ar@gpu0 and 1 more rank", "graph launch a#0 and 2 more ops", "graph launch a#1 and 2 more ops"}
	if strings.Join(api, "|") != strings.Join(want, "|") {
		t.Errorf("API slices %q, want %q", api, want)
	}

	// Two threads launching graphs at the same instants, their records
	// interleaved: still one slice a launch, two a thread.
	api = apiSlices(simulate(t, twoGPUs, `
name: both
threads:
  - name: t0
    ops: [{repeat: {count: 2, graph: true, ops: [{kernel: {id: a, stream: gpu0/s, duration: 1 us}}, {kernel: {id: b, stream: gpu0/s, duration: 1 us}}]}}]
  - name: t1
    ops: [{repeat: {count: 2, graph: true, ops: [{kernel: {id: c, stream: gpu1/s, duration: 1 us}}, {kernel: {id: d, stream: gpu1/s, duration: 1 us}}]}}]
`))
	want = []string{"graph launch a#0 and 1 more op", "graph launch a#1 and 1 more op", "graph launch c#0 and 1 more op", "graph launch c#1 and 1 more op"}
	if strings.Join(api, "|") != strings.Join(want, "|") {
		t.Errorf("API slices %q, want %q", api, want)
	}

	// A collective issued whole by one thread while others launch kernels
	// and graphs: their records come between the ranks' in the records,
	// and the call is still the collective's (it was named a graph
	// launch).
	h100, _ := topologies.ShippedSource("dgx-h100")
	api = apiSlices(simulate(t, string(h100), `
name: between
threads:
  - name: a
    host: cpu0
    ops: [{allreduce: {id: ar, gpus: all, bytes: 1 MiB, stream: comm}}, {allreduce: {id: ar2, gpus: all, bytes: 1 MiB, stream: comm}}]
  - name: b
    host: cpu0
    ops: [{repeat: {count: 20, ops: [{kernel: {id: k, stream: gpu0/x, duration: 1 us}}]}}]
  - name: c
    host: cpu0
    ops: [{repeat: {count: 4, graph: true, ops: [{kernel: {id: g, stream: gpu1/x, duration: 1 us}}, {kernel: {id: h, stream: gpu1/y, duration: 1 us}}]}}]
`))
	var colls []string
	for _, a := range api {
		if strings.Contains(a, "ar") {
			colls = append(colls, a)
		}
	}
	want = []string{"collective ar2@gpu0 and 7 more ranks", "collective ar@gpu0 and 7 more ranks"}
	if strings.Join(colls, "|") != strings.Join(want, "|") {
		t.Errorf("the collectives' API slices %q, want %q", colls, want)
	}
}

// TestTraceArrowsACommunicatorsOrder: a collective that waited for the one
// issued before it on its communicator, on another stream, gets an arrow
// from that one's end on each GPU: two arrows, each ending on stream b.
func TestTraceArrowsACommunicatorsOrder(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: comms
threads:
  - name: main
    ops:
      - allreduce: {id: x, gpus: all, bytes: 1 MiB, stream: a}
      - allreduce: {id: y, gpus: all, bytes: 1 MiB, stream: b}
`)
	events := traceEvents(t, res, 0, sim.MaxTime)
	names := map[[2]int]string{}
	for _, e := range events {
		if e.Ph == "M" && e.Name == "thread_name" {
			var a struct{ Name string }
			_ = json.Unmarshal(e.Args, &a)
			names[[2]int{e.Pid, e.Tid}] = a.Name
		}
	}
	var ends []string
	for _, e := range events {
		if e.Ph == "s" || e.Ph == "f" {
			ends = append(ends, e.Ph+" "+names[[2]int{e.Pid, e.Tid}])
		}
	}
	sort.Strings(ends)
	if want := "f gpu0/b|f gpu1/b|s gpu0/a|s gpu1/a"; strings.Join(ends, "|") != want {
		t.Errorf("arrow ends %q, want %q", strings.Join(ends, "|"), want)
	}
}

// TestTraceWindow: a window holds the ops that reach into it (a slice
// reaching out of it whole), the arrows whose both ends are in it, and each
// link counter from its load at the window's start. Four 1 ms kernels back
// to back on gpu0 with a record after the second and a wait on gpu1, and a
// 10 MB copy at 10 GB/s (1 ms) from 0: the window 1.5-2.5 ms holds the
// second and third kernels and not the first and fourth, the wait's arrow
// (its record ends at 2 ms, the wait at 2 ms on gpu1), and no copy.
func TestTraceWindow(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: window
threads:
  - name: main
    ops:
      - copy: {id: c, from: cpu0, to: gpu1, bytes: 10 MB, stream: gpu1/in}
      - kernel: {id: k1, stream: gpu0/s, duration: 1 ms}
      - kernel: {id: k2, stream: gpu0/s, duration: 1 ms}
      - record: {id: r, event: e, stream: gpu0/s}
      - wait: {id: w, event: e, stream: gpu1/s}
      - kernel: {id: k3, stream: gpu0/s, duration: 1 ms}
      - kernel: {id: k4, stream: gpu0/s, duration: 1 ms}
`)
	seen := map[string]int{}
	flows := 0
	var counters []string
	for _, e := range traceEvents(t, res, us(1500), us(2500)) {
		switch e.Ph {
		case "X":
			if e.Dur != "0" || e.Name == "r" || e.Name == "w" {
				seen[e.Name]++
			}
		case "s", "f":
			flows++
		case "C":
			counters = append(counters, e.Name+"@"+string(e.Ts))
		}
	}
	for _, id := range []string{"k2", "k3", "r", "w"} {
		if seen[id] == 0 {
			t.Errorf("%s is not in the window's trace; slices %v", id, seen)
		}
	}
	for _, id := range []string{"k1", "k4", "c"} {
		if seen[id] != 0 {
			t.Errorf("%s (out of the window) is in its trace", id)
		}
	}
	if flows != 2 {
		t.Errorf("%d arrow ends, want 2 (the wait's)", flows)
	}
	// The copy's link carried nothing in the window: one point, its zero
	// load at 1.5 ms, for each direction it had a series in.
	for _, c := range counters {
		if !strings.HasSuffix(c, "@1500") {
			t.Errorf("counter point %s, want only the load at the window's start (1500 us)", c)
		}
	}
	if len(counters) == 0 {
		t.Error("no counter at the window's start")
	}
}

// TestTraceWindowEndsItsCounters: a window's link counters run from the
// load at its start, and past its end while the link stays loaded, through
// the change that idles it, and no further (slices that reach out of the
// window are drawn whole, and a counter holds its last value to the
// trace's end). 10 MB at 10 GB/s from 0 (no latency, no overhead) loads
// each link on its way at 10 GB/s to 1 ms; c2 loads them again from 2 to 3
// ms and c3 from 4 to 5, after kernels; a 2.5 ms kernel runs beside. The
// window 0.2-0.5 ms has 10 at 200 us and 0 at 1000 us, and nothing of c2
// and c3: cut at the window the trace held 10 GB/s to its end, and given
// the first change after the last slice it ended on c2's rise.
func TestTraceWindowEndsItsCounters(t *testing.T) {
	res := simulate(t, twoGPUs, `
name: window
threads:
  - name: main
    ops:
      - copy: {id: c, from: cpu0, to: gpu1, bytes: 10 MB, stream: gpu1/in}
      - kernel: {id: k, stream: gpu0/s, duration: 2.5 ms}
      - kernel: {id: kk, stream: gpu1/in, duration: 1 ms}
      - copy: {id: c2, from: cpu0, to: gpu1, bytes: 10 MB, stream: gpu1/in}
      - kernel: {id: k3, stream: gpu1/in, duration: 1 ms}
      - copy: {id: c3, from: cpu0, to: gpu1, bytes: 10 MB, stream: gpu1/in}
`)
	points := map[string][]string{}
	for _, e := range traceEvents(t, res, us(200), us(500)) {
		if e.Ph == "C" {
			points[e.Name] = append(points[e.Name], string(e.Ts)+"="+strings.TrimSuffix(strings.TrimPrefix(string(e.Args), `{"GB/s":`), "}"))
		}
	}
	if len(points) != 2 {
		t.Errorf("counters %v, want the copy's two links", points)
	}
	for name, p := range points {
		if got := strings.Join(p, " "); got != "200=10 1000=0" {
			t.Errorf("%s: points %s, want 200=10 1000=0", name, got)
		}
	}
}

// traceEvents writes the trace of res's window [from, to] and reads its
// events back.
func traceEvents(t *testing.T, res *sim.Result, from, to sim.Time) []traceEvent {
	t.Helper()
	var buf bytes.Buffer
	if err := sim.WriteTraceWindow(&buf, res, from, to); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []traceEvent `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	return doc.TraceEvents
}

// TestTraceDrawsAStagedCopyLegByLeg: a copy staged through the host is
// drawn on each link while its leg's bytes crossed it. 1 MiB, one staging
// chunk, from gpu0 to gpu1 under a switch without P2P: the leg to the
// host (gpu0->sw0, sw0->cpu0) moves 1 MiB at 10 GB/s, 104.858 us, then
// the leg from it (cpu0->sw0, sw0->gpu1) the same, after it. The whole
// copy on all four lanes drew each 2.5 times as long as it was busy.
func TestTraceDrawsAStagedCopyLegByLeg(t *testing.T) {
	topo := strings.Replace(twoGPUs, "switches: [{name: sw0}]", "switches: [{name: sw0, p2p: false}]", 1)
	topo = strings.Replace(topo, "memcpy_bandwidth: 5 GB/s}", "memcpy_bandwidth: 5 GB/s, staging_chunk: 2 MiB, staging_handoff: 0 us}", 1)
	sc, err := scenarios.Load("scen.yaml", []byte(`
name: staged
topology: topo.yaml
threads:
  - name: main
    ops:
      - copy: {id: c, from: gpu0, to: gpu1, bytes: 1 MiB, stream: gpu0/s}
`), scenarios.Options{ReadFile: func(string) ([]byte, error) { return []byte(topo), nil }})
	if err != nil {
		t.Fatal(err)
	}
	res, err := sim.RunOptions(sc.Topology.Machine, sc.Program, sim.Options{CollLinks: true}) // as gpusim run --trace
	if err != nil {
		t.Fatal(err)
	}
	if res.Ops[0].Copy != sim.CopyStaged {
		t.Fatalf("the copy is %v, want staged", res.Ops[0].Copy)
	}
	var buf bytes.Buffer
	if err := sim.WriteTrace(&buf, res); err != nil {
		t.Fatal(err)
	}
	var doc struct {
		TraceEvents []struct {
			Ph, Name, Cat string
			Pid, Tid      int
			Ts, Dur       float64
			Args          map[string]any
		} `json:"traceEvents"`
	}
	if err := json.Unmarshal(buf.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	lane := map[[2]int]string{}
	for _, e := range doc.TraceEvents {
		if e.Ph == "M" && e.Name == "thread_name" {
			lane[[2]int{e.Pid, e.Tid}] = e.Args["name"].(string)
		}
	}
	start := map[string]float64{}
	for _, e := range doc.TraceEvents {
		if e.Cat != "transfer" {
			continue
		}
		name := lane[[2]int{e.Pid, e.Tid}]
		if math.Abs(e.Dur-104.8576) > 0.002 { // to the nanosecond the trace rounds to
			t.Errorf("%s: the copy drawn for %g us, want 104.858 (1 MiB at 10 GB/s)", name, e.Dur)
		}
		for _, d := range []string{"gpu0->sw0", "sw0->cpu0", "cpu0->sw0", "sw0->gpu1"} {
			if strings.HasSuffix(name, " "+d) {
				start[d] = e.Ts
			}
		}
	}
	if len(start) != 4 {
		t.Fatalf("slices on %v, want the four directions of the two legs", start)
	}
	if start["gpu0->sw0"] != start["sw0->cpu0"] || start["cpu0->sw0"] != start["sw0->gpu1"] || start["cpu0->sw0"] < start["gpu0->sw0"]+104.858-0.001 {
		t.Errorf("legs start at %v: want the second after the first ends", start)
	}
}

// A host that runs no thread has no process in the trace (it was an empty
// one); the host whose thread runs has.
func TestTraceLeavesOutHostsWithoutThreads(t *testing.T) {
	topo := `
name: two-sockets
hosts: [{name: cpu0}, {name: cpu1}]
gpus: [{name: gpu0, model: H100-SXM, host: cpu0}, {name: gpu1, model: H100-SXM, host: cpu1}]
links:
  - {ends: [gpu0, cpu0], type: pcie5x16}
  - {ends: [gpu1, cpu1], type: pcie5x16}
  - {ends: [cpu0, cpu1], type: upi}
`
	res := simulate(t, topo, `
name: one-host
threads:
  - name: main
    host: cpu1
    ops:
      - kernel: {id: k, stream: gpu0/s, duration: 10 us}
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
	var processes []string
	for _, e := range doc.TraceEvents {
		var args struct{ Name string }
		if e.Name == "process_name" && json.Unmarshal(e.Args, &args) == nil {
			processes = append(processes, args.Name)
		}
	}
	has := func(name string) bool { return strings.Contains(strings.Join(processes, "\n")+"\n", name+"\n") }
	if !has("host cpu1") || has("host cpu0") || !has("gpu0 (H100-SXM)") {
		t.Errorf("processes %q, want host cpu1, gpu0 and no host cpu0", processes)
	}
}
