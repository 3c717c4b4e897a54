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
	"maps"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"text/tabwriter"
	"unicode"
	"unicode/utf8"

	"gpusim/scenarios"
	"gpusim/sim"
)

const (
	sweepSynopsis      = "gpusim sweep SCENARIO [-j N] [--csv FILE] [--json] [--plot DIR [--metric M]] [--shard i/n | --shards N] [--resume] [--strict] [--set k=v]... [--max-ops N]"
	sweepMergeSynopsis = "gpusim sweep merge FILE... [--csv FILE] [--json] [--plot DIR [--metric M]]"
)

// maxPoints is the most points a sweep may have; a table that says it has
// more was not written by gpusim sweep.
const maxPoints = 1_000_000

// maxJobs bounds -j: points run on the CPUs, and each running point holds
// its whole run (hundreds of MB for a large one).
const maxJobs = 256

// sweepRow is one point of a sweep.
type sweepRow struct {
	Index      int        `json:"point"`
	Values     []string   `json:"values"`
	Topology   string     `json:"topology,omitempty"`
	MakespanS  float64    `json:"makespan_s"`
	IdleMean   float64    `json:"idle_mean"`
	IdleMax    float64    `json:"idle_max"`
	GPUIdle    []gpuShare `json:"idle_per_gpu"`
	Link       string     `json:"busiest_link"`
	LinkUtil   float64    `json:"busiest_link_util"`
	Bottleneck string     `json:"bottleneck"`
	Error      string     `json:"error,omitempty"`
	// A training's rates and model FLOPs utilization (sim.Work), where the
	// point has them.
	SamplesPerS *float64 `json:"samples_per_s,omitempty"`
	TokensPerS  *float64 `json:"tokens_per_s,omitempty"`
	MFU         *float64 `json:"mfu,omitempty"`
	// ComputeMean is the mean share of the makespan the GPUs in use ran
	// kernels (none in a table of an older gpusim): what idle leaves out,
	// a GPU waiting on its copies.
	ComputeMean *float64 `json:"compute_mean,omitempty"`
	// An inference's time to its first token and time a token after it,
	// in seconds (sim.Result.TokenTimes): none for other work, and no
	// per-token time for a generation of one token.
	FirstTokenS *float64 `json:"first_token_s,omitempty"`
	PerTokenS   *float64 `json:"per_token_s,omitempty"`
	// Warnings are the simulator's warnings for the point (in a CSV, one
	// field, a line each).
	Warnings []string `json:"warnings,omitempty"`
	at       *rowAt   // where a row read back from a file is (not written)
}

// MarshalJSON writes a failed point without the measures it does not
// have: a makespan of 0 and no GPUs read as a result.
func (r sweepRow) MarshalJSON() ([]byte, error) {
	type plain sweepRow // without this method
	var v any = plain(r)
	if r.Error != "" {
		v = struct {
			Index    int      `json:"point"`
			Values   []string `json:"values"`
			Topology string   `json:"topology,omitempty"`
			Error    string   `json:"error"`
			Warnings []string `json:"warnings,omitempty"`
		}{r.Index, r.Values, r.Topology, r.Error, r.Warnings}
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // a link's "a->b" as it is
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

type gpuShare struct {
	GPU  string  `json:"gpu"`
	Idle float64 `json:"idle"`
}

// sweepTable is a sweep's results, complete or partial.
type sweepTable struct {
	Scenario string   `json:"scenario"`
	Vars     []string `json:"vars"`
	Total    int      `json:"points_total"`
	Shard    string   `json:"shard,omitempty"`
	// Set is the run's --set values (none in a CSV of an older gpusim):
	// points run with others are not resumed or merged with them.
	Set     map[string]string `json:"set,omitempty"`
	Partial bool              `json:"partial"`
	Rows    []sweepRow        `json:"rows"`
	at      *tableAt          // where a table read back from a file is (not written)
	// old marks a CSV of an older gpusim, without a training's rates;
	// older, a table of one without the GPUs' compute and the points'
	// topology and warnings (old tables are older too).
	old, older bool
	// tokenless marks a CSV without the token times' columns (an older
	// gpusim's).
	tokenless bool
	// claimed is the count of rows a CSV's first line gives (-1 for a
	// table without one: JSON).
	claimed int
}

// olderWhat says what an older gpusim's table lacks.
func (t *sweepTable) olderWhat() string {
	if t.old {
		return "a training's rates, the GPUs' compute, the points' topology and warnings"
	}
	return "the GPUs' compute, the points' topology and warnings"
}

// tokenTimes reports whether a row of t has an inference's token times,
// and whether a point that ran has none: all of an inference's points
// that ran have them, unless an older gpusim wrote the table.
func (t *sweepTable) tokenTimes() (has, lacks bool) {
	for _, r := range t.Rows {
		has = has || r.FirstTokenS != nil
		lacks = lacks || r.Error == "" && r.FirstTokenS == nil
	}
	return has, lacks
}

// hasRates reports whether a row of t has a training's rates.
func (t *sweepTable) hasRates() bool {
	for _, r := range t.Rows {
		if r.SamplesPerS != nil {
			return true
		}
	}
	return false
}

func cmdSweep(args []string, stdout, stderr io.Writer) error {
	if len(args) > 0 && args[0] == "merge" {
		return cmdSweepMerge(args[1:], stdout, stderr)
	}
	fs := newFlagSet("sweep", sweepSynopsis, stderr)
	jobs := fs.Int("j", min(runtime.NumCPU(), maxJobs), fmt.Sprintf("run `N` points at once (at most %d)", maxJobs))
	csvOut := fs.String("csv", "", "write the table as CSV to `FILE` (written atomically)")
	asJSON := fs.Bool("json", false, "print the table as JSON")
	shard := fs.String("shard", "", "run only points i, i+n, i+2n, ... (`i/n`); default from SLURM_ARRAY_TASK_ID/COUNT or JOB_COMPLETION_INDEX with --shards")
	shards := fs.Int("shards", 0, "the shard count when JOB_COMPLETION_INDEX gives the index (Kubernetes Indexed Jobs)")
	resume := fs.Bool("resume", false, "keep the points already in --csv FILE and run only the missing ones")
	plotTo := fs.String("plot", "", "write sweep.png into `DIR`: the metric against the first swept var of more than one value, a series per value of the others")
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
	if *jobs < 1 || *jobs > maxJobs {
		// Past the bound it was cut to it without a word.
		return &usageError{fmt.Sprintf("gpusim sweep: -j %d: want 1 to %d points at once", *jobs, maxJobs)}
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
	if err := plotDirUsable("sweep", *plotTo); err != nil {
		return err // before the points run, as --csv
	}
	if *resume && *csvOut == "" {
		return &usageError{"gpusim sweep: --resume needs --csv FILE, the file to resume"}
	}
	if given(fs, "shard") && strings.TrimSpace(*shard) == "" {
		// A script's --shard "$I" with I unset would run the whole sweep.
		return &usageError{"gpusim sweep: --shard is empty: write it as i/n, such as 0/4 (a variable not set?)"}
	}
	shardI, shardN, err := shardOf(*shard, *shards, given(fs, "shards"))
	if err != nil {
		return err
	}
	// Load once with the defaults to learn the sweep.
	base, src, err := loadSweepBase("sweep", pos[0], set, *maxOps, false)
	if err != nil {
		return err
	}
	if len(base.Sweep) == 0 {
		return fmt.Errorf("%s: no sweep: block; add one mapping vars to lists of values, such as sweep: {batch: [64 MiB, 256 MiB]}", base.File)
	}
	// What is said of the file itself is said once, not at every point;
	// --strict makes it an error before any point runs.
	printWarnings(stderr, base.Warnings)
	if *strict && len(base.Warnings) > 0 {
		return fmt.Errorf("%s: --strict makes %s above an error", base.File, plural(len(base.Warnings), "the warning", "the %d warnings"))
	}
	// The scenario, and the topology files its points read: the default
	// point's, and any swept value that names a file beside the scenario.
	inputs := []string{pos[0], base.Topology.File}
	for _, sv := range base.Sweep {
		for _, v := range sv.Values {
			inputs = append(inputs, filepath.Join(filepath.Dir(pos[0]), v))
		}
	}
	if err := notAnInput("sweep", "csv", *csvOut, inputs...); err != nil {
		return err
	}
	// A training's metric of a sweep that trains nothing (or counts no
	// tokens) is refused before its points run.
	if w := base.Program.Work; trainingMetric(*metric) && (w == nil || *metric == "tokens_per_s" && w.Tokens == 0) {
		what := "no training: or inference: block"
		if w != nil {
			what = "a training of listed layers, which counts samples, not tokens"
		}
		return &usageError{fmt.Sprintf("gpusim sweep: --metric %s: %s has %s; a training of a preset model and an inference have tokens_per_s, any training and an inference samples_per_s, any training mfu", *metric, base.File, what)}
	}
	if w := base.Program.Work; *metric == "mfu" && w != nil && w.Kind == "inference" {
		return &usageError{fmt.Sprintf("gpusim sweep: --metric mfu: %s is an inference, which has no MFU; its metrics are first_token, per_token, tokens_per_s and samples_per_s (sequences a second), or makespan", base.File)}
	}
	if w := base.Program.Work; inferenceMetric(*metric) && (w == nil || w.Kind != "inference") {
		return &usageError{fmt.Sprintf("gpusim sweep: --metric %s: %s has no inference: block; an inference's token times are first_token and per_token", *metric, base.File)}
	}
	if err := sweepTooLarge(base); err != nil {
		return err
	}
	points := scenarios.Points(base.Sweep)
	table := &sweepTable{Scenario: base.Name, Total: len(points)}
	if len(set) > 0 {
		table.Set = map[string]string(set)
	}
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
			if what := sweepDiffers(prev, table); what != "" {
				// Another scenario's rows, even of the same vars and
				// count, are another machine's or program's points.
				return fmt.Errorf("%s: it holds a different sweep (%s, vars %s, %d points) than %s (%s, vars %s, %d points): want the --csv FILE this scenario's sweep wrote (or another --csv FILE)", prev.at.where(what), prev.Scenario, strings.Join(prev.Vars, ","), prev.Total, base.File, table.Scenario, strings.Join(table.Vars, ","), table.Total)
			}
			if !maps.Equal(prev.Set, table.Set) && len(prev.Set) == 0 {
				// An older gpusim recorded no --set values at all.
				return fmt.Errorf("%s: it records no --set values (a sweep run without --set, or by a gpusim that did not record them); this run has %s: resume it only as it was run, or give another --csv FILE", prev.at.where("set"), setDesc(table.Set))
			}
			if !maps.Equal(prev.Set, table.Set) {
				return fmt.Errorf("%s: it was run with %s; this run has %s: want the same --set values (or another --csv FILE)", prev.at.where("set"), setDesc(prev.Set), setDesc(table.Set))
			}
			if prev.Shard != table.Shard {
				// Its rows of other points would be dropped from
				// the file written over it.
				return fmt.Errorf("%s: it holds %s; this run is %s: want the --csv FILE of %s (each shard resumes its own file)", prev.at.where("shard"), shardName(prev.Shard), shardName(table.Shard), shardName(table.Shard))
			}
			for _, r := range prev.Rows {
				for k, v := range points[r.Index] {
					if r.Values[k] != v {
						return prev.fieldError(&r, 1+k, "%q for point %d; want %q, the point's value in the sweep of %s (was the row edited, or the file written by a sweep of other values?)", r.Values[k], r.Index, v, base.File)
					}
				}
				done[r.Index] = r
			}
			// A point's row depends on --strict only where it has
			// warnings: rows of the other way run again, so that the
			// table is the one a run in one go with this --strict writes.
			again := 0
			for i, r := range done {
				if failed, differs := strictFailed(&r); differs && failed != *strict {
					delete(done, i)
					again++
				}
			}
			if again > 0 {
				was := "without --strict"
				if !*strict {
					was = "with --strict"
				}
				fmt.Fprintf(stderr, "note: %s was run %s: its %s with warnings run again\n", *csvOut, was, plural(again, "1 point", "%d points"))
			}
			if prev.older && len(prev.Rows) > 0 {
				// Its rows lack what this gpusim's have: they run
				// again, so that the table is the one a run in one go
				// writes.
				fmt.Fprintf(stderr, "note: %s is an older gpusim's, without %s: its %s run again\n", *csvOut, prev.olderWhat(), plural(len(prev.Rows), "1 point", "%d points"))
				clear(done)
			} else if _, lacks := prev.tokenTimes(); lacks && base.Program.Work != nil && base.Program.Work.Kind == "inference" {
				fmt.Fprintf(stderr, "note: %s is an older gpusim's, without an inference's token times: its %s run again\n", *csvOut, plural(len(prev.Rows), "1 point", "%d points"))
				clear(done)
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
	gate := newMemoryGate(memoryNeed(base))
	// More workers than points do nothing, and a worker per point of a
	// large sweep (-j 100000) holds every point's run in memory at once.
	for w := 0; w < min(*jobs, len(todo), maxJobs); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				results <- runPoint(src, base, points[i], i, set, *maxOps, *strict, gate)
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
	// Every point's warnings, those read back with --resume too: the
	// table is the whole shard's.
	var shown []int
	for _, r := range table.Rows {
		shown = append(shown, r.Index)
	}
	warnPoints(stderr, table, done, shown)
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
		saved := "; the file is marked partial: rerun with --resume to finish it"
		if *csvOut == "" {
			saved = "; without --csv nothing was saved (with --csv FILE, --resume finishes a sweep)"
		}
		return &failError{fmt.Errorf("interrupted: %d of %d points done%s", len(table.Rows), countShard(len(points), shardI, shardN), saved)}
	}
	return failedPoints(table)
}

// setsSwept refuses a --set of a var the sweep sets. With hold (validate,
// checking one point), a var swept on its own may be held; one var of a
// group (layout: [{tensor: 2, stages: 4}, ...]) cannot be held alone.
func setsSwept(cmd string, base *scenarios.Scenario, set setFlag, hold bool) error {
	for _, k := range slices.Sorted(maps.Keys(set)) {
		by, ok := scenarios.Sets(base.Sweep, k)
		switch {
		case !ok || hold && by == k:
		case hold:
			return &usageError{fmt.Sprintf("gpusim %s: --set %s: %s is swept, by %s; hold %s instead (--set %s=one of its values), or leave %s out", cmd, k, k, by, by, by, k)}
		case by == k:
			return &usageError{fmt.Sprintf("gpusim %s: --set %s: %s is swept; set only vars that are not", cmd, k, k)}
		default:
			return &usageError{fmt.Sprintf("gpusim %s: --set %s: %s is swept, by %s; set only vars that are not", cmd, k, k, by)}
		}
	}
	return nil
}

// maxBaseTries is how many points after the first a sweep loads to find
// one that loads, where the first's values fail: each failed load is
// quick, and a sweep whose first 64 fail is likely wrong in all.
const maxBaseTries = 64

// loadSweepBase loads a scenario with --set values and checks them with
// setsSwept; where the load fails and a --set is the mistake setsSwept
// names, that is said, whatever its value. For gpusim sweep, where the
// first point's values fail, the base is the next point that loads.

func loadSweepBase(cmd, name string, set setFlag, maxOps int64, hold bool) (*scenarios.Scenario, *scenarioSource, error) {
	// The base is the first point, expanded: one too large for memory is
	// refused before it is (validate runs nothing, and needs only the
	// memory to load it).
	opt := scenarios.Options{Set: set, MaxOps: maxOps, MemoryOps: memoryOps()}
	if cmd != "sweep" {
		// Loading alone: a fifth of the memory an op, but all of a
		// collective's plan.
		opt.PlanTasks = planTasksFor(opt.MemoryOps)
		opt.MemoryOps = expandOps()
	}
	src, err := openScenario(name)
	if err != nil {
		return nil, nil, err
	}
	var swept []scenarios.SweepVar
	if cmd == "sweep" {
		opt.SweepRead = &swept
	}
	base, err := src.load(opt)
	if err != nil && len(swept) > 0 {
		// The first point's values fail, or it is too large for the
		// memory free, not the sweep: another point is the base, and the
		// first a failed point of the table, as any other point that
		// fails. The first point's error stands where none of the next
		// maxBaseTries loads.
		points := scenarios.Points(swept)
		for i := 1; i < len(points) && i <= maxBaseTries; i++ {
			o := opt
			o.SweepRead, o.Point = nil, points[i].Set(swept)
			// A point too large for memory is refused before it
			// expands: the next may be smaller.
			if b, perr := src.load(o); perr == nil {
				base, err = b, nil
				break
			}
		}
	}
	me, pe := (*scenarios.MemoryError)(nil), (*scenarios.PlanMemoryError)(nil)
	if errors.As(err, &me) || errors.As(err, &pe) {
		if cmd != "sweep" {
			return nil, nil, asLoadFailure(err, "")
		}
		return nil, nil, asMemoryFailure(err, " (the sweep's first point, which sweep loads to read the sweep)")
	}
	if err != nil && len(set) > 0 {
		// Without the --set values, and as bounded by memory as the
		// load above: only to say which --set is the mistake.
		if plain, perr := src.load(scenarios.Options{MaxOps: maxOps, MemoryOps: opt.MemoryOps, PlanTasks: opt.PlanTasks}); perr == nil {
			if serr := setsSwept(cmd, plain, set, hold); serr != nil {
				return nil, nil, serr
			}
		}
	}
	if err != nil {
		return nil, nil, err
	}
	if err := setsSwept(cmd, base, set, hold); err != nil {
		return nil, nil, err
	}
	return base, src, nil
}

// sweepTooLarge refuses a sweep of more than maxPoints points.
func sweepTooLarge(base *scenarios.Scenario) error {
	if n := scenarios.CountPoints(base.Sweep, maxPoints+1); n > maxPoints {
		var counts []string
		for _, sv := range base.Sweep {
			counts = append(counts, fmt.Sprintf("%d values of %s", len(sv.Values), sv.Name))
		}
		return fmt.Errorf("%s: the sweep has more than %d points (%s, each with each); want at most %d: list fewer values, or split the study into several", base.SweepAt, maxPoints, strings.Join(counts, " by "), maxPoints)
	}
	return nil
}

// maxWarnedPoints bounds the points whose warnings a sweep prints.
const maxWarnedPoints = 10

// warnPoints prints, in point order, the first warning of each of the
// points (their rows in done) that had any, as gpusim run prints a run's;
// a sweep of many points prints the first few and counts the rest.
func warnPoints(stderr io.Writer, t *sweepTable, done map[int]sweepRow, points []int) {
	run := append([]int(nil), points...)
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
// as the drawing would (exit status 1). A folder not made yet whose name
// is a picture's (out.png) is a usage error: --plot names a file only for
// nccl-tests and nvbandwidth.
func plotDirUsable(cmd, dir string) error {
	if dir == "" {
		return nil
	}
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		// run --plot out.png made a folder named out.png: --plot of
		// run, sweep and replay names a folder, of nccl-tests a file.
		if ext := strings.ToLower(filepath.Ext(dir)); ext == ".png" || ext == ".svg" || ext == ".pdf" {
			return &usageError{fmt.Sprintf("gpusim %s: --plot %s: --plot names a folder to write the pictures into, not a picture's file; name a folder, such as plots", cmd, dir)}
		}
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

// parseShard reads "i/n", a shard of a sweep: 0 <= i < n.
func parseShard(s string) (i, n int, ok bool) {
	a, b, ok := strings.Cut(s, "/")
	i, err1 := strconv.Atoi(strings.TrimSpace(a))
	n, err2 := strconv.Atoi(strings.TrimSpace(b))
	return i, n, ok && err1 == nil && err2 == nil && n >= 1 && i >= 0 && i < n
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
		if !strings.Contains(flagValue, "/") {
			return 0, 0, &usageError{fmt.Sprintf("gpusim sweep: --shard %q: write it as i/n, such as 0/4", flagValue)}
		}
		i, n, ok := parseShard(flagValue)
		if !ok {
			return 0, 0, &usageError{fmt.Sprintf("gpusim sweep: --shard %s: want an index i and a count n with 0 <= i < n", flagValue)}
		}
		return i, n, nil
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
		// A step (SLURM_ARRAY_TASK_STEP) or gaps (MAX-MIN+1 is not the
		// count) leave shards no task runs: every task refuses, not only
		// those whose id falls past the count.
		gaps := false
		if step, ok := os.LookupEnv("SLURM_ARRAY_TASK_STEP"); ok && strings.TrimSpace(step) != "1" {
			gaps = true
			what += " SLURM_ARRAY_TASK_STEP=" + step
		}
		if hi, ok := os.LookupEnv("SLURM_ARRAY_TASK_MAX"); ok {
			if m, err := strconv.Atoi(strings.TrimSpace(hi)); err != nil || m-b+1 != n {
				gaps = true
				what += " SLURM_ARRAY_TASK_MAX=" + hi
			}
		}
		if gaps || err1 != nil || err2 != nil || err3 != nil || n < 1 || a < b || a-b >= n {
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
func runPoint(src *scenarioSource, base *scenarios.Scenario, p scenarios.Point, index int, set setFlag, maxOps int64, strict bool, gate *memoryGate) sweepRow {
	row := sweepRow{Index: index, Values: append([]string(nil), p...)}
	load := func() (*scenarios.Scenario, error) {
		return src.load(scenarios.Options{Set: set, Point: p.Set(base.Sweep), MaxOps: maxOps, MemoryOps: gate.ops()})
	}
	// The point loads holding the memory the sweep's first point needs
	// (loading takes a share of a run's), then holds its own need.
	took := gate.take(gate.estimate)
	sc, err := load()
	if err != nil {
		gate.give(took)
		row.Error = oneLine(asMemoryFailure(err, "").Error())
		return row
	}
	// A point that alone needs more memory than is free fails, rather
	// than the whole sweep dying in the Go runtime; the others wait for
	// memory the points running take.
	if err := gate.check(sc); err != nil {
		gate.give(took)
		row.Error = oneLine(err.Error())
		return row
	}
	need := memoryNeed(sc)
	var ok bool
	if took, ok = gate.resize(took, need); !ok {
		sc = nil // not held while it waits
		took = gate.take(need)
		if sc, err = load(); err != nil {
			gate.give(took)
			row.Error = oneLine(asMemoryFailure(err, "").Error())
			return row
		}
	}
	defer gate.give(took)
	row.Topology = sc.Topology.Name
	if sweepRunHook != nil {
		sweepRunHook(1)
		defer sweepRunHook(-1)
	}
	res, err := sim.RunOptions(sc.Topology.Machine, sc.Program, sim.Options{NoLoadSeries: true})
	if err != nil {
		row.Error = oneLine(err.Error())
		return row
	}
	row.Warnings = res.Warnings
	if strict && len(res.Warnings) > 0 {
		row.Error = oneLine(fmt.Sprintf(strictPrefix+"%s an error: %s", plural(len(res.Warnings), "its warning", "its %d warnings"), res.Warnings[0]))
		return row
	}
	row.MakespanS = res.Makespan.Seconds()
	row.IdleMean, row.IdleMax, row.GPUIdle = idleOfGPUs(res)
	row.ComputeMean = ptr(computeOfGPUs(res))
	if l, name, ok := res.BusiestLink(); ok {
		// At most 1: a link busy the whole run can add up to a hair over.
		row.Link, row.LinkUtil = name, min(1, l.Utilization(res.Makespan))
	}
	row.Bottleneck = res.Bottleneck()
	if w := sc.Program.Work; w != nil && res.Makespan > 0 {
		secs := res.Makespan.Seconds()
		row.SamplesPerS = ptr(w.Samples / secs)
		if w.Tokens > 0 {
			row.TokensPerS = ptr(w.Tokens / secs)
		}
		if mfu, ok := w.MFU(res.Makespan); ok {
			row.MFU = ptr(mfu)
		}
		if first, per, ok := res.TokenTimes(); ok {
			row.FirstTokenS = ptr(first.Seconds())
			if w.Steps > 1 {
				row.PerTokenS = ptr(per.Seconds())
			}
		}
	}
	return row
}

// strictPrefix starts the error of a point --strict failed for its
// warnings.
const strictPrefix = "--strict makes "

// strictFailed says whether --strict failed row r for its warnings, or
// ran it without failing it: a row without warnings (or one that failed
// before its run) reads the same with --strict and without.
func strictFailed(r *sweepRow) (failed, differs bool) {
	if len(r.Warnings) == 0 {
		return false, false
	}
	if strings.HasPrefix(r.Error, strictPrefix) {
		return true, true
	}
	return false, r.Error == ""
}

// sweepRunHook, where set (by tests), is called with 1 as a point's run
// starts and -1 as it ends.
var sweepRunHook func(delta int)

func ptr(v float64) *float64 { return &v }

// optF writes an optional number of the CSV: "" for none.
func optF(v *float64) string {
	if v == nil {
		return ""
	}
	return fmtF(*v)
}

// inUse says whether a GPU runs ops of its own, or, where none does,
// counts every GPU. A GPU the scenario leaves alone (seven of a DGX's
// eight in a one-GPU study) is idle throughout, and would say so of the
// machine, not of the workload: a mean over it read 88-94% where the one
// GPU in use idled 2-53%.
func inUse(res *sim.Result) func(g *sim.GPUStats) bool {
	someRun := false
	for _, g := range res.GPUs {
		someRun = someRun || g.Kernels+g.Copies+g.Collectives > 0
	}
	return func(g *sim.GPUStats) bool { return !someRun || g.Kernels+g.Copies+g.Collectives > 0 }
}

// share is t's share of the makespan (0 for none).
func share(res *sim.Result, t sim.Time) float64 {
	if res.Makespan <= 0 {
		return 0
	}
	return float64(t) / float64(res.Makespan)
}

// computeOfGPUs is the mean share of the makespan the GPUs in use ran
// kernels.
func computeOfGPUs(res *sim.Result) float64 {
	used := inUse(res)
	sum, n := 0.0, 0
	for i := range res.GPUs {
		if g := &res.GPUs[i]; used(g) {
			sum += share(res, g.Compute)
			n++
		}
	}
	if n == 0 {
		return 0
	}
	return min(sum/float64(n), 1)
}

// idleOfGPUs returns the mean and the largest idle fraction of the GPUs
// in use, and every GPU's.
func idleOfGPUs(res *sim.Result) (mean, most float64, per []gpuShare) {
	used := inUse(res)
	sum, n := 0.0, 0
	for i := range res.GPUs {
		g := &res.GPUs[i]
		f := share(res, g.Idle())
		per = append(per, gpuShare{g.Name, f})
		if used(g) {
			sum += f
			n++
			most = max(most, f)
		}
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
	set := ""
	if len(t.Set) > 0 {
		set = ", --set " + setJSON(t.Set)
	}
	fmt.Fprintf(bw, "# gpusim sweep %s: %s, %d of %d points%s%s\n", t.Scenario, state, len(t.Rows), t.Total, shard, set)
	cw := csv.NewWriter(bw)
	header := append(append([]string{"point"}, t.Vars...), sweepCols...)
	cw.Write(header)
	for _, r := range t.Rows {
		var idle []string
		for _, g := range r.GPUIdle {
			idle = append(idle, g.GPU+"="+fmtF(g.Idle))
		}
		rec := append(append([]string{strconv.Itoa(r.Index)}, r.Values...), fmtF(r.MakespanS), fmtF(r.IdleMean), fmtF(r.IdleMax),
			strings.Join(idle, " "), r.Link, fmtF(r.LinkUtil), r.Bottleneck, r.Error, optF(r.SamplesPerS), optF(r.TokensPerS), optF(r.MFU),
			optF(r.ComputeMean), r.Topology, strings.Join(r.Warnings, "\n"), optF(r.FirstTokenS), optF(r.PerTokenS))
		cw.Write(rec)
	}
	cw.Flush()
	if err := cw.Error(); err != nil {
		return err
	}
	return bw.Flush()
}

func writeSweepJSON(w io.Writer, t *sweepTable) error {
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // a link's "a->b" as it is
	enc.SetIndent("", " ")
	if t.Rows == nil {
		// A shard of no points (more shards than points) is a list
		// of none, not null: readers iterate over it.
		u := *t
		u.Rows = []sweepRow{}
		t = &u
	}
	return enc.Encode(t)
}

func writeSweepText(w io.Writer, t *sweepTable) {
	tw := tabwriter.NewWriter(w, 2, 4, 2, ' ', 0)
	fmt.Fprint(tw, "point\t")
	for _, v := range t.Vars {
		fmt.Fprint(tw, v+"\t")
	}
	// A training's throughput and MFU, where a point has them: tokens a
	// second if any point counts tokens, else samples; an inference's
	// tokens a second and its token times instead of an MFU.
	work, tokens, infer := false, false, false
	for _, r := range t.Rows {
		work = work || r.SamplesPerS != nil
		tokens = tokens || r.TokensPerS != nil
		infer = infer || r.FirstTokenS != nil
	}
	rateCol, rateCols := "", 0
	switch {
	case infer:
		rateCol, rateCols = "tokens/s\tfirst token\ta token\t", 3
	case work && tokens:
		rateCol, rateCols = "tokens/s\tMFU\t", 2
	case work:
		rateCol, rateCols = "samples/s\tMFU\t", 2
	}
	// The GPUs' compute, where the points have it (not an older
	// gpusim's table).
	compute := false
	for _, r := range t.Rows {
		compute = compute || r.ComputeMean != nil
	}
	computeCol := ""
	if compute {
		computeCol = "compute\t"
	}
	fmt.Fprintln(tw, "makespan\t"+rateCol+computeCol+"idle mean\tidle max\tbusiest link\tutil\tbottleneck")
	for _, r := range t.Rows {
		fmt.Fprintf(tw, "%d\t", r.Index)
		for _, v := range r.Values {
			fmt.Fprint(tw, v+"\t")
		}
		if r.Error != "" {
			fmt.Fprintf(tw, "error\t%s\t\t\t\t%s\n", strings.Repeat("\t", rateCols+btoi(compute)), r.Error)
			continue
		}
		fmt.Fprintf(tw, "%s\t", sim.Time(r.MakespanS*1e12+0.5))
		if rateCols > 0 {
			v := r.SamplesPerS
			if tokens {
				v = r.TokensPerS
			}
			rt := "-"
			if v != nil {
				rt = rate(*v)
			}
			if infer {
				fmt.Fprintf(tw, "%s\t%s\t%s\t", rt, optTime(r.FirstTokenS), optTime(r.PerTokenS))
			} else {
				mfu := "-"
				if r.MFU != nil {
					mfu = fmt.Sprintf("%.1f%%", 100**r.MFU)
				}
				fmt.Fprintf(tw, "%s\t%s\t", rt, mfu)
			}
		}
		if compute {
			c := "-"
			if r.ComputeMean != nil {
				c = fmt.Sprintf("%.1f%%", 100**r.ComputeMean)
			}
			fmt.Fprintf(tw, "%s\t", c)
		}
		fmt.Fprintf(tw, "%.1f%%\t%.1f%%\t%s\t%.0f%%\t%s\n", 100*r.IdleMean, 100*r.IdleMax, r.Link, 100*r.LinkUtil, r.Bottleneck)
	}
	tw.Flush()
}

// optTime writes an optional time in seconds as the summaries write times
// ("-" for none).
func optTime(v *float64) string {
	if v == nil {
		return "-"
	}
	return sim.Time(*v*1e12 + 0.5).String()
}

// sweepCols are the columns of a sweep's CSV after the point and its vars;
// a CSV of an older gpusim ends at "error" (oldSweepCols), without a
// training's rates.
var sweepCols = []string{"makespan_s", "idle_mean", "idle_max", "idle_per_gpu", "busiest_link", "busiest_link_util", "bottleneck", "error", "samples_per_s", "tokens_per_s", "mfu", "compute_mean", "topology", "warnings", "first_token_s", "per_token_s"}

// The columns older gpusims wrote: up to error, then up to mfu (without
// the GPUs' compute, the point's topology and warnings), then up to
// warnings (without an inference's token times).
const (
	oldSweepCols      = 8
	ratesSweepCols    = 11
	warningsSweepCols = 14
)

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// filePos is a place in a file read back: lines count from 1 with the
// file's first (a CSV's # line); columns count characters, not bytes, from
// 1, as editors do. Every message about a table read back names places so.
type filePos struct{ line, col int }

// rowAt is where a row read back from a file is: the place of each of its
// fields, in the CSV's order (point, the vars' values, then sweepCols), and
// each field as written (a CSV's; a JSON row has none).
type rowAt struct {
	file   string
	fields []filePos
	raw    []string
}

// tableAt is where a table read back from a file keeps what its header
// says: "scenario", "points_total", "vars", "shard", "set".
type tableAt struct {
	file string
	head map[string]filePos
}

// where is "FILE:LINE:COL" of what the header says (or the file's start).
func (a *tableAt) where(what string) string {
	p, ok := a.head[what]
	if !ok {
		p = filePos{1, 1}
	}
	return fmt.Sprintf("%s:%d:%d", a.file, p.line, p.col)
}

// where is "FILE:LINE:COL" of field k of the row.
func (a *rowAt) where(k int) string {
	p := a.fields[0]
	if k < len(a.fields) {
		p = a.fields[k]
	}
	return fmt.Sprintf("%s:%d:%d", a.file, p.line, p.col)
}

// colName is the name of field k of a row of t, as the CSV's header has it.
func (t *sweepTable) colName(k int) string {
	switch {
	case k == 0:
		return "point"
	case k <= len(t.Vars):
		return t.Vars[k-1]
	case k-1-len(t.Vars) < len(sweepCols):
		return sweepCols[k-1-len(t.Vars)]
	}
	return fmt.Sprintf("%d", k+1)
}

// fieldError refuses field k of a row read back from a file, in one line:
// FILE:LINE:COL: column NAME: what is wrong; want what would do.
func (t *sweepTable) fieldError(r *sweepRow, k int, format string, a ...any) error {
	return fmt.Errorf("%s: column %s: %s", r.at.where(k), t.colName(k), fmt.Sprintf(format, a...))
}

// rawField is field k of a row as its file wrote it, or v written as the
// CSV would write it.
func (r *sweepRow) rawField(k int, v float64) string {
	if r.at != nil && k < len(r.at.raw) {
		return r.at.raw[k]
	}
	return fmtF(v)
}

// maxSweepFile is the largest sweep table gpusim reads: a sweep of its most
// points (1,000,000) on 72 GPUs writes about 1 GB of CSV (a row's idle per
// GPU is most of it).
var maxSweepFile = 2 << 30

// readSweepFile reads a table written by --csv or --json, and refuses one
// whose rows could not have been written so (see checkSweepRows).
func readSweepFile(name string) (*sweepTable, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", name, unwrapPath(err))
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, fmt.Errorf("%s: cannot read: it is a directory, not a file", name)
	}
	// What starts as neither table (/dev/zero) is refused at once, not
	// after reading as much as a table may be.
	r := bufio.NewReader(f)
	head, _ := r.Peek(64)
	if b := bytes.TrimLeft(head, " \t\r\n"); len(b) > 0 && b[0] != '#' && b[0] != '{' {
		return parseSweepCSV(name, head)
	}
	data, err := io.ReadAll(io.LimitReader(r, int64(maxSweepFile)+1))
	if err != nil {
		return nil, fmt.Errorf("%s: cannot read: %w", name, unwrapPath(err))
	}
	if len(data) > maxSweepFile {
		return nil, &usageError{fmt.Sprintf("%s:1:1: the file is more than %s; gpusim reads sweep tables (--csv, --json) up to that, more than a sweep of its most points writes", name, gib(uint64(maxSweepFile)))}
	}
	var t *sweepTable
	if b := bytes.TrimSpace(data); len(b) > 0 && b[0] == '{' {
		t, err = parseSweepJSON(name, data)
	} else {
		t, err = parseSweepCSV(name, data)
	}
	if err != nil {
		return nil, err
	}
	if err := checkSweepRows(t); err != nil {
		return nil, err
	}
	if t.claimed >= 0 && len(t.Rows) != t.claimed {
		return nil, fmt.Errorf("%s: the first line says %d points, but the file holds %s; want the table as gpusim sweep --csv wrote it (cut short, or edited: run the sweep or its shard again)", t.at.where("points"), t.claimed, plural(len(t.Rows), "1 row", "%d rows"))
	}
	return t, nil
}

var sweepHeadRe = regexp.MustCompile(`^# gpusim sweep (.+?): (complete|partial), (\d+) of (\d+) points( shard (\d+)/(\d+))?(, --set (\{.*\}))?$`)

const sweepHeadWant = `want # gpusim sweep NAME: complete (or partial), N of TOTAL points, then " shard i/n" for a shard and ", --set {"name":"value"}" for a sweep run with --set`

// charCol is the column in characters of byte column col (from 1) of line
// (from 1) of lines.
func charCol(lines []string, line, col int) int {
	if line < 1 || line > len(lines) || col < 1 || col-1 > len(lines[line-1]) {
		return col
	}
	return utf8.RuneCountInString(lines[line-1][:col-1]) + 1
}

// headCol is the column in characters of submatch k of m, matched in line.
func headCol(line string, m []int, k int) int {
	return utf8.RuneCountInString(line[:m[2*k]]) + 1
}

func parseSweepCSV(name string, data []byte) (*sweepTable, error) {
	text := string(data)
	lines := strings.Split(text, "\n")
	for i := range lines {
		lines[i] = strings.TrimSuffix(lines[i], "\r")
	}
	first := lines[0]
	if !strings.HasPrefix(first, "# gpusim sweep ") {
		return nil, fmt.Errorf("%s:1:1: not a sweep table written by gpusim sweep --csv; want its first line, # gpusim sweep NAME: ...", name)
	}
	m := sweepHeadRe.FindStringSubmatchIndex(first)
	if m == nil {
		return nil, fmt.Errorf("%s:1:1: cannot read the line %q; %s", name, first, sweepHeadWant)
	}
	sub := func(k int) string { return first[m[2*k]:m[2*k+1]] }
	at := &tableAt{file: name, head: map[string]filePos{
		"scenario":     {1, headCol(first, m, 1)},
		"points_total": {1, headCol(first, m, 4)},
		"vars":         {2, 1},
	}}
	t := &sweepTable{Scenario: sub(1), Partial: sub(2) == "partial", at: at}
	at.head["points"] = filePos{1, headCol(first, m, 3)}
	claimed, _ := strconv.Atoi(sub(3))
	var err error
	if t.Total, err = strconv.Atoi(sub(4)); err != nil || t.Total < 1 || t.Total > maxPoints {
		return nil, fmt.Errorf("%s: %s points in all; want a sweep of 1 to %d points", at.where("points_total"), sub(4), maxPoints)
	}
	if m[2*5] >= 0 {
		at.head["shard"] = filePos{1, headCol(first, m, 6)}
		t.Shard = sub(6) + "/" + sub(7)
		if _, _, ok := parseShard(t.Shard); !ok {
			return nil, fmt.Errorf("%s: shard %s; want i/n with 0 <= i < n", at.where("shard"), t.Shard)
		}
	}
	// The --set values, or where they would be: a CSV without them (an
	// older gpusim's too) is of a sweep run without --set.
	at.head["set"] = filePos{1, utf8.RuneCountInString(first) + 1}
	if m[2*8] >= 0 {
		at.head["set"] = filePos{1, headCol(first, m, 9)}
		if err := json.Unmarshal([]byte(sub(9)), &t.Set); err != nil {
			return nil, fmt.Errorf("%s: cannot read the --set values %s: %v; want a JSON object of names and values, such as {\"batch\":\"64 MiB\"}", at.where("set"), sub(9), err)
		}
		if len(t.Set) == 0 {
			t.Set = nil
		}
	}
	body := ""
	if len(lines) > 1 {
		body = text[len(lines[0])+1:]
		if strings.HasPrefix(text, lines[0]+"\r\n") {
			body = text[len(lines[0])+2:]
		}
	}
	// The reader's lines are the file's from the second on.
	cr := csv.NewReader(strings.NewReader(body))
	cr.FieldsPerRecord = -1
	csvError := func(err error) error {
		var pe *csv.ParseError
		if errors.As(err, &pe) {
			return fmt.Errorf("%s:%d:%d: not CSV: %v; want fields apart by commas, quoted (\"...\", a quote written \"\") where they hold a comma, a quote or a line break", name, pe.Line+1, charCol(lines, pe.Line+1, pe.Column), pe.Err)
		}
		return fmt.Errorf("%s: %v", name, err)
	}
	wantHeader := "point, the swept vars, then " + strings.Join(sweepCols, ",")
	h, err := cr.Read()
	if err == io.EOF {
		return nil, fmt.Errorf("%s:2:1: no header row; want the header: %s", name, wantHeader)
	}
	if err != nil {
		return nil, csvError(err)
	}
	hcol := func(k int) int { l, c := cr.FieldPos(k); return charCol(lines, l+1, c) }
	hline, _ := cr.FieldPos(0)
	hline++
	if _, err := strconv.Atoi(h[0]); err == nil {
		return nil, fmt.Errorf("%s:%d:1: a row of a point where the header row should be; want the header: %s", name, hline, wantHeader)
	}
	if h[0] != "point" {
		return nil, fmt.Errorf("%s:%d:1: header column %q; want the header: %s", name, hline, h[0], wantHeader)
	}
	cols := sweepCols
	switch last := h[len(h)-1]; {
	case last == "error":
		cols = sweepCols[:oldSweepCols] // an older gpusim's
		t.old, t.older, t.tokenless = true, true, true
	case last == "mfu":
		cols = sweepCols[:ratesSweepCols] // an older gpusim's
		t.older, t.tokenless = true, true
	case last == "warnings":
		cols = sweepCols[:warningsSweepCols] // an older gpusim's
		t.tokenless = true
	case last != "per_token_s" && len(h) > 1:
		// Some of the last columns, or others after them.
		return nil, fmt.Errorf("%s:%d:%d: header column %q last; want the header to end error,samples_per_s,tokens_per_s,mfu,compute_mean,topology,warnings,first_token_s,per_token_s (or at warnings, mfu or error, as older gpusims wrote it)", name, hline, hcol(len(h)-1), last)
	}
	nv := len(h) - 1 - len(cols)
	if nv < 1 {
		return nil, fmt.Errorf("%s:%d:1: %d columns in the header; want %s (at least %d)", name, hline, len(h), wantHeader, len(sweepCols)+2)
	}
	for k, c := range cols {
		if h[1+nv+k] != c {
			return nil, fmt.Errorf("%s:%d:%d: header column %q; want %q there: the header is %s", name, hline, hcol(1+nv+k), h[1+nv+k], c, wantHeader)
		}
	}
	t.Vars = h[1 : 1+nv]
	t.at.head["vars"] = filePos{hline, hcol(1)}
	for {
		rec, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		line, _ := cr.FieldPos(0)
		line++
		if len(rec) != len(h) {
			// Where the first field too many starts, or where the
			// fields stop short.
			var col int
			if len(rec) > len(h) {
				l, c := cr.FieldPos(len(h))
				line, col = l+1, charCol(lines, l+1, c)
			} else {
				l, _ := cr.FieldPos(len(rec) - 1)
				line = l + 1
				col = utf8.RuneCountInString(lines[line-1]) + 1
			}
			short := ""
			if len(rec) < len(h) && line == len(lines) {
				short = " (the file ends in this row: was it cut short?)"
			}
			return nil, fmt.Errorf("%s:%d:%d: %d fields%s; want %d, as the header on line %d has: %s", name, line, col, len(rec), short, len(h), hline, strings.Join(h, ","))
		}
		r := sweepRow{at: &rowAt{file: name, raw: rec}}
		for k := range rec {
			l, c := cr.FieldPos(k)
			r.at.fields = append(r.at.fields, filePos{l + 1, charCol(lines, l+1, c)})
		}
		if r.Index, err = strconv.Atoi(rec[0]); err != nil {
			return nil, t.fieldError(&r, 0, "%q is not a point; want a whole number from 0 to %d, the point's place in the sweep", rec[0], t.Total-1)
		}
		r.Values = rec[1 : 1+nv]
		f := rec[1+nv:]
		num := func(k int, s string) (float64, error) {
			v, err := strconv.ParseFloat(s, 64)
			if err != nil {
				why := "is not a number"
				if errors.Is(err, strconv.ErrRange) {
					why = "is out of range"
				}
				return 0, t.fieldError(&r, k, "%q %s; want %s", s, why, sweepColWant[t.colName(k)])
			}
			return v, nil
		}
		for _, c := range []struct {
			k   int // in sweepCols
			dst *float64
		}{{0, &r.MakespanS}, {1, &r.IdleMean}, {2, &r.IdleMax}, {5, &r.LinkUtil}} {
			if *c.dst, err = num(1+nv+c.k, f[c.k]); err != nil {
				return nil, err
			}
		}
		for _, kv := range strings.Fields(f[3]) {
			g, v, ok := strings.Cut(kv, "=")
			if !ok || g == "" {
				return nil, t.fieldError(&r, 1+nv+3, "%q is not GPU=fraction; want %s", kv, sweepColWant["idle_per_gpu"])
			}
			x, err := strconv.ParseFloat(v, 64)
			if err != nil || math.IsNaN(x) || x < 0 || x > 1 {
				return nil, t.fieldError(&r, 1+nv+3, "%q: %q is not a fraction; want %s", kv, v, sweepColWant["idle_per_gpu"])
			}
			r.GPUIdle = append(r.GPUIdle, gpuShare{g, x})
		}
		r.Error = f[7]
		if msg := idleListProblem(&r); msg != "" {
			return nil, t.fieldError(&r, 1+nv+3, "%s", msg)
		}
		r.Link = f[4]
		r.Bottleneck = f[6]
		for k, dst := range []**float64{&r.SamplesPerS, &r.TokensPerS, &r.MFU} {
			if k := oldSweepCols + k; k < len(f) && f[k] != "" {
				v, err := num(1+nv+k, f[k])
				if err != nil {
					return nil, err
				}
				*dst = &v
			}
		}
		if len(f) > ratesSweepCols {
			if c := f[ratesSweepCols]; c != "" {
				v, err := num(1+nv+ratesSweepCols, c)
				if err != nil {
					return nil, err
				}
				r.ComputeMean = &v
			}
			r.Topology = f[ratesSweepCols+1]
			if w := f[ratesSweepCols+2]; w != "" {
				r.Warnings = strings.Split(w, "\n")
			}
		}
		for k, dst := range []**float64{&r.FirstTokenS, &r.PerTokenS} {
			if k := warningsSweepCols + k; k < len(f) && f[k] != "" {
				v, err := num(1+nv+k, f[k])
				if err != nil {
					return nil, err
				}
				*dst = &v
			}
		}
		t.Rows = append(t.Rows, r)
	}
	t.claimed = claimed
	return t, nil
}

// sweepColWant says what each column of numbers holds, for messages.
var sweepColWant = map[string]string{
	"makespan_s":        "the makespan in seconds, a number at least 0",
	"idle_mean":         "a fraction from 0 to 1",
	"idle_max":          "a fraction from 0 to 1",
	"idle_per_gpu":      "GPU=fraction pairs apart by spaces, each fraction from 0 to 1, such as gpu0=0.25 gpu1=1",
	"busiest_link_util": "a fraction from 0 to 1 (0 where no link carried anything)",
	"samples_per_s":     "a training's samples or an inference's sequences a second, a number at least 0, or nothing",
	"tokens_per_s":      "a training's or an inference's tokens a second, a number at least 0, or nothing",
	"mfu":               "a training's model FLOPs utilization, a fraction at least 0, or nothing",
	"compute_mean":      "a fraction from 0 to 1, or nothing",
	"first_token_s":     "an inference's time to its first token in seconds, a number at least 0, or nothing",
	"per_token_s":       "an inference's time a token after its first in seconds, a number at least 0, or nothing",
}

// parseSweepJSON reads a table printed by --json, with the place of each
// row's fields.
func parseSweepJSON(name string, data []byte) (*sweepTable, error) {
	t := sweepTable{claimed: -1}
	if err := json.Unmarshal(data, &t); err != nil {
		var off int64 = -1
		var se *json.SyntaxError
		var te *json.UnmarshalTypeError
		if errors.As(err, &se) {
			off = se.Offset
		} else if errors.As(err, &te) {
			off = te.Offset
		}
		p := offsetPos(data, int(max(off, 0)))
		return nil, fmt.Errorf("%s:%d:%d: not a sweep table: %v; want the JSON gpusim sweep --json prints", name, p.line, p.col, err)
	}
	head, rows := jsonPlaces(data)
	t.at = &tableAt{file: name, head: head}
	if _, ok := head["rows"]; !ok || t.Vars == nil {
		return nil, fmt.Errorf("%s:1:1: not a sweep table: no vars or rows; want the JSON gpusim sweep --json prints", name)
	}
	if len(t.Vars) == 0 {
		return nil, fmt.Errorf("%s: no swept vars; want the vars of a sweep (at least one)", t.at.where("vars"))
	}
	if t.Scenario == "" || strings.ContainsAny(t.Scenario, "\r\n") {
		return nil, fmt.Errorf("%s: scenario %q; want the scenario's name, the one gpusim sweep --json prints", t.at.where("scenario"), t.Scenario)
	}
	if t.Total < 1 || t.Total > maxPoints {
		return nil, fmt.Errorf("%s: points_total %d; want a sweep of 1 to %d points", t.at.where("points_total"), t.Total, maxPoints)
	}
	if _, _, ok := parseShard(t.Shard); t.Shard != "" && !ok {
		return nil, fmt.Errorf("%s: shard %q; want i/n with 0 <= i < n", t.at.where("shard"), t.Shard)
	}
	keys := append(append([]string{"point"}, make([]string, len(t.Vars))...), sweepCols...)
	for k := range t.Vars {
		keys[1+k] = "values"
	}
	keys[1+len(t.Vars)+3] = "idle_per_gpu"
	for i := range t.Rows {
		r := &t.Rows[i]
		r.at = &rowAt{file: name}
		var places map[string]filePos
		if i < len(rows) {
			places = rows[i]
		}
		for _, k := range keys {
			p, ok := places[k]
			if !ok {
				p = places["{"]
			}
			r.at.fields = append(r.at.fields, p)
		}
		// A key left out reads as 0 or nothing: a point 0, a makespan
		// of 0. gpusim sweep --json writes these of every row, and the
		// measures of every point that ran.
		need := []string{"point", "values"}
		if r.Error == "" {
			need = append(need, "makespan_s", "idle_mean", "idle_max", "idle_per_gpu", "busiest_link", "busiest_link_util", "bottleneck")
		}
		for _, k := range need {
			if _, ok := places[k]; !ok {
				return nil, fmt.Errorf("%s:%d:%d: a row without %q; want each row's point and values, and the makespan_s, idle_mean, idle_max, idle_per_gpu, busiest_link, busiest_link_util and bottleneck of a point without an error, as gpusim sweep --json writes them (was the row edited?)", name, places["{"].line, places["{"].col, k)
			}
		}
		if len(r.Values) != len(t.Vars) {
			return nil, t.fieldError(r, 1, "%d values; want %d, one for each var (%s)", len(r.Values), len(t.Vars), strings.Join(t.Vars, ", "))
		}
		for _, g := range r.GPUIdle {
			// A name with a blank or an = could not be written to a CSV
			// and read back as itself.
			if g.GPU == "" || strings.ContainsRune(g.GPU, '=') || strings.IndexFunc(g.GPU, unicode.IsSpace) >= 0 || g.Idle < 0 || g.Idle > 1 {
				return nil, t.fieldError(r, 1+len(t.Vars)+3, "%q=%s; want %s, a GPU's name without blanks or =", g.GPU, fmtF(g.Idle), sweepColWant["idle_per_gpu"])
			}
		}
		if msg := idleListProblem(r); msg != "" {
			return nil, t.fieldError(r, 1+len(t.Vars)+3, "%s", msg)
		}
		if r.Error == "" && r.ComputeMean == nil {
			t.older = true // an older gpusim's
		}
	}
	return &t, nil
}

// idleListProblem says what is wrong with a row's idle_per_gpu as a whole
// (a GPU twice, or none for a point that ran), or "": the CSV and the JSON
// reader check it alike.
func idleListProblem(r *sweepRow) string {
	for i, g := range r.GPUIdle {
		if c, ok := scenarios.ControlChar(g.GPU); ok {
			return fmt.Sprintf("GPU %q holds a control character (%U); want %s, GPUs named as in their topology", g.GPU, c, sweepColWant["idle_per_gpu"])
		}
		if slices.ContainsFunc(r.GPUIdle[:i], func(s gpuShare) bool { return s.GPU == g.GPU }) {
			return fmt.Sprintf("%s twice; want %s, each GPU once", g.GPU, sweepColWant["idle_per_gpu"])
		}
	}
	if len(r.GPUIdle) == 0 && r.Error == "" {
		return fmt.Sprintf("empty, for a point that ran; want %s, each GPU of its topology", sweepColWant["idle_per_gpu"])
	}
	return ""
}

// offsetPos is the line and column (in characters) of byte off of data.
func offsetPos(data []byte, off int) filePos {
	off = min(off, len(data))
	start := bytes.LastIndexByte(data[:off], '\n') + 1
	return filePos{bytes.Count(data[:off], []byte("\n")) + 1, utf8.RuneCount(data[start:off]) + 1}
}

// jsonPlaces finds, in a table printed by --json, the place of the value of
// each top-level key, and of each row's keys (and of the row's "{").
func jsonPlaces(data []byte) (head map[string]filePos, rows []map[string]filePos) {
	head = map[string]filePos{}
	dec := json.NewDecoder(bytes.NewReader(data))
	next := func() int { // the offset of the next value, past blanks and ':' or ','
		off := int(dec.InputOffset())
		for off < len(data) && strings.IndexByte(" \t\r\n:,", data[off]) >= 0 {
			off++
		}
		return off
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return head, nil
	}
	for dec.More() {
		tok, err := dec.Token()
		key, ok := tok.(string)
		if err != nil || !ok {
			return head, rows
		}
		head[key] = offsetPos(data, next())
		if key != "rows" {
			var skip json.RawMessage
			if dec.Decode(&skip) != nil {
				return head, rows
			}
			continue
		}
		if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
			return head, rows
		}
		for dec.More() {
			row := map[string]filePos{"{": offsetPos(data, next())}
			if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
				return head, rows
			}
			for dec.More() {
				tok, err := dec.Token()
				k, ok := tok.(string)
				if err != nil || !ok {
					return head, rows
				}
				row[k] = offsetPos(data, next())
				var skip json.RawMessage
				if dec.Decode(&skip) != nil {
					return head, rows
				}
			}
			dec.Token() // }
			rows = append(rows, row)
		}
		dec.Token() // ]
	}
	return head, rows
}

// checkSweepRows refuses a table read back whose rows gpusim sweep could
// not have written: a point outside the sweep (or its shard), a point
// twice, a number that is not finite or out of its column's range.
func checkSweepRows(t *sweepTable) error {
	shardI, shardN := 0, 1
	if i, n, ok := parseShard(t.Shard); ok {
		shardI, shardN = i, n
	}
	for _, x := range append([]string{t.Scenario}, t.Vars...) {
		if c, ok := scenarios.ControlChar(x); ok {
			where, what := t.at.where("vars"), "var"
			if x == t.Scenario {
				where, what = t.at.where("scenario"), "scenario"
			}
			return fmt.Errorf("%s: %s %q holds a control character (%U); want the name gpusim sweep wrote, which holds none (was the file edited?)", where, what, x, c)
		}
	}
	seen := map[int]*sweepRow{}
	for i := range t.Rows {
		r := &t.Rows[i]
		if r.Index < 0 || r.Index >= t.Total {
			return t.fieldError(r, 0, "point %d is not in the sweep; want a whole number from 0 to %d, the point's place in the sweep of %d points", r.Index, t.Total-1, t.Total)
		}
		if r.Index%shardN != shardI {
			return t.fieldError(r, 0, "point %d is not one of shard %s's; want only its points, %s", r.Index, t.Shard, shardPoints(shardI, shardN, t.Total))
		}
		if prev, ok := seen[r.Index]; ok {
			return t.fieldError(r, 0, "point %d again (it is at %s); want each point once", r.Index, prev.at.where(0))
		}
		seen[r.Index] = r
		nv := len(t.Vars)
		// gpusim writes no control characters (a sweep's values may not
		// hold one): the table on the terminal would print them raw.
		// A tab only in an error or a warning, which may quote a file.
		text := func(k int, v string) error {
			if c, ok := scenarios.ControlChar(v); ok && (c != '\t' || k != 8+nv && k != 14+nv) {
				return t.fieldError(r, k, "%q holds a control character (%U); want text as gpusim writes it, which holds none (was the row edited?)", v, c)
			}
			return nil
		}
		for j, v := range r.Values {
			if err := text(1+j, v); err != nil {
				return err
			}
		}
		for i, v := range []string{r.Link, r.Bottleneck, r.Error, r.Topology} {
			if err := text([]int{5, 7, 8, 13}[i]+nv, v); err != nil {
				return err
			}
		}
		for _, w := range r.Warnings {
			if err := text(14+nv, w); err != nil {
				return err
			}
		}
		for _, c := range []struct {
			k     int
			v     float64
			upTo1 bool
		}{{1 + nv, r.MakespanS, false}, {2 + nv, r.IdleMean, true}, {3 + nv, r.IdleMax, true}, {6 + nv, r.LinkUtil, true},
			{9 + nv, deref(r.SamplesPerS), false}, {10 + nv, deref(r.TokensPerS), false}, {11 + nv, deref(r.MFU), false},
			{12 + nv, deref(r.ComputeMean), true}, {15 + nv, deref(r.FirstTokenS), false}, {16 + nv, deref(r.PerTokenS), false}} {
			why := "is out of range"
			if math.IsNaN(c.v) {
				why = "is not a number"
			}
			// A hair over 1 (rounding, in files of a gpusim that did not
			// hold it to 1) is 1.
			if math.IsNaN(c.v) || math.IsInf(c.v, 0) || c.v < 0 || c.upTo1 && c.v > 1+1e-9 {
				return t.fieldError(r, c.k, "%q %s; want %s", r.rawField(c.k, c.v), why, sweepColWant[t.colName(c.k)])
			}
		}
		if r.Link == "" && r.LinkUtil != 0 {
			return t.fieldError(r, 6+nv, "%q with no busiest link; want 0 where no link carried anything", r.rawField(6+nv, r.LinkUtil))
		}
		// An inference's point has its rates beside its token times, and
		// a time a token only after a first token.
		if r.FirstTokenS != nil && (r.SamplesPerS == nil || r.TokensPerS == nil) {
			k, what := 9+nv, "sequences"
			if r.SamplesPerS != nil {
				k, what = 10+nv, "tokens"
			}
			return t.fieldError(r, k, "nothing, where the row has an inference's time to its first token; want the inference's %s a second, a number at least 0 (was the row edited?)", what)
		}
		if r.PerTokenS != nil && r.FirstTokenS == nil {
			return t.fieldError(r, 15+nv, "nothing, where the row has an inference's time a token; want its time to the first token in seconds, a number at least 0 (was the row edited?)")
		}
	}
	// An inference's points that ran all have token times, or (an older
	// gpusim's table) none.
	var with *sweepRow
	for i := range t.Rows {
		if t.Rows[i].FirstTokenS != nil {
			with = &t.Rows[i]
			break
		}
	}
	for i := range t.Rows {
		if r := &t.Rows[i]; with != nil && r.Error == "" && r.FirstTokenS == nil {
			return t.fieldError(r, 15+len(t.Vars), "no time to the first token, where point %d has one (at %s); want one for every point of an inference that ran (was the row edited?)", with.Index, with.at.where(15+len(t.Vars)))
		}
	}
	return nil
}

// deref is *v, or 0 for none.
func deref(v *float64) float64 {
	if v == nil {
		return 0
	}
	return *v
}

// sweepDiffers names what of t's header differs from u's ("scenario",
// "vars", "points_total"), or is "".
func sweepDiffers(t, u *sweepTable) string {
	switch {
	case t.Scenario != u.Scenario:
		return "scenario"
	case !slices.Equal(t.Vars, u.Vars):
		return "vars"
	case t.Total != u.Total:
		return "points_total"
	}
	return ""
}

// maxLayoutWork bounds the rows a search for a layout looks at (it is then
// said to fit): a sweep's shards have at most a million rows.
const maxLayoutWork = 20_000_000

// fitLayout finds how a sweep of t.Total points over t.Vars could lay out
// rows read back: var k of point i has the value at place
// (i / stride[k]) % count[k] of the var's list, the last var varying
// fastest, the counts' product t.Total; rows at the same place of a var's
// list must have the same value of it. It returns the strides and counts
// of one such layout, or false where none fits. A search that looks at more
// than maxLayoutWork rows says it fits.
func fitLayout(t *sweepTable, rows []sweepRow) (stride, count []int, ok bool) {
	nv := len(t.Vars)
	stride, count = make([]int, nv), make([]int, nv)
	work := maxLayoutWork
	var try func(k, s, left int) bool
	try = func(k, s, left int) bool {
		if k < 0 {
			return left == 1
		}
		for _, c := range divisors(left) {
			if k == 0 && c != left {
				continue
			}
			if work <= 0 {
				return true
			}
			work -= len(rows)
			if a, _ := varConflict(rows, k, s, c); a >= 0 {
				continue
			}
			stride[k], count[k] = s, c
			if try(k-1, s*c, left/c) {
				return true
			}
		}
		return false
	}
	return stride, count, try(nv-1, 1, t.Total)
}

// varConflict returns two rows, a before b, with different values of var k
// at the same place (i / stride) % count of its list, or -1, -1.
func varConflict(rows []sweepRow, k, stride, count int) (a, b int) {
	first := map[int]int{}
	for i := range rows {
		p := rows[i].Index / stride % count
		if j, ok := first[p]; !ok {
			first[p] = i
		} else if rows[j].Values[k] != rows[i].Values[k] {
			return j, i
		}
	}
	return -1, -1
}

// divisors returns n's divisors, smallest first.
func divisors(n int) []int {
	var lo, hi []int
	for d := 1; d <= n/d; d++ {
		if n%d == 0 {
			lo = append(lo, d)
			if d*d != n {
				hi = append(hi, n/d)
			}
		}
	}
	slices.Reverse(hi)
	return append(lo, hi...)
}

// checkLayout refuses rows read back whose values no sweep of t's vars and
// points could give (an edited value; shards of sweeps of other values): it
// names the first row, in the order of the files and their lines, that the
// rows before it do not allow, and a row before it it contradicts.
func checkLayout(t *sweepTable, rows []sweepRow) error {
	if _, _, ok := fitLayout(t, rows); ok {
		return nil
	}
	lo, hi := 0, len(rows) // rows[:lo] fit, rows[:hi] do not
	for hi-lo > 1 {
		mid := (lo + hi) / 2
		if _, _, ok := fitLayout(t, rows[:mid]); ok {
			lo = mid
		} else {
			hi = mid
		}
	}
	stride, count, _ := fitLayout(t, rows[:hi-1])
	r := rows[hi-1]
	if slices.Contains(stride, 0) || slices.Contains(count, 0) {
		// The search for the rows before it ran out of work and said
		// they fit, with no layout to name the contradiction by.
		return t.fieldError(&r, 0, "point %d's values fit no sweep of %d vars over %d points together with the rows before this one; want the values gpusim sweep wrote (was a value edited, or are some rows of sweeps of other values?)", r.Index, len(t.Vars), t.Total)
	}
	for k := range t.Vars {
		p := r.Index / stride[k] % count[k]
		for _, q := range rows[:hi-1] {
			if q.Index/stride[k]%count[k] == p && q.Values[k] != r.Values[k] {
				return t.fieldError(&r, 1+k, "point %d's %q and point %d's %q (at %s) fit no sweep of %d vars over %d points together with the rows before this one; want the values gpusim sweep wrote (was one of the two edited, or are they of sweeps of other values?)",
					r.Index, r.Values[k], q.Index, q.Values[k], q.at.where(1+k), len(t.Vars), t.Total)
			}
		}
	}
	return nil
}

// setJSON writes --set values as the CSV's first line records them: a
// JSON object, its names sorted.
func setJSON(set map[string]string) string {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.Encode(set)
	return strings.TrimSuffix(b.String(), "\n")
}

// setDesc describes --set values in messages.
func setDesc(set map[string]string) string {
	if len(set) == 0 {
		return "no --set"
	}
	var out []string
	for _, k := range slices.Sorted(maps.Keys(set)) {
		out = append(out, fmt.Sprintf("--set %q", k+"="+set[k]))
	}
	return strings.Join(out, " ")
}

// shardName names shard i/n ("" is the whole sweep) in messages.
func shardName(shard string) string {
	if shard == "" {
		return "the whole sweep"
	}
	return "shard " + shard
}

// shardPoints lists the first points of shard i of n of a sweep of total.
func shardPoints(i, n, total int) string {
	var p []string
	for k := i; k < total && len(p) < 3; k += n {
		p = append(p, strconv.Itoa(k))
	}
	if i+3*n < total {
		p = append(p, "...")
	}
	return strings.Join(p, ", ")
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
		return &usageError{"gpusim sweep merge: name the shards' files, the CSV or JSON tables of sweep --shard (usage: " + sweepMergeSynopsis + ")"}
	}
	if err := checkSweepMetric(fs, "sweep merge", *metric, *plotTo); err != nil {
		return err
	}
	if err := plotDirUsable("sweep merge", *plotTo); err != nil {
		return err
	}
	// --csv may name an input: every input is read before it is written,
	// and the merged table holds its rows (shards gathered into one file
	// as they arrive).
	for i, f := range files {
		for _, g := range files[:i] {
			a, err1 := os.Stat(f)
			b, err2 := os.Stat(g)
			if f == g || err1 == nil && err2 == nil && os.SameFile(a, b) {
				return &usageError{fmt.Sprintf("gpusim sweep merge: %s and %s are the same file; want each shard's file once", g, f)}
			}
		}
	}
	var merged *sweepTable
	rows := map[int]sweepRow{}
	var all []sweepRow                  // in the order of the files and their lines
	var oldFile, ratesFile string       // a CSV without the rates, and one with
	var olderFile, newFile string       // an older gpusim's table, and one of this gpusim
	var tokensFile, noTokensFile string // a table with token times, and one with points without
	var strictRow, lenientRow *sweepRow // a point --strict failed for its warnings, and one with warnings that ran
	for _, f := range files {
		t, err := readSweepFile(f)
		if err != nil {
			return err
		}
		if t.old && oldFile == "" {
			oldFile = f
		}
		if t.hasRates() && ratesFile == "" {
			ratesFile = f
		}
		if oldFile != "" && ratesFile != "" {
			return fmt.Errorf("%s: an older gpusim's CSV, without a training's rates, and %s has them: its points would lack them in the merged table; run that shard again (--resume reruns its points)", oldFile, ratesFile)
		}
		if t.older && olderFile == "" {
			olderFile = f
		}
		if !t.older && newFile == "" {
			newFile = f
		}
		if olderFile != "" && newFile != "" {
			return fmt.Errorf("%s: an older gpusim's table, without the GPUs' compute, the points' topology and warnings, and %s has them: its points would lack them in the merged table; run that shard again (--resume reruns its points)", olderFile, newFile)
		}
		// A sweep's points are all an inference's or none: where one
		// table has token times, a point that ran without them is an
		// older gpusim's.
		has, lacks := t.tokenTimes()
		if has && tokensFile == "" {
			tokensFile = f
		}
		if lacks && noTokensFile == "" {
			noTokensFile = f
		}
		if tokensFile != "" && noTokensFile != "" {
			return fmt.Errorf("%s: an older gpusim's table, without an inference's token times, and %s has them: its points would lack them in the merged table; run that shard again (--resume reruns its points)", noTokensFile, tokensFile)
		}
		if merged == nil {
			merged = &sweepTable{Scenario: t.Scenario, Vars: t.Vars, Total: t.Total, Set: t.Set, at: t.at}
		} else if what := sweepDiffers(t, merged); what != "" {
			return fmt.Errorf("%s: a different sweep (%s, vars %s, %d points) than %s (%s, vars %s, %d points); want the shards of one sweep", t.at.where(what), t.Scenario, strings.Join(t.Vars, ","), t.Total, files[0], merged.Scenario, strings.Join(merged.Vars, ","), merged.Total)
		} else if !maps.Equal(t.Set, merged.Set) {
			return fmt.Errorf("%s: run with %s, and %s with %s; want the shards of a sweep run with the same --set values", t.at.where("set"), setDesc(t.Set), files[0], setDesc(merged.Set))
		}
		// What an older gpusim's table lacks, for messages.
		merged.old, merged.older, merged.tokenless = merged.old || t.old, merged.older || t.older, merged.tokenless || t.tokenless
		for _, r := range t.Rows {
			if prev, ok := rows[r.Index]; ok {
				return t.fieldError(&r, 0, "point %d again (it is at %s); want each point once: each shard's file once, and no two files that hold the same shard", r.Index, prev.at.where(0))
			}
			rows[r.Index] = r
			all = append(all, r)
			if failed, differs := strictFailed(&r); differs && failed && strictRow == nil {
				strictRow = &r
			} else if differs && !failed && lenientRow == nil {
				lenientRow = &r
			}
			if strictRow != nil && lenientRow != nil {
				return fmt.Errorf("%s: point %d, failed by --strict for its warnings, and point %d at %s, with warnings and not failed: the shards were run with --strict and without; run those without it again with --strict (--resume reruns its points), or the others again without it", strictRow.at.where(0), strictRow.Index, lenientRow.Index, lenientRow.at.where(0))
			}
		}
	}
	if err := checkLayout(merged, all); err != nil {
		return err
	}
	var idx []int
	for i := range rows {
		idx = append(idx, i)
	}
	sort.Ints(idx)
	for _, i := range idx {
		merged.Rows = append(merged.Rows, rows[i])
	}
	// A metric none of the points has is refused before the table.
	if *plotTo != "" {
		if err := metricMissing(*plotTo, merged, *metric); err != nil {
			return err
		}
	}
	// The points' warnings, as the whole sweep would print them.
	warnPoints(stderr, merged, rows, idx)
	// Partial where points are missing, whatever the inputs said: a
	// partial table merged with the points it lacked is complete.
	merged.Partial = len(merged.Rows) < merged.Total
	if merged.Partial {
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
	} else {
		// With --csv too, as gpusim sweep --csv prints its table.
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
	p := &progress{w: w, total: total, on: isTerminal(w)}
	p.draw()
	return p
}

// isTerminal reports whether w is a terminal, where a progress line is
// drawn (not into a file or a pipe).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// redraw draws line over the one before it (width characters wide, then
// line's), from the start of the terminal's line.
func redraw(w io.Writer, line string, width *int) {
	pad := max(0, *width-len(line))
	*width = len(line)
	fmt.Fprint(w, "\r"+line+strings.Repeat(" ", pad))
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
	redraw(p.w, fmt.Sprintf("[%s%s] %d/%d %s", strings.Repeat("=", fill), strings.Repeat(" ", width-fill), p.n, p.total, what), &p.width)
}

func (p *progress) finish() {
	if p.on && p.total > 0 {
		fmt.Fprintln(p.w)
	}
}
