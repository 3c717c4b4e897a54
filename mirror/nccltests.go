package mirror

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gpusim/models"
	"gpusim/sim"
	"gpusim/topologies"
)

// nccl-tests (methods.md §4): one process drives every GPU from one thread
// (or, under mpirun -np P, each of P processes its share); per size, one
// untimed op, then 20 ops enqueued back to back (each a group of one NCCL
// call per GPU of the process) and a stream synchronize on each of its GPUs,
// timed by a host clock: the time printed is the wall time over 20 (the mean
// over processes, -a 1), so it includes the host's launch cost when that is
// the longer. algbw = size / time (1e9 B/s); busbw = algbw x the
// collective's factor.

// NCCLTestOps maps nccl-tests operation names to collectives.
var NCCLTestOps = map[string]string{
	"all_reduce":     models.AllReduce,
	"all_gather":     models.AllGather,
	"reduce_scatter": models.ReduceScatter,
	"broadcast":      models.Broadcast,
	"reduce":         models.Reduce,
	"alltoall":       models.AllToAll,
	"sendrecv":       models.SendRecv,
}

// NCCLTestOpNames lists the operations in a fixed order.
var NCCLTestOpNames = []string{"all_reduce", "all_gather", "reduce_scatter", "broadcast", "reduce", "alltoall", "sendrecv"}

const ncclIters = 20

// NCCLTestsConfig is what all_reduce_perf and friends take on their command line.
type NCCLTestsConfig struct {
	Op        string // nccl-tests name: all_reduce, ...
	GPUs      int    // -g: the first n GPUs of the topology
	Procs     int    // mpirun -np: processes sharing them out in order (0: 1)
	MinBytes  int64  // -b
	MaxBytes  int64  // -e
	Factor    int64  // -f (1: step by StepBytes instead)
	StepBytes int64  // -i
	DType     models.DType
	Algorithm string // NCCL_ALGO, "" for the tuner's choice
	Protocol  string // NCCL_PROTO
}

// NCCLRow is one line of the table.
type NCCLRow struct {
	Size, Count int64
	Time        sim.Time
	AlgBW       float64 // GB/s
	BusBW       float64 // GB/s
	// The in-place columns: the out-of-place figures but where NCCL
	// discards the in-place call (one rank).
	InPlaceTime                sim.Time
	InPlaceAlgBW, InPlaceBusBW float64
	Algorithm                  string
	Protocol                   string
}

// busFactor is nccl-tests' bus bandwidth factor.
func busFactor(op string, n int) float64 {
	f := float64(n)
	switch op {
	case "all_reduce":
		return 2 * (f - 1) / f
	case "all_gather", "reduce_scatter", "alltoall":
		return (f - 1) / f
	}
	return 1
}

// Check reports a configuration nccl-tests would loop on or that
// overflows.
func (c NCCLTestsConfig) Check() error {
	switch {
	case c.MinBytes < 0 || c.MaxBytes < c.MinBytes:
		return fmt.Errorf("need 0 <= -b <= -e, got -b %d -e %d", c.MinBytes, c.MaxBytes)
	case c.Factor < 1:
		return fmt.Errorf("-f must be at least 1")
	case c.Factor > 1 && c.MinBytes == 0 && c.MaxBytes > 0:
		return fmt.Errorf("-b 0 with -f %d never grows: give -b at least 1", c.Factor)
	case c.Factor == 1 && c.StepBytes <= 0 && c.MaxBytes > c.MinBytes:
		return fmt.Errorf("-i must be at least 1 when -f is 1")
	case c.GPUs < 0:
		return fmt.Errorf("%d GPUs: the number of GPUs cannot be negative", c.GPUs)
	case c.Procs < 0:
		return fmt.Errorf("%d processes: give at least 1", c.Procs)
	case len(c.Sizes()) > 1000:
		step := fmt.Sprintf("-f %d", c.Factor)
		if c.Factor == 1 {
			step = fmt.Sprintf("-i %d", c.StepBytes)
		}
		return fmt.Errorf("-b %d -e %d %s steps through more than 1000 sizes: raise -f (2 doubles each size) or -i, or narrow -b to -e", c.MinBytes, c.MaxBytes, step)
	}
	return nil
}

// Sizes lists the sizes nccl-tests steps through (at most 1001).
func (c NCCLTestsConfig) Sizes() []int64 {
	var out []int64
	for s := c.MinBytes; s <= c.MaxBytes && len(out) <= 1000; {
		out = append(out, s)
		next := s + c.StepBytes
		if c.Factor > 1 {
			if s > (1<<62)/c.Factor {
				break
			}
			next = s * c.Factor
		}
		if next <= s {
			break
		}
		s = next
	}
	return out
}

// splitPerRank reports whether nccl-tests splits a size of collective
// kind per rank, each rank's part rounded down to 16 bytes.
func splitPerRank(kind string) bool {
	return kind == models.AllGather || kind == models.ReduceScatter || kind == models.AllToAll
}

// BufferBytes is what nccl-tests allocates on each of n ranks for a size
// (its -e, the size column: the larger of a rank's send and receive
// buffers) of op: a send and a receive buffer, one of them a rank's share
// of the size for all-gather (the send) and reduce-scatter (the receive).
// With its default data check (-c 1) it allocates a third, for the
// expected result; gpusim checks no data, and this leaves it out.
func BufferBytes(op string, n int, size int64) int64 {
	switch NCCLTestOps[op] {
	case models.AllGather, models.ReduceScatter:
		return size + size/int64(max(n, 1))
	}
	return 2 * size
}

// MaxBufferSize is the largest size whose BufferBytes fit in mem.
func MaxBufferSize(op string, n int, mem int64) int64 {
	switch NCCLTestOps[op] {
	case models.AllGather, models.ReduceScatter:
		n = max(n, 1)
		return int64(float64(mem) * float64(n) / float64(n+1))
	}
	return mem / 2
}

// LeastNCCLSize is the least size (-b, -e) of which nccl-tests moves more
// than 0 bytes for op over n ranks of elements of dt: a whole element, and
// 16 bytes a rank where the size is split per rank.
func LeastNCCLSize(op string, n int, dt models.DType) int64 {
	if splitPerRank(NCCLTestOps[op]) {
		return 16 * int64(max(n, 1))
	}
	return int64(dt.Size())
}

// NCCLTests predicts nccl-tests' table for cfg on topology t.
func NCCLTests(t *topologies.Topology, cfg NCCLTestsConfig) ([]NCCLRow, error) {
	kind, ok := NCCLTestOps[cfg.Op]
	if !ok {
		return nil, fmt.Errorf("unknown operation %q; operations: %s", cfg.Op, strings.Join(NCCLTestOpNames, ", "))
	}
	m := t.Machine
	n := cfg.GPUs
	if n <= 0 {
		n = len(m.GPUs)
	}
	if n > len(m.GPUs) {
		return nil, fmt.Errorf("%d GPUs asked for: topology %s has %d", n, t.Name, len(m.GPUs))
	}
	procs := max(cfg.Procs, 1)
	if n%procs != 0 {
		gpus := fmt.Sprintf("%d GPUs", n)
		if n == 1 {
			gpus = "1 GPU"
		}
		var ok []string
		for d := 1; d <= n; d++ {
			if n%d == 0 {
				ok = append(ok, strconv.Itoa(d))
			}
		}
		return nil, fmt.Errorf("%d processes cannot share %s evenly, each process driving as many; give --procs %s, or -g, the GPUs of each process (nccl-tests' -g)", procs, gpus, strings.Join(ok, ", "))
	}
	if cfg.DType == "" {
		cfg.DType = models.FP32
	}
	if err := cfg.Check(); err != nil {
		return nil, err
	}
	elt := int64(cfg.DType.Size())
	var rows []NCCLRow
	for _, size := range cfg.Sizes() {
		// Whole elements: nccl-tests' count; all-gather, reduce-scatter and
		// all-to-all split it per rank, rounded down to 16 bytes.
		count := size / elt
		size = count * elt
		if splitPerRank(kind) {
			per := (size / int64(n)) &^ 15
			count = per / elt
			size = per * int64(n)
		}
		gpus := make([]int, n)
		for i := range gpus {
			gpus[i] = i
		}
		spec := models.CollSpec{Kind: kind, GPUs: gpus, Bytes: size, Algorithm: cfg.Algorithm, Protocol: cfg.Protocol}
		plan, err := models.BuildCollective(m, t.GPUModels, spec)
		if err != nil {
			return nil, err
		}
		tm, err := timeCollective(m, plan, n, procs)
		if err != nil {
			return nil, err
		}
		alg := gbps(float64(size), tm)
		row := NCCLRow{Size: size, Count: count, Time: tm, AlgBW: alg, BusBW: alg * busFactor(cfg.Op, n), Algorithm: plan.Algorithm, Protocol: plan.Protocol}
		row.InPlaceTime, row.InPlaceAlgBW, row.InPlaceBusBW = row.Time, row.AlgBW, row.BusBW
		if n == 1 && kind != models.SendRecv && kind != models.AllToAll { // sends and receives are never discarded
			// One rank in place: NCCL has nothing to do, and
			// returns (the run discards the call).
			spec.InPlace = true
			in, err := models.BuildCollective(m, t.GPUModels, spec)
			if err != nil {
				return nil, err
			}
			if row.InPlaceTime, err = timeCollective(m, in, n, procs); err != nil {
				return nil, err
			}
			row.InPlaceAlgBW = gbps(float64(size), row.InPlaceTime)
			row.InPlaceBusBW = row.InPlaceAlgBW * busFactor(cfg.Op, n)
		}
		rows = append(rows, row)
	}
	return rows, nil
}

// timeCollective runs, on each of procs threads (one per process, on the
// host of its first GPU, driving n/procs consecutive GPUs), one untimed op,
// then 20 timed ones and a synchronize of its streams, and returns the mean
// over the processes of the wall time of the timed part over 20. One
// process issues the collective whole, as a group of one call per GPU.
func timeCollective(m *sim.Machine, plan *sim.CollPlan, n, procs int) (sim.Time, error) {
	b := newBuilder(m, "nccl-tests")
	streams := make([]int, n)
	for i := range streams {
		streams[i] = b.stream(i, 0)
	}
	per := n / procs
	ths := make([]int, procs)
	for p := range ths {
		ths[p] = b.thread(m.GPUs[p*per].Host)
	}
	// issue adds one collective, the part of every GPU of process p.
	issue := func(p int, id string) string {
		if procs == 1 {
			return b.add(ths[p], sim.Op{Kind: sim.OpCollective, Coll: plan, Streams: streams, Stream: streams[0]})
		}
		for r := p * per; r < (p+1)*per; r++ {
			b.addID(ths[p], id, sim.Op{Kind: sim.OpCollective, Coll: plan, Streams: streams, Stream: streams[0], OneRank: true, Rank: r})
		}
		return id
	}
	first, last := make([]string, procs), make([]string, procs)
	for p := range ths {
		issue(p, "warmup")
		for r := p * per; r < (p+1)*per; r++ {
			b.add(ths[p], sim.Op{Kind: sim.OpSync, Sync: sim.SyncStream, Stream: streams[r]})
		}
		for i := 0; i < ncclIters; i++ {
			id := issue(p, "iter"+strconv.Itoa(i))
			if i == 0 {
				first[p] = id + "@" + m.GPUs[p*per].Name
			}
		}
		for r := p * per; r < (p+1)*per; r++ {
			last[p] = b.add(ths[p], sim.Op{Kind: sim.OpSync, Sync: sim.SyncStream, Stream: streams[r]})
		}
	}
	recs, _, err := b.run()
	if err != nil {
		return 0, err
	}
	var sum sim.Time
	for p := range ths {
		sum += recs[last[p]].End - recs[first[p]].Call
	}
	return sum / sim.Time(procs) / ncclIters, nil
}

// WriteNCCLTests prints the table in nccl-tests' layout (out-of-place and
// in-place columns; the simulator predicts the same for both but where
// NCCL discards an in-place call: one rank).
func WriteNCCLTests(w io.Writer, t *topologies.Topology, cfg NCCLTestsConfig, rows []NCCLRow) {
	bw := bufio.NewWriter(w)
	defer bw.Flush()
	n := cfg.GPUs
	if n <= 0 {
		n = len(t.Machine.GPUs)
	}
	dt := cfg.DType
	if dt == "" {
		dt = models.FP32
	}
	procs := max(cfg.Procs, 1)
	if procs > 1 {
		fmt.Fprintf(bw, "# gpusim nccl-tests: %s_perf on %s, %d GPUs in %d processes (predicted)\n", cfg.Op, t.Name, n, procs)
	} else {
		fmt.Fprintf(bw, "# gpusim nccl-tests: %s_perf on %s, %d GPUs (predicted)\n", cfg.Op, t.Name, n)
		if n > 8 {
			// More GPUs than a server holds, from one thread: its
			// launches, one a GPU in turn, set the small sizes' time.
			fmt.Fprintf(bw, "# one thread launches on all %d GPUs in turn: the host's launches set the small sizes' time; --procs %d runs a process a GPU, as mpirun -np %d does\n", n, n, n)
		}
	}
	fmt.Fprintf(bw, "# nThread 1 nGpus %d minBytes %d maxBytes %d step: %s warmup iters: 1 iters: %d\n#\n", n/procs, cfg.MinBytes, cfg.MaxBytes, stepText(cfg), ncclIters)
	fmt.Fprintln(bw, "#                                                              out-of-place                       in-place          ")
	fmt.Fprintln(bw, "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong")
	fmt.Fprintln(bw, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)             (us)  (GB/s)  (GB/s)        ")
	redop, root := "sum", "-1"
	switch cfg.Op {
	case "all_gather", "alltoall", "sendrecv":
		redop = "none"
	case "broadcast":
		redop, root = "none", "0"
	case "reduce":
		root = "0"
	}
	sum := 0.0
	for _, r := range rows {
		us := r.Time.Seconds() * 1e6
		cols := fmt.Sprintf("%7s  %6s  %6s  %6s", num(us, 7), num(r.AlgBW, 6), num(r.BusBW, 6), "N/A")
		in := fmt.Sprintf("%7s  %6s  %6s  %6s", num(r.InPlaceTime.Seconds()*1e6, 7), num(r.InPlaceAlgBW, 6), num(r.InPlaceBusBW, 6), "N/A")
		fmt.Fprintf(bw, "%12d  %12d  %8s  %6s  %6s  %s  %s\n", r.Size, r.Count, typeName(dt), redop, root, cols, in)
		sum += r.BusBW + r.InPlaceBusBW
	}
	fmt.Fprintln(bw, "# Out of bounds values : 0 OK")
	avg := 0.0
	if len(rows) > 0 {
		avg = sum / float64(2*len(rows))
	}
	fmt.Fprintf(bw, "# Avg bus bandwidth    : %s \n#\n", cG(avg))
}

// cG formats v as C's printf %g does (nccl-tests prints the average bus
// bandwidth with it): 6 significant digits, trailing zeros dropped, an
// exponent below 1e-4 and from 1e6 (Go's %g gives the shortest exact form
// instead).
func cG(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

func stepText(c NCCLTestsConfig) string {
	if c.Factor > 1 {
		return strconv.FormatInt(c.Factor, 10) + "(factor)"
	}
	return strconv.FormatInt(c.StepBytes, 10) + "(bytes)"
}

// num prints v in width w with 2 decimals if they fit, else 1, else 0, as
// nccl-tests does.
func num(v float64, w int) string {
	for _, d := range []int{2, 1, 0} {
		s := strconv.FormatFloat(v, 'f', d, 64)
		if len(s) <= w {
			return s
		}
	}
	return strconv.FormatFloat(v, 'f', 0, 64)
}

func typeName(d models.DType) string {
	switch d {
	case models.FP32:
		return "float"
	case models.FP64:
		return "double"
	case models.FP16:
		return "half"
	case models.BF16:
		return "bfloat16"
	case models.INT8:
		return "int8"
	case models.FP8:
		return "f8e4m3"
	}
	return string(d)
}

// WriteNCCLTestsJSON writes {"op", "gpus", "rows": [{"size_bytes", "time_us",
// "algbw_gbps", "busbw_gbps", ...}]}.
func WriteNCCLTestsJSON(w io.Writer, cfg NCCLTestsConfig, n int, rows []NCCLRow) error {
	bw := bufio.NewWriter(w)
	// The average bus bandwidth, as the text's last line: over every row,
	// out of place and in place.
	sum := 0.0
	for _, r := range rows {
		sum += r.BusBW + r.InPlaceBusBW
	}
	avg := 0.0
	if len(rows) > 0 {
		avg = sum / float64(2*len(rows))
	}
	fmt.Fprintf(bw, "{\"op\":%s,\"gpus\":%d,\"procs\":%d,\"avg_busbw_gbps\":%s,\"rows\":[", strconv.Quote(cfg.Op), n, max(cfg.Procs, 1), fnum(avg))
	for i, r := range rows {
		if i > 0 {
			bw.WriteString(",")
		}
		fmt.Fprintf(bw, "\n  {\"size_bytes\":%d,\"count\":%d,\"time_us\":%s,\"algbw_gbps\":%s,\"busbw_gbps\":%s,\"in_place_time_us\":%s,\"in_place_algbw_gbps\":%s,\"in_place_busbw_gbps\":%s,\"algorithm\":%s,\"protocol\":%s}",
			r.Size, r.Count, fnum(r.Time.Seconds()*1e6), fnum(r.AlgBW), fnum(r.BusBW), fnum(r.InPlaceTime.Seconds()*1e6), fnum(r.InPlaceAlgBW), fnum(r.InPlaceBusBW), strconv.Quote(r.Algorithm), strconv.Quote(r.Protocol))
	}
	bw.WriteString("\n]}\n")
	return bw.Flush()
}

// fnum writes a number of the JSON with 6 significant digits and at least
// 2 decimals, never an exponent above 1: 4 decimals left 0.0003 GB/s, one
// digit, for an 8-byte all-reduce, and 6 digits alone wrote 1.73931e+06 us
// where the table prints 1739307.
func fnum(v float64) string {
	a := math.Abs(v)
	if a == 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return strconv.FormatFloat(v, 'f', -1, 64)
	}
	if a < 1 {
		return strconv.FormatFloat(v, 'g', 6, 64)
	}
	dec := max(2, 6-int(math.Floor(math.Log10(a)))-1)
	s := strconv.FormatFloat(v, 'f', dec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}
