// Package mirror predicts what the benchmarks people already trust would
// print on a topology: NVIDIA's nccl-tests (all_reduce_perf and friends),
// nvbandwidth, and the CUDA sample p2pBandwidthLatencyTest. Each measurement
// is a small program run on the simulator, built with the tool's own method
// (buffer sizes, repeat counts, which stream issues what, what is timed), as
// shared/groundtruth/methods.md describes them from their sources. The
// package also holds the published measurements of real machines and the
// accuracy report that compares them with the predictions.
package mirror

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gpusim/sim"
	"gpusim/topologies"
)

// Matrix is one table of results: a cell per row and column, nil where the
// tool prints N/A.
type Matrix struct {
	// Name is the test's name ("host_to_device_memcpy_ce").
	Name string
	// Title is the line the tool prints above the table.
	Title string
	// Unit is "GB/s", "ns" or "us"; "" for p2pBandwidthLatencyTest's
	// connectivity matrix (1: peer access, 0: none).
	Unit       string
	Rows, Cols []string
	Cells      [][]*float64
}

func newMatrix(name, title, unit string, rows, cols []string) *Matrix {
	m := &Matrix{Name: name, Title: title, Unit: unit, Rows: rows, Cols: cols}
	m.Cells = make([][]*float64, len(rows))
	for i := range m.Cells {
		m.Cells[i] = make([]*float64, len(cols))
	}
	return m
}

func (m *Matrix) set(r, c int, v float64) { m.Cells[r][c] = &v }

// Sum returns the sum of the cells that have a value.
func (m *Matrix) Sum() float64 {
	s := 0.0
	for _, row := range m.Cells {
		for _, v := range row {
			if v != nil {
				s += *v
			}
		}
	}
	return s
}

// Values returns the cells that have a value, row by row.
func (m *Matrix) Values() []float64 {
	var out []float64
	for _, row := range m.Cells {
		for _, v := range row {
			if v != nil {
				out = append(out, *v)
			}
		}
	}
	return out
}

// builder assembles a program for one measurement.
type builder struct {
	m       *sim.Machine
	p       *sim.Program
	streams map[[2]int]int // (gpu, n) -> stream
	n       int
}

func newBuilder(m *sim.Machine, name string) *builder {
	return &builder{m: m, p: &sim.Program{Name: name}, streams: map[[2]int]int{}}
}

// stream returns GPU g's k-th stream.
func (b *builder) stream(g, k int) int {
	key := [2]int{g, k}
	if s, ok := b.streams[key]; ok {
		return s
	}
	b.p.Streams = append(b.p.Streams, sim.Stream{GPU: g, Name: "s" + strconv.Itoa(k)})
	b.streams[key] = len(b.p.Streams) - 1
	return len(b.p.Streams) - 1
}

// thread adds a thread on host h and returns its index.
func (b *builder) thread(h int) int {
	b.p.Threads = append(b.p.Threads, sim.Thread{Name: "t" + strconv.Itoa(len(b.p.Threads)), Host: h})
	return len(b.p.Threads) - 1
}

// add appends op to thread t with a fresh id and returns the id.
func (b *builder) add(t int, op sim.Op) string {
	b.n++
	op.ID = "op" + strconv.Itoa(b.n)
	b.p.Threads[t].Ops = append(b.p.Threads[t].Ops, op)
	return op.ID
}

// addID appends op to thread t with the given id (the ranks of a
// collective issued by several threads share one).
func (b *builder) addID(t int, id string, op sim.Op) {
	op.ID = id
	b.p.Threads[t].Ops = append(b.p.Threads[t].Ops, op)
}

// run simulates the program and indexes the records by id.
func (b *builder) run() (map[string]*sim.OpRecord, *sim.Result, error) {
	res, err := sim.RunOptions(b.m, b.p, sim.Options{NoLoadSeries: true}) // op times only
	if err != nil {
		return nil, nil, err
	}
	recs := make(map[string]*sim.OpRecord, len(res.Ops))
	for i := range res.Ops {
		recs[res.Ops[i].ID] = &res.Ops[i]
	}
	return recs, res, nil
}

// copySpec is one stream of copies of a measurement.
type copySpec struct {
	src, dst int // nodes
	gpu      int // the GPU whose stream issues them
	bytes    int64
	repeat   int
	noPeer   bool
}

// timeCopiesAndCalls runs every spec at once, each on a stream (and a
// thread) of its own, as a tool that holds its streams behind a latch until
// all is enqueued, and returns for each the time from its first copy's
// start to its last copy's end, and the host's time to enqueue its copies
// (from the first call to the last's return), as the sample's host
// stopwatch around its enqueue loop measures it.
func timeCopiesAndCalls(m *sim.Machine, specs []copySpec) (gpu, host []sim.Time, err error) {
	b := newBuilder(m, "copies")
	ids := make([][2]string, len(specs))
	threads := map[int]int{} // enqueueing threads per host
	for _, s := range specs {
		threads[m.GPUs[s.gpu].Host]++
	}
	for i, s := range specs {
		t := b.thread(m.GPUs[s.gpu].Host)
		st := b.stream(s.gpu, i)
		// The latch: a kernel that holds the stream until every copy is
		// enqueued, so that the host's launch cost is not timed. A call
		// costs at most the API overhead and the staging setup, slowed
		// where the host's threads outnumber its cores.
		hi := m.GPUs[s.gpu].Host
		h := m.Hosts[hi]
		call := satAdd(h.APIOverhead, h.StagingSetup)
		if c := h.Cores; c > 0 && threads[hi] > c {
			call = satMul(call, sim.Time((threads[hi]+c-1)/c))
		}
		latch := satMul(call, sim.Time(s.repeat+2))
		b.add(t, sim.Op{Kind: sim.OpKernel, Stream: st, Duration: latch, SMShare: 1.0 / 1024})
		for k := 0; k < s.repeat; k++ {
			id := b.add(t, sim.Op{Kind: sim.OpCopy, Stream: st, Src: s.src, Dst: s.dst, Bytes: s.bytes, NoPeerAccess: s.noPeer})
			if k == 0 {
				ids[i][0] = id
			}
			ids[i][1] = id
		}
	}
	recs, _, err := b.run()
	if err != nil {
		return nil, nil, err
	}
	gpu, host = make([]sim.Time, len(specs)), make([]sim.Time, len(specs))
	for i := range specs {
		gpu[i] = recs[ids[i][1]].End - recs[ids[i][0]].Start
		host[i] = recs[ids[i][1]].HostEnd - recs[ids[i][0]].Call
	}
	return gpu, host, nil
}

// Each calls f(i) for every i from 0 to n-1, in any order and perhaps at
// once (each f(i) touches only its own i's state). The tools' cells are
// independent simulations on a shared, read-only machine; the package runs
// them through an Each so that its caller may spread them over the CPUs
// (the core starts no goroutines). Nil runs them one after another.
type Each func(n int, f func(i int))

// batch collects measurements that do not depend on each other (a tool's
// cells), runs them through an Each, and hands each its times; each job
// writes only its own cells, so the output is the same however they ran.
type batch struct {
	m    *sim.Machine
	each Each
	jobs []batchJob
	err  error // the first failed job's error, in the order added
}

// batchSize is how many jobs a batch holds before it runs them: enough to
// keep every CPU busy, few enough that a 72-GPU machine's 31,000 cells'
// jobs are not all held at once.
const batchSize = 1024

type batchJob struct {
	specs []copySpec
	done  func(gpu, host []sim.Time)
}

// add queues a measurement of specs (as timeCopiesAndCalls times them);
// done gets its times when it runs: once batchSize jobs are queued, or at
// run.
func (b *batch) add(specs []copySpec, done func(gpu, host []sim.Time)) {
	b.jobs = append(b.jobs, batchJob{specs, done})
	if len(b.jobs) >= batchSize {
		b.flush()
	}
}

// run measures every queued job, handing each that succeeds its times
// as it ends (from several goroutines at once when each runs so: each
// done writes only its own cells). An error is the first job's, in the
// order added, that failed; the caller then discards what done wrote.
func (b *batch) run() error {
	b.flush()
	return b.err
}

// flush measures the jobs queued so far (none after an error).
func (b *batch) flush() {
	jobs := b.jobs
	b.jobs = b.jobs[:0]
	if b.err != nil {
		return
	}
	errs := make([]error, len(jobs))
	measure := func(i int) {
		g, h, err := timeCopiesAndCalls(b.m, jobs[i].specs)
		if err != nil {
			errs[i] = err
			return
		}
		jobs[i].done(g, h)
	}
	if b.each != nil {
		b.each(len(jobs), measure)
	} else {
		for i := range jobs {
			measure(i)
		}
	}
	clear(jobs) // their closures, for the collector
	for _, err := range errs {
		if err != nil {
			b.err = err
			return
		}
	}
}

func satAdd(a, b sim.Time) sim.Time {
	if a > sim.MaxTime-b {
		return sim.MaxTime
	}
	return a + b
}

func satMul(t, n sim.Time) sim.Time {
	if n > 0 && t > sim.MaxTime/n {
		return sim.MaxTime
	}
	return t * n
}

// gbps is bytes over a time in GB/s (1e9 bytes per second, as the tools mean).
func gbps(bytes float64, t sim.Time) float64 {
	if t <= 0 {
		return math.Inf(1)
	}
	return bytes / t.Seconds() / 1e9
}

func gpuIndexNames(m *sim.Machine) []string {
	out := make([]string, len(m.GPUs))
	for i := range out {
		out[i] = strconv.Itoa(i)
	}
	return out
}

// WriteMatrix prints a matrix the way nvbandwidth does: the title, a header
// of column indices in 10 columns each after a 2-column row label, then the
// rows, each cell "%.2f" in 10 columns, N/A where empty.
func WriteMatrix(w io.Writer, m *Matrix) {
	fmt.Fprintln(w, m.Title)
	var b strings.Builder
	b.WriteString("  ")
	for _, c := range m.Cols {
		fmt.Fprintf(&b, "%10s", c)
	}
	fmt.Fprintln(w, b.String())
	for i, r := range m.Rows {
		b.Reset()
		fmt.Fprintf(&b, "%2s", r)
		for _, v := range m.Cells[i] {
			if v == nil {
				fmt.Fprintf(&b, "%10s", "N/A")
			} else {
				fmt.Fprintf(&b, "%10.2f", *v)
			}
		}
		fmt.Fprintln(w, b.String())
	}
}

// WriteMatricesJSON writes {"tests": {NAME: {"title", "unit", "rows",
// "cols", "matrix", "sum"}}}, a null for each empty cell, numbers to 6
// significant digits (the text's 2 decimals lost the SUM's), in the order
// given.
func WriteMatricesJSON(w io.Writer, ms []*Matrix) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(`{"tests":{`)
	for i, m := range ms {
		if i > 0 {
			bw.WriteString(",")
		}
		fmt.Fprintf(bw, "\n  %s:{\"title\":%s,\"unit\":%s,\"rows\":%s,\"cols\":%s,\"matrix\":[", strconv.Quote(m.Name), strconv.Quote(m.Title), strconv.Quote(m.Unit), quoteList(m.Rows), quoteList(m.Cols))
		for r, row := range m.Cells {
			if r > 0 {
				bw.WriteString(",")
			}
			bw.WriteString("[")
			for c, v := range row {
				if c > 0 {
					bw.WriteString(",")
				}
				if v == nil {
					bw.WriteString("null")
				} else {
					bw.WriteString(fnum(*v))
				}
			}
			bw.WriteString("]")
		}
		// The sum of the cells that have a value, as the text's SUM line.
		fmt.Fprintf(bw, "],\"sum\":%s}", fnum(m.Sum()))
	}
	bw.WriteString("\n}}\n")
	return bw.Flush()
}

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = strconv.Quote(x)
	}
	return "[" + strings.Join(q, ",") + "]"
}

// topology loads a shipped topology, for tests and the accuracy report.
func topology(name string) (*topologies.Topology, error) { return topologies.LoadShipped(name) }
