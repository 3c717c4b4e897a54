package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"

	"gpusim/scenarios"
	"gpusim/sim"
)

const (
	sweepSynopsis      = "gpusim sweep SCENARIO [-j N] [--csv FILE] [--json] [--plot DIR [--metric M]] [--shard i/n | --shards N] [--resume] [--strict] [--set k=v]... [--max-ops N]"
	sweepMergeSynopsis = "gpusim sweep merge FILE... [--csv FILE] [--json] [--plot DIR [--metric M]]"
)

// sweepRow is one point of a sweep.
type sweepRow struct {
	Index      int        `json:"point"`
	Values     []string   `json:"values"`
	MakespanS  float64    `json:"makespan_s"`
	IdleMean   float64    `json:"idle_mean"`
	IdleMax    float64    `json:"idle_max"`
	GPUIdle    []gpuShare `json:"idle_per_gpu"`
	Link       string     `json:"busiest_link"`
	LinkUtil   float64    `json:"busiest_link_util"`
	Bottleneck string     `json:"bottleneck"`
	Error      string     `json:"error,omitempty"`
	// Warnings are the simulator's warnings for the point (JSON only; a
	// resumed or merged CSV row has none).
	Warnings []string `json:"warnings,omitempty"`
	topology string   // the point's machine, for plot titles (not written)
}

type gpuShare struct {
	GPU  string  `json:"gpu"`
	Idle float64 `json:"idle"`
}

// sweepTable is a sweep's results, complete or partial.
type sweepTable struct {
	Scenario string     `json:"scenario"`
	Vars     []string   `json:"vars"`
	Total    int        `json:"points_total"`
	Shard    string     `json:"shard,omitempty"`
	Partial  bool       `json:"partial"`
	Rows     []sweepRow `json:"rows"`
}

func cmdSweep(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return cmdSweepMerge(args[1:], stdout, stderr)
	}
	fs := newFlagSet("sweep", sweepSynopsis, stderr)
	jobs := fs.Int("j", runtime.NumCPU(), "run `N` points at once")
	csvOut := fs.String("csv", "", "write the table as CSV to `FILE` (written atomically)")
	asJSON := fs.Bool("json", false, "print the table as JSON")
	shard := fs.String("shard", "", "run only points i, i+n, i+2n, ... (`i/n`); default from SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX with --shards")
	shards := fs.Int("shards", 0, "the shard count when JOB_COMPLETION_INDEX gives the index (Kubernetes Indexed Jobs)")
	resume := fs.Bool("resume", false, "keep the points already in --csv FILE and run only the missing ones")
	plotTo := fs.String("plot", "", "write sweep.png into `DIR`: the metric against the first swept var, a series per value of the others")
	metric := fs.String("metric", "makespan", "the metric --plot draws: "+sweepMetricNames())
	set := setFlag{}
	fs.Var(set, "set", "override a var that is not swept: name=value (repeatable)")
	maxOps := fs.Int64("max-ops", scenarios.DefaultMaxOps, "refuse points that expand to more than `N` ops")
	strict := fs.Bool("strict", false, "make a point with warnings a failed point (exit status 2)")
	if helpRequested(fs, sweepSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := oneArg("sweep", sweepSynopsis, "SCENARIO", "a scenario file with a sweep: block, or a shipped study such as dp-scaling", pos, set); err != nil {
		return err
	}
	if *jobs < 1 {
		return &usageError{"gpusim sweep: -j must be at least 1"}
	}
	if err := checkMaxOps("sweep", *maxOps); err != nil {
		return err
	}
	if err := notADirectory(*csvOut); err != nil {
		return err // before the points run, not after
	}
	if err := checkSweepMetric(fs, "sweep", *metric, *plotTo); err != nil {
		return err
	}
	if err := plotDirUsable(*plotTo); err != nil {
		return err // before the points run, as --csv
	}
	if *resume && *csvOut == "" {
		return &usageError{"gpusim sweep: --resume needs --csv FILE, the file to resume"}
	}
	shardI, shardN, err := shardOf(*shard, *shards, given(fs, "shards"))
	if err != nil {
		return err
	}
	// Load once with the defaults to learn the sweep.
	base, err := loadScenario(pos[0], set, *maxOps)
	if err != nil {
		return err
	}
	if len(base.Sweep) == 0 {
		return fmt.Errorf("%s: no sweep: block; add one mapping vars to lists of values, such as sweep: {batch: [64 MiB, 256 MiB]}", base.File)
	}
	for k := range set {
		for _, sv := range base.Sweep {
			if sv.Name == k {
				return &usageError{fmt.Sprintf("gpusim sweep: --set %s: %s is swept; set only vars that are not", k, k)}
			}
		}
	}
	const maxPoints = 1_000_000
	if n := scenarios.CountPoints(base.Sweep, maxPoints+1); n > maxPoints {
		return fmt.Errorf("%s: the sweep has more than %d points", base.File, maxPoints)
	}
	points := scenarios.Points(base.Sweep)
	table := &sweepTable{Scenario: base.Name, Total: len(points)}
	for _, sv := range base.Sweep {
		table.Vars = append(table.Vars, sv.Name)
	}
	if shardN > 1 {
		table.Shard = fmt.Sprintf("%d/%d", shardI, shardN)
	}
	done := map[int]sweepRow{}
	if *resume {
		prev, err := readSweepFile(*csvOut)
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return err
		}
		if prev != nil {
			if strings.Join(prev.Vars, ",") != strings.Join(table.Vars, ",") || prev.Total != table.Total {
				return fmt.Errorf("%s: it holds a different sweep (vars %v, %d points) than %s (vars %v, %d points)", *csvOut, prev.Vars, prev.Total, base.File, table.Vars, table.Total)
			}
			for _, r := range prev.Rows {
				done[r.Index] = r
			}
		}
	}
	var todo []int
	for i := range points {
		if i%shardN != shardI {
			continue
		}
		if _, ok := done[i]; ok {
			continue
		}
		todo = append(todo, i)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	results := make(chan sweepRow)
	next := make(chan int)
	var wg sync.WaitGroup
	for w := 0; w < *jobs; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results <- runPoint(pos[0], base, points[i], i, set, *maxOps, *strict)
			}
		}()
	}
	go func() {
		defer close(next)
		for _, i := range todo {
			select {
			case <-ctx.Done():
				return
			case next <- i:
			}
		}
	}()
	go func() { wg.Wait(); close(results) }()
	bar := newProgress(stderr, len(todo))
	for r := range results {
		done[r.Index] = r
		bar.step()
	}
	bar.finish()
	interrupted := ctx.Err() != nil
	for i := range points {
		if r, ok := done[i]; ok && i%shardN == shardI {
			table.Rows = append(table.Rows, r)
		}
	}
	table.Partial = interrupted
	warnPoints(stderr, table, done, todo)
	if *csvOut != "" {
		if err := writeFileAtomic(*csvOut, func(w io.Writer) error { return writeSweepCSV(w, table) }); err != nil {
			return err
		}
	}
	if *asJSON {
		if err := writeSweepJSON(stdout, table); err != nil {
			return &failError{err}
		}
	} else if *csvOut == "" || !interrupted {
		writeSweepText(stdout, table)
	}
	if *plotTo != "" {
		if len(table.Rows) == 0 {
			fmt.Fprintf(stderr, "warning: no points in this shard: %s not drawn\n", filepath.Join(*plotTo, "sweep.png"))
		} else if err := plotSweep(*plotTo, table, *metric); err != nil {
			return err
		}
	}
	if interrupted {
		return &failError{fmt.Errorf("interrupted: %d of %d points done; the file is marked partial: rerun with --resume to finish it", len(table.Rows), countShard(len(points), shardI, shardN))}
	}
	return failedPoints(table)
}

// maxWarnedPoints bounds the points whose warnings a sweep prints.
const maxWarnedPoints = 10

// warnPoints prints, in point order, the first warning of each point run
// now (todo) that had any, as gpusim run prints a run's; a sweep of many
// points prints the first few and counts the rest.
func warnPoints(stderr io.Writer, t *sweepTable, done map[int]sweepRow, todo []int) {
	run := append([]int(nil), todo...)
	sort.Ints(run)
	n := 0
	for _, i := range run {
		r, ok := done[i]
		if !ok || len(r.Warnings) == 0 || r.Error != "" {
			continue
		}
		n++
		if n > maxWarnedPoints {
			continue
		}
		more := ""
		if len(r.Warnings) > 1 {
			more = fmt.Sprintf(" (and %s; gpusim run with the point's values as --set shows them all)", plural(len(r.Warnings)-1, "one more", "%d more"))
		}
		fmt.Fprintf(stderr, "warning: point %d (%s): %s%s\n", r.Index, pointValues(t, r), r.Warnings[0], more)
	}
	if n > maxWarnedPoints {
		fmt.Fprintf(stderr, "warning: and %d more points with warnings (--json lists each point's)\n", n-maxWarnedPoints)
	}
}

// pointValues is a point's "var=value, ..." for messages.
func pointValues(t *sweepTable, r sweepRow) string {
	var vals []string
	for k, name := range t.Vars {
		if k < len(r.Values) {
			vals = append(vals, name+"="+r.Values[k])
		}
	}
	return strings.Join(vals, ", ")
}

// failedPoints is the input error of a sweep with points that failed (exit
// status 2, after the table with the points that ran): how many, and the
// first one's values and error.
func failedPoints(t *sweepTable) error {
	n, first := 0, -1
	for i, r := range t.Rows {
		if r.Error != "" {
			if n == 0 {
				first = i
			}
			n++
		}
	}
	if n == 0 {
		return nil
	}
	r := t.Rows[first]
	return fmt.Errorf("gpusim sweep: %d of %d points failed; the first, point %d (%s): %s", n, len(t.Rows), r.Index, pointValues(t, r), r.Error)
}

func countShard(total, i, n int) int {
	c := 0
	for k := 0; k < total; k++ {
		if k%n == i {
			c++
		}
	}
	return c
}

// plotDirUsable is the error of a --plot DIR that cannot be a directory (it,
// or the nearest of its parents that exists, is a file), or nil: it is
// checked before a sweep runs, as --csv is, rather than after, and fails
// as the drawing would (exit status 1).
func plotDirUsable(dir string) error {
	if dir == "" {
		return nil
	}
	for p := filepath.Clean(dir); ; p = filepath.Dir(p) {
		st, err := os.Stat(p)
		if err == nil {
			if st.IsDir() {
				return nil
			}
			return &failError{fmt.Errorf("cannot make the plot directory %s: %s is a file; name a directory, or one to make", dir, p)}
		}
		if !errors.Is(err, os.ErrNotExist) && !errors.Is(err, syscall.ENOTDIR) {
			return &failError{fmt.Errorf("cannot make the plot directory %s: %v", dir, unwrapPath(err))}
		}
		if filepath.Dir(p) == p {
			return nil
		}
	}
}

// shardOf reads --shard i/n, or the batch system's environment; shards is
// --shards, given or not (--shards 0 is a count, refused, not the default).
func shardOf(flagValue string, shards int, shardsGiven bool) (int, int, error) {
	parse := func(i, n string, what string) (int, int, error) {
		a, err1 := strconv.Atoi(strings.TrimSpace(i))
		b, err2 := strconv.Atoi(strings.TrimSpace(n))
		if err1 != nil || err2 != nil || b < 1 || a < 0 || a >= b {
			return 0, 0, &usageError{fmt.Sprintf("gpusim sweep: %s: want an index i and a count n with 0 <= i < n", what)}
		}
		return a, b, nil
	}
	_, slurm := os.LookupEnv("SLURM_ARRAY_TASK_ID")
	if shardsGiven && (flagValue != "" || slurm) {
		return 0, 0, &usageError{"gpusim sweep: --shards goes with Kubernetes' JOB_COMPLETION_INDEX; here --shard or Slurm's SLURM_ARRAY_TASK_ID/COUNT already give the shard: drop --shards"}
	}
	if shardsGiven && shards < 1 {
		return 0, 0, &usageError{fmt.Sprintf("gpusim sweep: --shards %d: want the number of shards, at least 1", shards)}
	}
	if flagValue != "" {
		i, n, ok := strings.Cut(flagValue, "/")
		if !ok {
			return 0, 0, &usageError{fmt.Sprintf("gpusim sweep: --shard %q: write it as i/n, such as 0/4", flagValue)}
		}
		return parse(i, n, "--shard "+flagValue)
	}
	if id, ok := os.LookupEnv("SLURM_ARRAY_TASK_ID"); ok {
		// An array of n tasks numbered from SLURM_ARRAY_TASK_MIN (sbatch
		// --array=1-3 numbers them 1, 2 and 3) is shards 0 to n-1.
		count := os.Getenv("SLURM_ARRAY_TASK_COUNT")
		lo, hasMin := os.LookupEnv("SLURM_ARRAY_TASK_MIN")
		what := "SLURM_ARRAY_TASK_ID=" + id
		if hasMin {
			what += " SLURM_ARRAY_TASK_MIN=" + lo
		} else {
			lo = "0"
		}
		what += " SLURM_ARRAY_TASK_COUNT=" + count
		a, err1 := strconv.Atoi(strings.TrimSpace(id))
		b, err2 := strconv.Atoi(strings.TrimSpace(lo))
		n, err3 := strconv.Atoi(strings.TrimSpace(count))
		if err1 != nil || err2 != nil || err3 != nil || n < 1 || a < b || a-b >= n {
			return 0, 0, &usageError{fmt.Sprintf("gpusim sweep: %s: want a task id from SLURM_ARRAY_TASK_MIN (0 if not set) to MIN+COUNT-1, a shard each; an array with a step or gaps, such as --array=0-8:2, is not one: give --shard i/n", what)}
		}
		return a - b, n, nil
	}
	if id, ok := os.LookupEnv("JOB_COMPLETION_INDEX"); ok {
		if !shardsGiven {
			return 0, 0, &usageError{"gpusim sweep: JOB_COMPLETION_INDEX is set: give the shard count with --shards N"}
		}
		return parse(id, strconv.Itoa(shards), "JOB_COMPLETION_INDEX="+id)
	}
	if shardsGiven {
		return 0, 0, &usageError{fmt.Sprintf("gpusim sweep: --shards %d counts the shards of a Kubernetes Indexed Job, whose JOB_COMPLETION_INDEX is not set here: run one shard with --shard i/n", shards)}
	}
	return 0, 1, nil
}

// runPoint loads and runs one point of the sweep.
func runPoint(file string, base *scenarios.Scenario, p scenarios.Point, index int, set setFlag, maxOps int64, strict bool) sweepRow {
	row := sweepRow{Index: index, Values: append([]string(nil), p...)}
	sc, err := loadScenarioWith(file, scenarios.Options{Set: set, Point: p.Set(base.Sweep), MaxOps: maxOps})
	if err != nil {
		row.Error = oneLine(err.Error())
		return row
	}
	row.topology = sc.Topology.Name
	res, err := sim.RunOptions(sc.Topology.Machine, sc.Program, sim.Options{NoLoadSeries: true})
	if err != nil {
		row.Error = oneLine(err.Error())
		return row
	}
	row.Warnings = res.Warnings
	if strict && len(res.Warnings) > 0 {
		row.Error = oneLine(fmt.Sprintf("--strict makes %s an error: %s", plural(len(res.Warnings), "its warning", "its %d warnings"), res.Warnings[0]))
		return row
	}
	row.MakespanS = res.Makespan.Seconds()
	row.IdleMean, row.IdleMax, row.GPUIdle = idleOfGPUs(res)
	if l, name, ok := res.BusiestLink(); ok {
		row.Link, row.LinkUtil = name, l.Utilization(res.Makespan)
	}
	row.Bottleneck = res.Bottleneck()
	return row
}

// idleOfGPUs returns the mean and the largest idle fraction of the GPUs
// that run ops of their own (all of them where none does), and every GPU's.
// A GPU the scenario leaves alone (seven of a DGX's eight in a one-GPU
// study) is idle throughout, and would say so of the machine, not of the
// workload: a mean over it read 88-94% where the one GPU in use idled 2-53%.
func idleOfGPUs(res *sim.Result) (mean, most float64, per []gpuShare) {
	var sum float64
	n := 0
	someRun := false
	for _, g := range res.GPUs {
		someRun = someRun || g.Kernels+g.Copies+g.Collectives > 0
	}
	for _, g := range res.GPUs {
		f := 0.0
		if res.Makespan > 0 {
			f = float64(g.Idle()) / float64(res.Makespan)
		}
		per = append(per, gpuShare{g.Name, f})
		if someRun && g.Kernels+g.Copies+g.Collectives == 0 {
			continue
		}
		sum += f
		n++
		most = max(most, f)
	}
	if n > 0 {
		mean = sum / float64(n)
	}
	return mean, most, per
}

func oneLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

// fmtF writes a float of the CSV in the fewest digits that read back as
// the same float, so that shards merged from their CSVs give the bytes
// of the sweep run in one go (six digits once lost the rest). Older CSVs,
// with six, read as they are.
func fmtF(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }

func writeSweepCSV(w io.Writer, t *sweepTable) error {
	bw := bufio.NewWriter(w)
	state := "complete"
	if t.Partial {
		state = "partial"
	}
	shard := ""
	if t.Shard != "" {
		shard = " shard " + t.Shard
	}
	fmt.Fprintf(bw, "# gpusim sweep %s: %s, %d of %d points%s\n", t.Scenario, state, len(t.Rows), t.Total, shard)
	cw := csv.NewWriter(bw)
	header := append(append([]string{"point"}, t.Vars...), "makespan_s", "idle_mean", "idle_max", "idle_per_gpu", "busiest_link", "busiest_link_util", "bottleneck", "error")
	cw.Write(header)
	for _, r := range t.Rows {
		var idle []string
		for _, g := range r.GPUIdle {
			idle = append(idle, g.GPU+"="+fmtF(g.Idle))
		}
		rec := append(append([]string{strconv.Itoa(r.Index)}, r.Values...), fmtF(r.MakespanS), fmtF(r.IdleMean), fmtF(r.IdleMax),
			strings.Join(idle, " "), r.Link, fmtF(r.LinkUtil), r.Bottleneck, r.Error)
		cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

func writeSweepJSON(w io.Writer, t *sweepTable) error {
	b, err := json.MarshalIndent(t, "", " ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

func writeSweepText(w io.Writer, t *sweepTable) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprint(tw, "point\t")
	for _, v := range t.Vars {
		fmt.Fprint(tw, v+"\t")
	}
	fmt.Fprintln(tw, "makespan\tidle mean\tidle max\tbusiest link\tutil\tbottleneck")
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%d\t", r.Index)
		for _, v := range r.Values {
			fmt.Fprint(tw, v+"\t")
		}
		if r.Error != "" {
			fmt.Fprintf(tw, "error\t\t\t\t\t%s\n", r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t%s\t%.0f%%\t%s\n", sim.Time(r.MakespanS*1e12+0.5), 100*r.IdleMean, 100*r.IdleMax, r.Link, 100*r.LinkUtil, r.Bottleneck)
	}
	tw.Flush()
}

// readSweepFile reads a table written by --csv or --json.
func readSweepFile(name string) (*sweepTable, error) {
	data, err := os.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", name, unwrapPath(err))
	}
	if t := bytes.TrimSpace(data); len(t) > 0 && t[0] == '{' {
		var tab sweepTable
		if err := json.Unmarshal(data, &tab); err != nil {
			return nil, fmt.Errorf("%s: not a sweep table: %v", name, err)
		}
		return &tab, nil
	}
	return parseSweepCSV(name, data)
}

func parseSweepCSV(name string, data []byte) (*sweepTable, error) {
	t := &sweepTable{}
	lines := strings.SplitN(string(data), "\n", 2)
	if len(lines) < 2 || !strings.HasPrefix(lines[0], "# gpusim sweep ") {
		return nil, fmt.Errorf("%s:1:1: not a sweep table written by gpusim sweep --csv", name)
	}
	head := strings.TrimPrefix(lines[0], "# gpusim sweep ")
	scen, rest, _ := strings.Cut(head, ": ")
	t.Scenario = scen
	var state string
	var n int
	if _, err := fmt.Sscanf(rest, "%s %d of %d points", &state, &n, &t.Total); err != nil {
		return nil, fmt.Errorf("%s:1:1: cannot read the header %q", name, lines[0])
	}
	t.Partial = strings.TrimSuffix(state, ",") == "partial"
	if i := strings.Index(rest, " shard "); i >= 0 {
		t.Shard = strings.TrimSpace(rest[i+len(" shard "):])
	}
	cr := csv.NewReader(strings.NewReader(lines[1]))
	recs, err := cr.ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %v", name, err)
	}
	if len(recs) == 0 {
		return nil, fmt.Errorf("%s:2:1: no header row", name)
	}
	h := recs[0]
	nv := len(h) - 9
	if nv < 0 || h[0] != "point" {
		return nil, fmt.Errorf("%s:2:1: unexpected columns %v", name, h)
	}
	t.Vars = h[1 : 1+nv]
	for ln, rec := range recs[1:] {
		if len(rec) != len(h) {
			return nil, fmt.Errorf("%s:%d:1: %d fields, the header has %d", name, ln+3, len(rec), len(h))
		}
		var r sweepRow
		var err error
		if r.Index, err = strconv.Atoi(rec[0]); err != nil {
			return nil, fmt.Errorf("%s:%d:1: bad point %q", name, ln+3, rec[0])
		}
		r.Values = rec[1 : 1+nv]
		f := rec[1+nv:]
		r.MakespanS, _ = strconv.ParseFloat(f[0], 64)
		r.IdleMean, _ = strconv.ParseFloat(f[1], 64)
		r.IdleMax, _ = strconv.ParseFloat(f[2], 64)
		for _, kv := range strings.Fields(f[3]) {
			g, v, _ := strings.Cut(kv, "=")
			x, _ := strconv.ParseFloat(v, 64)
			r.GPUIdle = append(r.GPUIdle, gpuShare{g, x})
		}
		r.Link = f[4]
		r.LinkUtil, _ = strconv.ParseFloat(f[5], 64)
		r.Bottleneck, r.Error = f[6], f[7]
		t.Rows = append(t.Rows, r)
	}
	return t, nil
}

func cmdSweepMerge(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("sweep merge", sweepMergeSynopsis, stderr)
	csvOut := fs.String("csv", "", "write the merged table as CSV to `FILE`")
	asJSON := fs.Bool("json", false, "print the merged table as JSON")
	plotTo := fs.String("plot", "", "write sweep.png of the merged table into `DIR`")
	metric := fs.String("metric", "makespan", "the metric --plot draws: "+sweepMetricNames())
	if helpRequested(fs, sweepMergeSynopsis, args, stdout) {
		return nil
	}
	files, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return &usageError{"usage: " + sweepMergeSynopsis}
	}
	if err := checkSweepMetric(fs, "sweep merge", *metric, *plotTo); err != nil {
		return err
	}
	if err := plotDirUsable(*plotTo); err != nil {
		return err
	}
	var merged *sweepTable
	rows := map[int]sweepRow{}
	for _, f := range files {
		t, err := readSweepFile(f)
		if err != nil {
			return err
		}
		if merged == nil {
			merged = &sweepTable{Scenario: t.Scenario, Vars: t.Vars, Total: t.Total}
		} else if strings.Join(t.Vars, ",") != strings.Join(merged.Vars, ",") || t.Total != merged.Total || t.Scenario != merged.Scenario {
			return fmt.Errorf("%s: a different sweep (%s, vars %v, %d points) than %s (%s, vars %v, %d points)", f, t.Scenario, t.Vars, t.Total, files[0], merged.Scenario, merged.Vars, merged.Total)
		}
		merged.Partial = merged.Partial || t.Partial
		for _, r := range t.Rows {
			rows[r.Index] = r
		}
	}
	var idx []int
	for i := range rows {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		merged.Rows = append(merged.Rows, rows[i])
	}
	if len(merged.Rows) < merged.Total {
		merged.Partial = true
		fmt.Fprintf(stderr, "warning: the shards hold %d of %d points\n", len(merged.Rows), merged.Total)
	}
	if *csvOut != "" {
		if err := writeFileAtomic(*csvOut, func(w io.Writer) error { return writeSweepCSV(w, merged) }); err != nil {
			return err
		}
	}
	if *asJSON {
		if err := writeSweepJSON(stdout, merged); err != nil {
			return &failError{err}
		}
	} else if *csvOut == "" {
		writeSweepText(stdout, merged)
	}
	if *plotTo != "" && len(merged.Rows) > 0 {
		if err := plotSweep(*plotTo, merged, *metric); err != nil {
			return err
		}
	}
	return failedPoints(merged)
}

// progress draws a bar on stderr when stderr is a terminal.
type progress struct {
	w     io.Writer
	on    bool
	total int
	n     int
	what  string // after the count: "points" unless set by at
	width int    // of the last line drawn, to blank it out
}

func newProgress(w io.Writer, total int) *progress {
	p := &progress{w: w, total: total}
	if f, ok := w.(*os.File); ok {
		if st, err := f.Stat(); err == nil && st.Mode()&os.ModeCharDevice != 0 {
			p.on = true
		}
	}
	p.draw()
	return p
}

func (p *progress) step() { p.n++; p.draw() }

// at moves the bar to done of total, saying what was just done.
func (p *progress) at(done, total int, what string) {
	p.n, p.total, p.what = done, total, what
	p.draw()
}

func (p *progress) draw() {
	if !p.on || p.total == 0 {
		return
	}
	const width = 30
	fill := min(width, p.n*width/p.total)
	what := p.what
	if what == "" {
		what = "points"
	}
	line := fmt.Sprintf("\r[%s%s] %d/%d %s", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), p.n, p.total, what)
	pad := max(0, p.width-len(line))
	p.width = len(line)
	fmt.Fprint(p.w, line+strings.Repeat(" ", pad))
}

func (p *progress) finish() {
	if p.on && p.total > 0 {
		fmt.Fprintln(p.w)
	}
}
