// Command gpusim predicts how multi-GPU workloads behave on a machine: it runs
// a scenario (host threads issuing kernels, copies, event records and waits,
// syncs) on a topology (hosts, GPUs, switches and links) with a deterministic
// discrete-event simulator, and reports the makespan, where each GPU's time
// went, link traffic and the critical path.
//
// Usage:
//
//	gpusim run SCENARIO [--set k=v]... [--json] [--trace FILE] [--plot DIR] [--strict]
//	gpusim sweep SCENARIO [-j N] [--csv FILE] [--plot DIR]
//	gpusim validate FILE
//	gpusim topo show|plot|dot TOPOLOGY
//	gpusim nccl-tests | nvbandwidth | p2p-test --topology T
//	gpusim topo discover | gpusim replay SCENARIO | gpusim calibrate
//	gpusim accuracy
//	gpusim version
//
// Run "gpusim help" for every command and flag.
//
// Exit status: 0 success; 1 an output file could not be written or another
// failure of the environment; 2 bad input (a malformed file, an unknown name,
// a deadlock, a warning under --strict); 3 a command that needs a GPU found
// none it can use (no driver library, no device, no permission).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime/debug"
	"slices"
	"sort"
	"strings"
	"time"

	"gpusim/hw"
	"gpusim/scenarios"
	"gpusim/topologies"
)

// Exit statuses.
const (
	exitOK    = 0
	exitFail  = 1 // the environment: an unwritable file
	exitInput = 2 // the input: files, names, deadlocks, strict warnings
)

// version is set at build time with -ldflags "-X main.version=...".
var version = "0.1.0-dev"

// buildRevision is the commit a binary was built from where the build sets
// it (hw/devicecheck/run.sh build: -ldflags -X main.buildRevision=...), for
// builds without Go's own VCS stamp.
var buildRevision = ""

func main() {
	tuneGC()
	os.Exit(runChecked(os.Args[1:], os.Stdout, os.Stderr))
}

// gcPercent is the collector's GOGC for gpusim. A simulation allocates
// many short-lived objects over a small live heap, where Go's default
// (100) collects every few MiB allocated: p2p-test on gb200-nvl72 spent
// half its time collecting and returning memory, and ran 2x as fast at
// 400 (docs/performance.md). Large runs, whose heap is mostly their live
// records, peaked no higher.
const gcPercent = 400

// tuneGC sets gcPercent, with a soft memory limit of what is free (the
// collector works harder as the heap nears it), unless the user set GOGC
// or GOMEMLIMIT.
func tuneGC() {
	if os.Getenv("GOGC") != "" || os.Getenv("GOMEMLIMIT") != "" {
		return
	}
	debug.SetGCPercent(gcPercent)
	if free, ok := freeMemory(); ok && free > 0 {
		debug.SetMemoryLimit(int64(min(free, 1<<62)))
	}
}

// runChecked runs the command, and fails it (exit status 1) where what it
// printed did not reach its reader (a full disk, a closed pipe).
func runChecked(args []string, stdout, stderr io.Writer) int {
	out := &checkedWriter{w: stdout}
	code := run(args, out, stderr)
	if out.err != nil && code == exitOK {
		fmt.Fprintln(stderr, "gpusim: "+out.err.Error())
		code = exitFail
	}
	return code
}

// checkedWriter passes writes on and keeps the first error; after it, it
// writes nothing more.
type checkedWriter struct {
	w   io.Writer
	err error
}

func (c *checkedWriter) Write(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.w.Write(p)
	if err != nil {
		c.err = &stdoutError{err}
	}
	return n, c.err
}

// stdoutError is a write to standard output that failed. A command that
// returns it (a --json writer's error) fails as runChecked fails for it:
// exit status 1, "writing standard output".
type stdoutError struct{ err error }

func (e *stdoutError) Error() string { return "writing standard output: " + unwrapPath(e.err).Error() }
func (e *stdoutError) Unwrap() error { return e.err }

// usage is the top-level help; each command's line is its synopsis, the
// one its --help prints, so that every flag is listed.
const usage = `gpusim predicts how multi-GPU workloads behave on a machine.

Usage:
  ` + runSynopsis + `
        simulate a scenario and print a summary (or JSON); --plot draws its
        timeline and utilization
  ` + sweepSynopsis + `
        run every point of the scenario's sweep: block, in parallel
  ` + sweepMergeSynopsis + `
        join the tables of sharded sweeps
  ` + validateSynopsis + `
        check a topology or scenario file (each value of its sweep too) without running it
  ` + topoShowSynopsis + `
        print a topology (a file or a shipped name) and the path between GPU pairs
  ` + topoListSynopsis + `
        list the shipped topologies
  ` + topoPlotSynopsis + `
        draw the predicted GPU-to-GPU bandwidth as a heatmap (.png, .svg, .pdf)
  ` + topoDotSynopsis + `
        write the machine graph as Graphviz DOT
  ` + importSynopsis + `
        turn what nvidia-smi topo -m prints into a topology
  ` + ncclSynopsis + `
        predict nccl-tests' table (all_reduce_perf, all_gather_perf, ...)
  ` + nvbSynopsis + `
        predict nvbandwidth's matrices
  ` + p2pSynopsis + `
        predict the CUDA sample p2pBandwidthLatencyTest's matrices
  ` + discoverSynopsis + `
        read this machine's GPUs, links and PCIe tree through NVML into a topology
  gpusim run SCENARIO --backend hw [--topology FILE] ...
        run the scenario on this machine's GPUs instead of the simulator
  ` + replaySynopsis + `
        run a scenario on the simulator and on the GPUs; compare op by op
  ` + calibrateSynopsis + `
        measure copies, kernels and host overheads on the GPUs; fit the model
  ` + accuracySynopsis + `
        print the accuracy report (docs/accuracy.md): predictions against published measurements
  gpusim version
        print the version

Run "gpusim COMMAND --help" for a command's flags.
`

// usageError is bad usage of the command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return exitInput
	}
	var err error
	switch args[0] {
	case "run":
		err = cmdRun(args[1:], stdout, stderr)
	case "validate":
		err = cmdValidate(args[1:], stdout, stderr)
	case "topo":
		err = cmdTopo(args[1:], stdout, stderr)
	case "nccl-tests":
		err = cmdNCCLTests(args[1:], stdout, stderr)
	case "nvbandwidth":
		err = cmdNVBandwidth(args[1:], stdout, stderr)
	case "p2p-test":
		err = cmdP2PTest(args[1:], stdout, stderr)
	case "accuracy":
		err = cmdAccuracy(args[1:], stdout, stderr)
	case "sweep":
		err = cmdSweep(args[1:], stdout, stderr)
	case "replay":
		err = cmdReplay(args[1:], stdout, stderr)
	case "calibrate":
		err = cmdCalibrate(args[1:], stdout, stderr)
	case "version", "--version":
		if len(args) == 2 && (args[1] == "-h" || args[1] == "--help" || args[1] == "-help") {
			fmt.Fprintln(stdout, "usage: gpusim version\n\nPrints gpusim's version, the Go release it was built with and, where known, the commit.")
			return exitOK
		}
		if len(args) > 1 {
			fmt.Fprintf(stderr, "usage: gpusim version (it takes no arguments; got %s)\n", strings.Join(args[1:], " "))
			return exitInput
		}
		fmt.Fprintln(stdout, versionString())
		return exitOK
	case "help", "-h", "--help", "-help":
		if len(args) > 1 && args[0] == "help" && args[1] != "help" {
			// gpusim help run: run's own help; gpusim help sweep merge:
			// that subcommand's.
			return run(append(args[1:len(args):len(args)], "--help"), stdout, stderr)
		}
		fmt.Fprint(stdout, usage)
		return exitOK
	default:
		fmt.Fprintf(stderr, "gpusim: unknown command %q; commands: run, sweep, replay, calibrate, validate, topo, nccl-tests, nvbandwidth, p2p-test, accuracy, version, help\n", args[0])
		return exitInput
	}
	return report(commandSet(args[0], err), stderr)
}

// commandSet says which command a --set mistake was given to: its lines
// start "gpusim CMD: --set NAME:", as the command's other usage errors do.
func commandSet(cmd string, err error) error {
	var se *scenarios.SetError
	if !errors.As(err, &se) {
		return err
	}
	lines := strings.Split(err.Error(), "\n")
	for i, l := range lines {
		if slices.Contains(se.Lines, l) {
			lines[i] = "gpusim " + cmd + ": " + l
		}
	}
	return errors.New(strings.Join(lines, "\n"))
}

// report prints err and returns the exit status it calls for.
func report(err error, stderr io.Writer) int {
	if err == nil {
		return exitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return exitOK
	}
	if hw.IsUnavailable(err) {
		fmt.Fprintln(stderr, "gpusim: "+firstLine(err.Error()))
		return exitNoGPU
	}
	var se *stdoutError
	if errors.As(err, &se) {
		fmt.Fprintln(stderr, "gpusim: "+se.Error())
		return exitFail
	}
	var fe *failError
	if errors.As(err, &fe) {
		fmt.Fprintln(stderr, "gpusim: "+fe.Error())
		return exitFail
	}
	msg := err.Error()
	for _, line := range strings.Split(msg, "\n") {
		fmt.Fprintln(stderr, line)
	}
	return exitInput
}

// failError is a failure of the environment (exit status 1).
type failError struct{ err error }

func (e *failError) Error() string { return e.err.Error() }
func (e *failError) Unwrap() error { return e.err }

func versionString() string {
	v := "gpusim " + version
	if bi, ok := debug.ReadBuildInfo(); ok {
		v += " (" + bi.GoVersion
		rev, dirty := "", ""
		for _, s := range bi.Settings {
			switch {
			case s.Key == "vcs.revision" && len(s.Value) >= 12:
				rev = s.Value[:12]
			case s.Key == "vcs.modified" && s.Value == "true":
				dirty = "-dirty"
			}
		}
		if buildRevision != "" {
			rev, dirty = buildRevision, "" // git describe says -dirty itself
		}
		if rev != "" {
			v += ", " + rev + dirty
		}
		v += ")"
	}
	return v
}

// setFlag collects repeated --set k=v.
type setFlag map[string]string

func (s setFlag) String() string {
	var ks []string
	for k := range s {
		ks = append(ks, k+"="+s[k])
	}
	sort.Strings(ks)
	return strings.Join(ks, ",")
}

func (s setFlag) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("%q is not name=value", v)
	}
	// A newline or other control character would go into the summary,
	// the CSV and the plots' titles as it is (batch=1<newline>GiB printed
	// two lines).
	if r, ok := scenarios.ControlChar(v); ok {
		return fmt.Errorf("%q holds a control character (%q); a value is one line of text", v, r)
	}
	if old, dup := s[strings.TrimSpace(k)]; dup && old != val {
		// Which one was meant? The last winning silently ran the other.
		return fmt.Errorf("%s is set twice, to %q and %q: give it once", strings.TrimSpace(k), old, val)
	}
	s[strings.TrimSpace(k)] = val
	return nil
}

// parseFlags parses flags given anywhere among the positional arguments.
func parseFlags(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				// helpRequested answered -h and --help; what reaches here
				// is one given a value (--help=false), which did nothing.
				return nil, &usageError{fmt.Sprintf("gpusim %s: --help takes no value (run gpusim %s --help)", fs.Name(), fs.Name())}
			}
			return nil, &usageError{fmt.Sprintf("gpusim %s: %s (see gpusim %s --help)", fs.Name(), flagProblem(fs, err), fs.Name())}
		}
		rest := fs.Args()
		if len(rest) == 0 {
			// A file or name flag given an empty value (--trace '', a
			// variable that was not set) would silently do nothing; for
			// the others (--algo '', --gpu '') empty is the default.
			// One given a flag (--trace --json: the flag's value is
			// "--json") or "-" would write a file of that name.
			var empty, dash, dashValue string
			fs.Visit(func(f *flag.Flag) {
				if g, ok := f.Value.(flag.Getter); ok && empty == "" && dash == "" && fileOrNameFlags[f.Name] {
					if s, ok := g.Get().(string); ok && s == "" {
						empty = f.Name
					} else if ok && strings.HasPrefix(s, "-") {
						dash, dashValue = f.Name, s
					}
				}
			})
			if empty != "" {
				return nil, &usageError{fmt.Sprintf("gpusim %s: %s was given an empty value (see gpusim %s --help)", fs.Name(), dashes(empty)+empty, fs.Name())}
			}
			if dash != "" {
				// The hint fits what the flag takes, as its help names it
				// (--plot is a folder for run, a file for nccl-tests).
				hint := fmt.Sprintf("give it a name (./%s for a file of that name, /dev/stdout for standard output)", dashValue)
				placeholder := ""
				if f := fs.Lookup(dash); f != nil {
					placeholder, _ = flag.UnquoteUsage(f)
				}
				switch {
				case dash == "name":
					hint = "give it a name that does not start with -"
				case placeholder == "DIR":
					hint = fmt.Sprintf("give it a name (./%s for a folder of that name)", dashValue)
				case dash == "topology":
					hint = fmt.Sprintf("give it a name (./%s for a file of that name)", dashValue)
				}
				return nil, &usageError{fmt.Sprintf("gpusim %s: %s was given %q, which reads as a flag: %s", fs.Name(), dashes(dash)+dash, dashValue, hint)}
			}
			return pos, nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}

// fileOrNameFlags are the flags an empty value is refused for.
var fileOrNameFlags = map[string]bool{"trace": true, "plot": true, "csv": true, "o": true, "name": true, "topology": true}

func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Usage = func() {}
	_ = synopsis
	return fs
}

// helpRequested prints the usage of fs when -h/--help is among args.
func helpRequested(fs *flag.FlagSet, synopsis string, args []string, stdout io.Writer) bool {
	for _, a := range args {
		if a == "-h" || a == "--help" || a == "-help" {
			fmt.Fprintf(stdout, "usage: %s\n\nflags:\n", synopsis)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
			return true
		}
		if a == "--" {
			return false
		}
	}
	return false
}

// writeFileAtomic writes data to name through a temporary file in the same
// folder renamed into place, so that a reader never sees a half-written file.
//
// Only a regular file is replaced so: a symbolic link to one has its target
// written the same way (the link stays), and anything else (a FIFO, a
// device such as /dev/stdout or /dev/null, a link that leads to one) is
// opened and written in place, never renamed over.
func writeFileAtomic(name string, write func(io.Writer) error) error {
	if err := notADirectory(name); err != nil {
		return err
	}
	// The file standard output or error goes to (/dev/stdout where the
	// shell sent it to a file): written through that stream, at its
	// place; opened again or replaced, it lost what else the command
	// printed there.
	if st, err := os.Stat(name); err == nil {
		for _, f := range []*os.File{os.Stdout, os.Stderr} {
			if fst, err := f.Stat(); err == nil && os.SameFile(st, fst) {
				if err := write(f); err != nil {
					return &failError{fmt.Errorf("writing %s: %v", name, err)}
				}
				return nil
			}
		}
	}
	if st, err := os.Lstat(name); err == nil && !st.Mode().IsRegular() {
		if st.Mode()&os.ModeSymlink != 0 {
			if target, err := filepath.EvalSymlinks(name); err == nil {
				if tst, err := os.Stat(target); err == nil && tst.Mode().IsRegular() {
					return writeFileAtomic(target, write)
				}
			}
		}
		return writeInPlace(name, write)
	}
	dir := filepath.Dir(name)
	f, err := os.CreateTemp(dir, "."+filepath.Base(name)+".tmp*")
	if err != nil {
		// The temporary file's name means nothing to the user: say
		// what is wrong with the folder.
		return &failError{fmt.Errorf("cannot write %s: %v", name, unwrapPath(err))}
	}
	tmp := f.Name()
	// CreateTemp makes the file private; outputs are ordinary files, and
	// a file replaced keeps its permissions.
	perm := os.FileMode(0o644)
	if st, err := os.Stat(name); err == nil {
		perm = st.Mode().Perm()
	}
	if err := f.Chmod(perm); err != nil {
		f.Close()
		os.Remove(tmp)
		return &failError{fmt.Errorf("cannot write %s: %v", name, err)}
	}
	if err := write(f); err != nil {
		f.Close()
		os.Remove(tmp)
		return &failError{fmt.Errorf("writing %s: %v", name, err)}
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return &failError{fmt.Errorf("writing %s: %v", name, err)}
	}
	if err := os.Rename(tmp, name); err != nil {
		os.Remove(tmp)
		if le, ok := err.(*os.LinkError); ok {
			err = le.Err // not the temporary file's name
		}
		return &failError{fmt.Errorf("cannot write %s: %v", name, err)}
	}
	return nil
}

// writeInPlace writes to name as it is: a FIFO, a device, a link to one, or
// a link to a file that does not exist yet (created).
func writeInPlace(name string, write func(io.Writer) error) error {
	f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return &failError{fmt.Errorf("cannot write %s: %v", name, unwrapPath(err))}
	}
	if err := write(f); err != nil {
		f.Close()
		return &failError{fmt.Errorf("writing %s: %v", name, err)}
	}
	if err := f.Close(); err != nil {
		return &failError{fmt.Errorf("writing %s: %v", name, err)}
	}
	return nil
}

// notADirectory is the error of an output file named by a directory or by
// a read-only file (which writeFileAtomic would rename over, as the shell's
// > refuses to), or nil; commands check their outputs with it before a long
// run too.
func notADirectory(name string) error {
	if st, err := os.Stat(name); name != "" && err == nil && st.IsDir() {
		return &failError{fmt.Errorf("cannot write %s: it is a directory; name a file", name)}
	} else if err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o222 == 0 {
		return &failError{fmt.Errorf("cannot write %s: it is read-only; name another file, or make it writable", name)}
	}
	return nil
}

// notAnInput is the usage error of an output (the flag's value) that is
// one of the command's input files, which writing it would destroy
// (gpusim sweep s.yaml --csv s.yaml), or nil. Inputs that are not files
// (shipped names, "") are skipped.
func notAnInput(cmd, flagName, out string, inputs ...string) error {
	if out == "" {
		return nil
	}
	ost, err := os.Stat(out)
	if err != nil || !ost.Mode().IsRegular() {
		return nil // only files are replaced (not /dev/stdout, a terminal)
	}
	for _, in := range inputs {
		if in == "" {
			continue
		}
		if ist, err := os.Stat(in); err == nil && os.SameFile(ost, ist) {
			return &usageError{fmt.Sprintf("gpusim %s: %s %s is the input %s: writing it would destroy it; name another file", cmd, dashes(flagName)+flagName, out, in)}
		}
	}
	return nil
}

// maxInput is the largest topology or scenario file gpusim reads: a
// hand-written file is far smaller, and a generated one describes long
// programs with repeat: blocks or generators rather than listing every op.
const maxInput = 16 << 20

// tooLargeError is a topology or scenario file over maxInput.
type tooLargeError struct {
	name string
	size int64
}

func (e *tooLargeError) Error() string {
	return fmt.Sprintf("%s:1:1: the file is %.1f MiB (%d bytes); gpusim reads topologies and scenarios up to %d MiB: write long programs with repeat: blocks or a generator (training:, pipeline:)",
		e.name, float64(e.size)/(1<<20), e.size, maxInput>>20)
}

// errIsDir is readInput's error for a folder.
var errIsDir = errors.New("it is a directory, not a file")

// notThere reports whether err, from readInput(name), says there is no
// file name to read where a shipped scenario or topology may stand in: none
// at all, or a folder of a shipped one's name (a folder is never a scenario
// or topology, and one named like a shipped one, a --plot folder say, does
// not hide it).
func notThere(err error, name string) bool {
	return errors.Is(err, fs.ErrNotExist) || errors.Is(err, errIsDir) && shippedName(name)
}

// shippedName reports whether name, without a folder, names a shipped
// scenario or topology (with or without .yaml).
func shippedName(name string) bool {
	if strings.ContainsAny(name, "/\\") {
		return false
	}
	base := strings.TrimSuffix(name, ".yaml")
	_, sc := scenarios.ShippedSource(base)
	_, topo := topologies.ShippedSource(base)
	return sc || topo
}

// readInput reads a topology or scenario file of at most maxInput bytes.
func readInput(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil && st.IsDir() {
		return nil, &os.PathError{Op: "read", Path: name, Err: errIsDir}
	}
	data, err := io.ReadAll(io.LimitReader(f, maxInput+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxInput {
		size := int64(len(data))
		if st, err := f.Stat(); err == nil && st.Size() > size {
			size = st.Size()
		}
		return nil, &tooLargeError{name, size}
	}
	return data, nil
}

// oneArg checks that a command got exactly one positional argument, noun
// (hint says what it may be), and says in one line what is missing or extra.
// With --set given, an extra argument is most often the rest of an
// unquoted value.
func oneArg(cmd, synopsis, noun, hint string, pos []string, set setFlag) error {
	usage, _, _ := strings.Cut(synopsis, "\n")
	switch len(pos) {
	case 1:
		if strings.TrimSpace(pos[0]) == "" {
			return &usageError{fmt.Sprintf("gpusim %s: the %s given is empty (%s); usage: %s", cmd, noun, hint, usage)}
		}
		return nil
	case 0:
		return &usageError{fmt.Sprintf("gpusim %s: no %s given (%s); usage: %s", cmd, noun, hint, usage)}
	}
	quote := ""
	if len(set) > 0 {
		quote = " (a --set value with spaces needs quotes: --set 'batch=1 GiB')"
	}
	return &usageError{fmt.Sprintf("gpusim %s: takes one %s, got %d: %s%s; usage: %s", cmd, noun, len(pos), strings.Join(pos, ", "), quote, usage)}
}

// checkMaxOps refuses a --max-ops below 1 (zero and less once meant the
// default, silently) or past the loader's ceiling (which it would lower
// silently).
func checkMaxOps(cmd string, n int64) error {
	if n < 1 || n > scenarios.MaxOpsCeiling {
		return &usageError{fmt.Sprintf("gpusim %s: --max-ops %d: want 1 to %d (the default is %d)", cmd, n, int64(scenarios.MaxOpsCeiling), scenarios.DefaultMaxOps)}
	}
	return nil
}

// given reports whether the command line set the flag name.
func given(fs *flag.FlagSet, name string) bool {
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}

var badBoolRe = regexp.MustCompile(`^invalid boolean value "(.*)" for -([\w-]+): parse error$`)

var badValueRe = regexp.MustCompile(`^invalid value "(.*)" for flag -([\w-]+): (.*)$`)

// flagProblem rewrites the flag package's messages in gpusim's words: an
// unknown flag, a switch given a value, and a value its flag refused, with
// what the flag takes where the package says only "parse error".
func flagProblem(fs *flag.FlagSet, err error) string {
	msg := err.Error()
	if name, ok := strings.CutPrefix(msg, "flag provided but not defined: -"); ok {
		// -j1: a one-letter flag run into its value.
		if i := strings.IndexFunc(name, func(r rune) bool { return r < 'a' || r > 'z' }); i > 0 && fs.Lookup(name[:i]) != nil {
			return fmt.Sprintf("unknown flag %s%s (a value follows its flag after a space or '=': %s%s %s)", dashes(name), name, dashes(name[:i]), name[:i], name[i:])
		}
		return fmt.Sprintf("unknown flag %s%s", dashes(name), name)
	}
	if name, ok := strings.CutPrefix(msg, "flag needs an argument: -"); ok {
		name = strings.TrimPrefix(name, "-")
		return fmt.Sprintf("%s%s needs a value", dashes(name), name)
	}
	if m := badBoolRe.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("%s%s=%q: a switch takes no value (or =true, =false)", dashes(m[2]), m[2], m[1])
	}
	m := badValueRe.FindStringSubmatch(msg)
	if m == nil {
		return msg
	}
	value, flagName, why := m[1], dashes(m[2])+m[2], m[3]
	switch why {
	case "value out of range":
		return fmt.Sprintf("%s %q: out of range", flagName, value)
	case "parse error":
	default:
		return flagName + ": " + why // the flag's own Set says why
	}
	want := "a value of its kind"
	if f := fs.Lookup(m[2]); f != nil {
		if g, ok := f.Value.(flag.Getter); ok {
			switch g.Get().(type) {
			case time.Duration:
				want = "a duration, such as 90s, 5m or 1h30m"
			case int, int64, uint, uint64:
				want = "a whole number"
			case float64:
				want = "a number"
			}
		}
	}
	return fmt.Sprintf("%s %q: want %s", flagName, value, want)
}

// dashes is how a flag is written in messages: -j, --json.
func dashes(name string) string {
	if len(name) == 1 {
		return "-"
	}
	return "--"
}
