// Package scenarios loads workloads: YAML files of host threads and their ops
// (kernels, copies, event records and waits, syncs, host work, semaphores,
// repeats), with ${var} substitution and --set overrides, bound to a topology
// (a path relative to the scenario, or the name of a shipped topology), and
// built into a sim.Program. Kernel roofline costs are resolved here through
// models, so the engine sees durations only. The scenarios shipped with
// gpusim live beside this file.
//
//	sc, err := scenarios.Load("quickstart.yaml", data, scenarios.Options{ReadFile: os.ReadFile})
//	res, err := sim.Run(sc.Topology.Machine, sc.Program)
package scenarios

import (
	"embed"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"math"
	"path"
	"slices"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"go.yaml.in/yaml/v3"

	"gpusim/internal/spec"
	"gpusim/internal/units"
	"gpusim/models"
	"gpusim/sim"
	"gpusim/topologies"
)

//go:embed *.yaml
var shipped embed.FS

// Shipped returns the names of the scenarios shipped with gpusim, sorted.
func Shipped() []string {
	ents, _ := shipped.ReadDir(".")
	var out []string
	for _, e := range ents {
		out = append(out, strings.TrimSuffix(e.Name(), ".yaml"))
	}
	sort.Strings(out)
	return out
}

// ShippedSource returns the YAML of a shipped scenario.
func ShippedSource(name string) ([]byte, bool) {
	b, err := shipped.ReadFile(name + ".yaml")
	return b, err == nil
}

// DefaultMaxOps is the default limit on the ops a scenario may expand to.
const DefaultMaxOps = 10_000_000

// MaxOpsCeiling is the largest limit on ops Load takes (a larger
// Options.MaxOps is this one): 2^36 ops, whose list alone would take 11 TB;
// the Go runtime refuses a list of 2^40 at once (a panic).
const MaxOpsCeiling = 1 << 36

// MaxRepeatDepth is how deeply repeats may nest.
const MaxRepeatDepth = 32

// Options control loading.
type Options struct {
	// Set overrides vars: name -> value, as from --set name=value. Every name
	// must be a var the scenario defines.
	Set map[string]string
	// Point is a sweep point's values of swept vars (gpusim sweep), set as
	// Set sets them; errors they cause say they came from the sweep.
	Point map[string]string
	// ReadFile reads a topology file named by path (the scenario's directory
	// joined with its topology field). Nil allows shipped topologies only.
	ReadFile func(name string) ([]byte, error)
	// MaxOps limits the ops after expanding repeats; zero means
	// DefaultMaxOps, and past MaxOpsCeiling it is MaxOpsCeiling.
	MaxOps int64
	// MemoryOps, if above zero, is the most ops there is memory to
	// simulate: Load returns a *MemoryError, before expanding them, for a
	// scenario of more.
	MemoryOps int64
	// PlanTasks, if above zero, is the most transfers a collective's plan
	// may have (models.CollSpec.MaxTasks): what the memory free holds at
	// models.PlanTaskBytes each. A ring over thousands of GPUs plans
	// hundreds of millions, and Load would die building it.
	PlanTasks int
	// Topology, if set, replaces the topology the scenario names (as
	// gpusim replay --topology does with a calibrated one); the names the
	// scenario uses must exist in it.
	Topology *topologies.Topology
	// SweepRead, if not nil, is set to the scenario's sweep once the sweep
	// and the vars have been read without error, even where the load then
	// fails: the point's values may be what fails (gpusim sweep runs the
	// other points).
	SweepRead *[]SweepVar
}

// MemoryError says a scenario expands to more ops than Options.MemoryOps
// allows: Ops, at least, counted before they were expanded.
type MemoryError struct {
	File string
	Ops  int64
}

func (e *MemoryError) Error() string {
	return fmt.Sprintf("%s expands to %d ops or more, more than there is memory to simulate", e.File, e.Ops)
}

// varRef is the first reference to a var, "${name}" with a valid name,
// in s; "" where there is none (a lone "${" is text).
func varRef(s string) string {
	for rest := s; ; {
		i := strings.Index(rest, "${")
		if i < 0 {
			return ""
		}
		rest = rest[i:]
		if j := strings.IndexByte(rest, '}'); j > 2 && spec.ValidName(rest[2:j]) {
			return rest[:j+1]
		}
		rest = rest[2:]
	}
}

// PlanMemoryError says a collective's plan, written at Where, would have
// more transfers than Options.PlanTasks allows: the memory free is short,
// not the file wrong.
type PlanMemoryError struct {
	Where string
	Err   *models.PlanTooLargeError
}

func (e *PlanMemoryError) Error() string { return e.Where + ": " + e.Err.Error() }

// SetError lists the problems of the --set values (Options.Set and
// Point), one a line, each starting "--set NAME: ". Load returns it joined
// with the file's own problems, which follow it.
type SetError struct{ Lines []string }

func (e *SetError) Error() string { return strings.Join(e.Lines, "\n") }

// Scenario is a loaded workload bound to its machine.
type Scenario struct {
	Name        string
	Description string
	File        string
	Topology    *topologies.Topology
	Program     *sim.Program
	// Vars are the values used, after --set; VarNames lists them in file
	// order. Replaced lists those of them that only the topology field
	// refers to, where Options.Topology replaced it: they change nothing.
	Vars     map[string]string
	VarNames []string
	Replaced []string
	// Sweep lists the swept vars and their values, in file order; SweepAt
	// is where the sweep: key is ("file:line:col"), for messages.
	Sweep   []SweepVar
	SweepAt string
	// Warnings are about the file itself, the same for every point of a
	// sweep (a var that nothing refers to): a command prints them once,
	// where the program's own warnings (Program.Warnings) come with each
	// run.
	Warnings []string
}

// SweepVar is one swept var and its values. A group's values are
// mappings of vars to values, swept together ({tensor: 4, stages: 2}):
// Sets holds them, Vars names the vars they set, and each value is written
// "tensor=4 stages=2".
type SweepVar struct {
	Name   string
	Values []string
	Sets   []map[string]string
	Vars   []string
}

// Sets reports whether the sweep sets var k: it is swept, or a group sets
// it.
func Sets(sweep []SweepVar, k string) (by string, ok bool) {
	for _, sv := range sweep {
		if sv.Name == k || slices.Contains(sv.Vars, k) {
			return sv.Name, true
		}
	}
	return "", false
}

// Point is one combination of swept values, in the order of the sweep's vars.
type Point []string

// Points returns the cartesian product of the sweep's values: the first var
// varies slowest, the last fastest. A scenario without a sweep has one
// point, with no values.
func Points(sweep []SweepVar) []Point {
	out := []Point{{}}
	for _, sv := range sweep {
		var next []Point
		for _, p := range out {
			for _, v := range sv.Values {
				q := append(append(Point(nil), p...), v)
				next = append(next, q)
			}
		}
		out = next
	}
	return out
}

// CountPoints returns how many points a sweep has, saturating at max.
func CountPoints(sweep []SweepVar, limit int) int {
	n := 1
	for _, sv := range sweep {
		if len(sv.Values) > 0 && n > limit/len(sv.Values) {
			return limit
		}
		n *= len(sv.Values)
	}
	return n
}

// swept reports whether the scenario sweeps var k, alone or in a group.
func (b *builder) swept(k string) bool {
	_, ok := Sets(b.sc.Sweep, k)
	return ok
}

// sameKeys reports whether a and b hold the same names, in any order.
func sameKeys(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for _, k := range a {
		if !slices.Contains(b, k) {
			return false
		}
	}
	return true
}

// Set returns the point as --set overrides for Load.
func (p Point) Set(sweep []SweepVar) map[string]string {
	m := map[string]string{}
	for i, v := range p {
		m[sweep[i].Name] = v
	}
	return m
}

// Load reads a scenario from data; file names it in messages and anchors a
// relative topology path.
//
// A --set that names no var, or one nothing refers to, is an error, said
// first; the file's own errors follow it, so that one run shows them all.
func Load(file string, data []byte, opt Options) (*Scenario, error) {
	src, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	return src.load(src.doc, src.root, opt)
}

// Source is a scenario file parsed once, to be loaded many times (a
// sweep's points) without parsing it again.
type Source struct {
	file  string
	doc   *spec.Doc
	root  spec.Node
	clone func() (*spec.Doc, spec.Node)
}

// Parse parses a scenario file for Source.Load; file names it in messages.
// Errors are those of its YAML, or of a file that is not a scenario.
func Parse(file string, data []byte) (*Source, error) {
	s, err := parse(file, data)
	if err != nil {
		return nil, err
	}
	s.clone = s.root.Cloner()
	return s, nil
}

// parse is Parse for one load, which may change the tree.
func parse(file string, data []byte) (*Source, error) {
	d, root, err := spec.Parse(file, data)
	if err != nil {
		return nil, err
	}
	if err := root.WrongKind("a scenario", "a topology", "a scenario names it in its topology: field, and gpusim topo show "+file+" shows it",
		spec.ScenarioKeys, spec.TopologyKeys); err != nil {
		return nil, err
	}
	return &Source{file: file, doc: d, root: root}, nil
}

// Load loads the parsed scenario as Load would load its file; the Source
// stays as it was, ready for the next. Loads may run at once.
func (s *Source) Load(opt Options) (*Scenario, error) {
	d, root := s.clone()
	return s.load(d, root, opt)
}

// load builds the scenario from a parsed tree, which it changes (vars are
// substituted into it).
func (s *Source) load(d *spec.Doc, root spec.Node, opt Options) (sc *Scenario, err error) {
	file := s.file
	var setErrs []string
	defer func() {
		if len(setErrs) > 0 {
			se := &SetError{Lines: setErrs}
			if err != nil {
				err = errors.Join(se, err)
			} else {
				err = se
			}
			sc = nil
		}
	}()
	if opt.MaxOps <= 0 {
		opt.MaxOps = DefaultMaxOps
	}
	opt.MaxOps = min(opt.MaxOps, MaxOpsCeiling)
	b := &builder{file: file, opt: opt, sc: &Scenario{File: file, Vars: map[string]string{}}}
	top, _ := root.Map("name", "description", "topology", "vars", "semaphores", "threads", "sweep", "training", "pipeline", "inference")
	// Vars first: they are literal, and substituted everywhere else. from
	// says where each var's value was given, for the errors it causes.
	from := map[string]string{}
	at := func(n spec.Node) string {
		return strings.TrimPrefix(n.Pos(), file+":")
	}
	var varsMap *spec.Map      // vars:, for messages about its keys
	swept := map[string]bool{} // the sweep's keys: its values replace vars:
	if sn, ok := top.Get("sweep"); ok {
		if t := sn.Target(); t != nil && t.Kind == yaml.MappingNode {
			for i := 0; i+1 < len(t.Content); i += 2 {
				swept[t.Content[i].Value] = true // read, and checked, below
			}
		}
	}
	if vn, ok := top.Get("vars"); ok {
		vm, _ := vn.MapAny()
		varsMap = vm
		for _, k := range vm.Keys() {
			v, _ := vm.Get(k)
			kn := vm.KeyNode(k)
			if _, ok := kn.Name(); !ok {
				continue
			}
			if s, ok := v.Scalar(); ok {
				_, set := opt.Set[k]
				_, point := opt.Point[k]
				if ref := varRef(s); ref != "" && !set && !point && !swept[k] {
					v.Errorf("%q refers to %s, but vars are not substituted inside vars: give %s a plain value (or set it with --set, or sweep it)", s, ref, k)
				}
				b.sc.Vars[k] = s
				b.sc.VarNames = append(b.sc.VarNames, k)
				from[k] = "vars: at " + at(v)
			}
		}
	}
	// Swept vars: each a list of values; a var the sweep names but vars do
	// not define takes its first value by default.
	var sweptAt []spec.Node // each swept var's key, for messages
	var sweptBad []bool     // whether its values were refused
	fromSweep := map[string]bool{}
	// A copy: a group's value given (by a point or --set) is replaced by
	// the values of its vars.
	set := map[string]string{}
	for k, v := range opt.Set {
		set[k] = v
	}
	for k, v := range opt.Point {
		set[k] = v
	}
	opt.Set = set
	if sn, ok := top.Get("sweep"); ok {
		b.sc.SweepAt = top.KeyNode("sweep").Pos()
		sm, isMap := sn.MapAny()
		if isMap && len(sm.Keys()) == 0 {
			sn.Errorf("an empty sweep: give each swept var its values, such as sweep: {batch: [64 MiB, 256 MiB]}, or remove it")
		}
		for _, k := range sm.Keys() {
			kn := sm.KeyNode(k)
			if _, ok := kn.Name(); !ok {
				continue
			}
			v, _ := sm.Get(k)
			list, ok := v.Seq()
			if !ok {
				// Refused (not a list); a plain value stands for the var,
				// so that what uses it adds no error of its own.
				if x := v.Target(); x != nil && x.Kind == yaml.ScalarNode {
					if _, defined := b.sc.Vars[k]; !defined {
						b.sc.Vars[k] = x.Value
						b.sc.VarNames = append(b.sc.VarNames, k)
					}
				}
				continue
			}
			if len(list) == 0 {
				v.Errorf("a swept var needs at least one value")
				continue
			}
			sv := SweepVar{Name: k}
			valueAt := make([]spec.Node, 0, len(list))
			if x := list[0].Target(); x == nil || x.Kind != yaml.MappingNode {
				sv.Values = make([]string, 0, len(list))
			}
			// A group's values are mappings of its vars (the first value
			// says which it is); members holds each value's value nodes,
			// firstKeys the first value's key nodes, for messages.
			group, bad := false, false
			var members []map[string]spec.Node
			firstKeys, firstSet := map[string]spec.Node{}, map[string]string{}
			for i, x := range list {
				isMap := x.Target() != nil && x.Target().Kind == yaml.MappingNode
				if i == 0 {
					group = isMap
				}
				switch {
				case !isMap && group:
					if len(sv.Vars) > 0 { // else the first value was refused
						x.Errorf("a plain value of %s, whose first value is a mapping of vars (%s): give each value as a mapping of them", k, strings.Join(sv.Vars, ", "))
					}
					bad = true
					continue
				case !isMap:
					if s, ok := x.Scalar(); ok {
						if c, ok := ControlChar(s); ok {
							x.Errorf("this value of %s holds a control character (%U): a sweep's values label its points in tables and messages; give printable text", k, c)
							bad = true
							continue
						}
						// A value twice would run its points twice, alike.
						if j := slices.Index(sv.Values, s); j >= 0 {
							x.Errorf("this value of %s is written %s, as the one at %s is: give each once", k, s, at(valueAt[j]))
							bad = true
							continue
						}
						sv.Values = append(sv.Values, s)
						valueAt = append(valueAt, x)
					}
					continue
				case !group:
					x.Errorf("a mapping among the plain values of %s: give every value as a mapping of the same vars, or none", k)
					bad = true
					// Its vars are taken as defined, so that what uses
					// them does not add an error of its own.
					xm, _ := x.MapAny()
					for _, gk := range xm.Keys() {
						gv, _ := xm.Get(gk)
						if gs, ok := gv.Scalar(); ok {
							if _, defined := b.sc.Vars[gk]; !defined {
								b.sc.Vars[gk] = gs
							}
						}
					}
					continue
				}
				xm, _ := x.MapAny()
				var keys []string
				set, nodes := map[string]string{}, map[string]spec.Node{}
				good := true
				for _, gk := range xm.Keys() {
					if gk == k {
						if i == 0 {
							xm.KeyNode(gk).Errorf("a group's vars cannot include the group itself (%s)", k)
						}
						good = false
						continue
					}
					keys = append(keys, gk)
					if i == 0 {
						firstKeys[gk] = xm.KeyNode(gk)
					}
					gv, _ := xm.Get(gk)
					if _, ok := xm.KeyNode(gk).Name(); !ok {
						good = false
						continue
					}
					if gs, ok := gv.Scalar(); !ok {
						good = false
					} else if c, ok := ControlChar(gs); ok {
						gv.Errorf("this value of %s holds a control character (%U): a sweep's values label its points in tables and messages; give printable text", gk, c)
						good = false
					} else {
						set[gk], nodes[gk] = gs, gv
					}
				}
				switch {
				case len(keys) == 0 && good:
					x.Errorf("an empty mapping: give the vars this value of %s sets, such as {tensor: 4, stages: 2}", k)
					bad = true
					continue
				case i == 0 || sv.Vars == nil:
					sv.Vars, firstSet = keys, set
				case !sameKeys(keys, sv.Vars):
					x.Errorf("this value of %s sets %s; each must set the vars its first sets: %s", k, strings.Join(keys, ", "), strings.Join(sv.Vars, ", "))
					bad = true
					continue
				}
				if !good {
					bad = true
					continue
				}
				var parts []string // in the order of the first value's vars
				for _, gk := range sv.Vars {
					parts = append(parts, gk+"="+set[gk])
				}
				label := strings.Join(parts, " ")
				if j := slices.Index(sv.Values, label); j >= 0 {
					x.Errorf("this value of %s is written %s, as the one at %s is: give each once", k, label, at(valueAt[j]))
					bad = true
					continue
				}
				sv.Values = append(sv.Values, label)
				sv.Sets = append(sv.Sets, set)
				valueAt = append(valueAt, x)
				members = append(members, nodes)
			}
			if by, ok := Sets(b.sc.Sweep, k); ok {
				kn.Errorf("%s is swept already, by %s", k, by)
				continue
			}
			for _, gk := range sv.Vars {
				if by, ok := Sets(b.sc.Sweep, gk); ok {
					firstKeys[gk].Errorf("%s sets %s, which %s sweeps already", k, gk, by)
					bad = true
				}
			}
			b.sc.Sweep = append(b.sc.Sweep, sv)
			sweptAt = append(sweptAt, kn)
			sweptBad = append(sweptBad, bad)
			if group {
				// A group's vars take its first value's by default, and a
				// point's (or --set of the group) from its mapping; vars:
				// may not give them another, nor name the group.
				if varsMap != nil {
					if _, ok := varsMap.Get(k); ok {
						varsMap.KeyNode(k).Errorf("%s is a group of swept vars (%s), not a var: remove it here", k, strings.Join(sv.Vars, ", "))
					}
					for _, gk := range sv.Vars {
						if _, ok := varsMap.Get(gk); ok {
							varsMap.KeyNode(gk).Errorf("%s is set by the sweep's %s, with the others of its group; its first value is the default: remove %s here, or put the mapping to use by default first", gk, k, gk)
						}
					}
				}
				if len(sv.Sets) == 0 {
					// Every value was refused: its vars are taken as
					// defined, so that what uses them adds no error.
					for _, gk := range sv.Vars {
						if _, defined := b.sc.Vars[gk]; !defined {
							b.sc.Vars[gk] = firstSet[gk]
						}
					}
					continue
				}
				for _, gk := range sv.Vars {
					if _, defined := b.sc.Vars[gk]; !defined {
						b.sc.VarNames = append(b.sc.VarNames, gk)
					}
					b.sc.Vars[gk] = sv.Sets[0][gk]
					from[gk] = "sweep: at " + at(members[0][gk])
				}
				if v, ok := opt.Set[k]; ok {
					delete(opt.Set, k)
					_, viaPoint := opt.Point[k]
					i := slices.Index(sv.Values, v)
					if i < 0 {
						setErrs = append(setErrs, fmt.Sprintf("--set %s: %q is not a value of %s's %s; its values: %s", k, v, file, k, strings.Join(sv.Values, "; ")))
						continue
					}
					for _, gk := range sv.Vars {
						if _, dup := opt.Set[gk]; dup {
							setErrs = append(setErrs, fmt.Sprintf("--set %s: %s sets it too (to %s); give one of them", gk, k, sv.Sets[i][gk]))
							continue
						}
						opt.Set[gk] = sv.Sets[i][gk]
						if viaPoint {
							from[gk] = "sweep: at " + at(members[i][gk])
							fromSweep[gk] = true
						} else {
							from[gk] = "--set " + k
							fromSweep[gk] = true // not the plain "--set"
						}
					}
				}
				continue
			}
			if _, defined := b.sc.Vars[k]; !defined && len(sv.Values) > 0 {
				b.sc.Vars[k] = sv.Values[0]
				b.sc.VarNames = append(b.sc.VarNames, k)
				from[k] = "sweep: at " + at(valueAt[0])
			}
			if v, ok := opt.Point[k]; ok {
				if i := slices.Index(sv.Values, v); i >= 0 {
					from[k] = "sweep: at " + at(valueAt[i])
					fromSweep[k] = true
				}
			}
		}
	}
	for _, k := range sortedKeys(opt.Set) {
		if _, ok := b.sc.Vars[k]; !ok {
			msg := fmt.Sprintf("--set %s: %s has no var %q", k, file, k)
			if len(b.sc.VarNames) > 0 {
				msg += "; its vars: " + strings.Join(b.sc.VarNames, ", ")
			} else {
				msg += "; it defines no vars"
			}
			setErrs = append(setErrs, msg)
			continue
		}
		if !fromSweep[k] {
			from[k] = "--set"
		}
		b.sc.Vars[k] = opt.Set[k]
	}
	used := map[string]bool{}
	// With a topology given in its place, what only the topology field
	// refers to changes nothing (topUsed: what it refers to).
	topUsed := map[string]bool{}
	for _, k := range top.Keys() {
		for _, name := range spec.KeyVarRefs(k) {
			used[name] = true // the key is the error (vars are not replaced in keys)
		}
		if k != "vars" && k != "sweep" {
			v, _ := top.Get(k)
			if k == "topology" && opt.Topology != nil {
				v.Substitute(b.sc.Vars, b.sc.VarNames, topUsed, from)
				continue
			}
			v.Substitute(b.sc.Vars, b.sc.VarNames, used, from)
		}
	}
	for _, k := range b.sc.VarNames {
		if topUsed[k] && !used[k] {
			b.sc.Replaced = append(b.sc.Replaced, k)
		}
	}
	for k := range topUsed {
		used[k] = true // for the checks below, as without a topology given
	}
	// A swept or --set var that nothing refers to would change nothing,
	// while the sweep's table and plots label its points as if it did.
	var refs []string
	for _, k := range b.sc.VarNames {
		if used[k] {
			refs = append(refs, k)
		}
	}
	unused := func(name, where string) string {
		msg := fmt.Sprintf("nothing in %s refers to ${%s}, so its value would change nothing", where, name)
		if g := spec.Suggest(name, refs); g != "" && len(name) > 3 {
			msg += fmt.Sprintf(" (did you mean %q?)", g)
		} else if len(refs) > 0 {
			msg += "; the vars in use: " + strings.Join(refs, ", ")
		} else {
			msg += "; no var is in use"
		}
		return msg
	}
	for i, sv := range b.sc.Sweep {
		switch {
		case sweptBad[i]:
			// Its values were refused: whether anything uses it is moot.
		case sv.Sets == nil && !used[sv.Name]:
			sweptAt[i].Errorf("%s", unused(sv.Name, "the scenario"))
		case sv.Sets != nil:
			for _, gk := range sv.Vars {
				if !used[gk] {
					sweptAt[i].Errorf("%s sets %s: %s", sv.Name, gk, unused(gk, "the scenario"))
				}
			}
		}
	}
	// A var of vars: that nothing refers to changes nothing: a misspelt
	// name (or a reference to it) more often than not. Warned of, as the
	// program is built below.
	if varsMap != nil {
		var names []string
		for _, k := range varsMap.Keys() {
			if !used[k] && !b.swept(k) {
				names = append(names, k)
			}
		}
		const most = 10 // a line each; the rest in one
		for i, k := range names {
			kn := varsMap.KeyNode(k)
			if i == most {
				b.sc.Warnings = append(b.sc.Warnings, fmt.Sprintf("%s: vars: and %d more vars that nothing refers to: %s", kn.Pos(), len(names)-most, strings.Join(names[most:], ", ")))
				break
			}
			b.sc.Warnings = append(b.sc.Warnings, fmt.Sprintf("%s: %s: %s", kn.Pos(), kn.Path, unused(k, "the scenario")))
		}
	}
	for _, k := range sortedKeys(opt.Set) {
		if _, known := b.sc.Vars[k]; known && !used[k] && !b.swept(k) {
			setErrs = append(setErrs, fmt.Sprintf("--set %s: %s", k, unused(k, file)))
		}
		if slices.Contains(b.sc.Replaced, k) {
			setErrs = append(setErrs, fmt.Sprintf("--set %s: only the topology field of %s refers to ${%s}, and the topology given in its place replaces it, so its value would change nothing", k, file, k))
		}
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	if opt.SweepRead != nil && len(setErrs) == 0 {
		*opt.SweepRead = b.sc.Sweep
	}
	if n, ok := top.Require("name", "the scenario's name"); ok {
		b.sc.Name, _ = n.Name()
	}
	if n, ok := top.Get("description"); ok {
		b.sc.Description, _ = n.Scalar()
	}
	tn, ok := top.Require("topology", "the machine: a path to a topology file, relative to this file, or a shipped topology ("+strings.Join(topologies.Shipped(), ", ")+")")
	if ok {
		if err := b.loadTopology(tn); err != nil {
			if d.Err() != nil {
				return nil, errors.Join(d.Err(), err)
			}
			return nil, err
		}
	}
	if b.sc.Topology == nil {
		if err := d.Err(); err != nil {
			return nil, err
		}
		return nil, fmt.Errorf("%s: no topology", file)
	}
	b.m = b.sc.Topology.Machine
	b.p = &sim.Program{Name: b.sc.Name}
	b.streams = map[string]int{}
	b.events = map[string]int{}
	b.sems = map[string]int{}
	b.ids = map[string]string{}
	b.collSig = map[string]collSig{}
	b.collRanks = map[string][]bool{}
	b.collMode = map[string]bool{}
	b.collWhere = map[string]string{}
	semKeys := map[string]spec.Node{} // declared semaphores, by name
	if sn, ok := top.Get("semaphores"); ok {
		sm, _ := sn.MapAny()
		for _, k := range sm.Keys() {
			semKeys[k] = sm.KeyNode(k)
			v, _ := sm.Get(k)
			if _, ok := sm.KeyNode(k).Name(); !ok {
				continue
			}
			init, _ := v.Int(0, 1<<31-1)
			b.sems[k] = len(b.p.Semaphores)
			b.p.Semaphores = append(b.p.Semaphores, sim.Semaphore{Name: k, Initial: int(init)})
		}
	}
	_, hasTraining := top.Get("training")
	_, hasPipeline := top.Get("pipeline")
	_, hasInference := top.Get("inference")
	if tn, ok := top.Get("threads"); ok {
		list, _ := tn.Seq()
		if list != nil && len(list) == 0 && !hasTraining && !hasPipeline && !hasInference {
			tn.Errorf("a scenario needs at least one thread")
		}
		b.threadNames = map[string]string{}
		for _, n := range list {
			b.thread(n, b.threadNames)
		}
	} else if !hasTraining && !hasPipeline && !hasInference {
		top.Node().Errorf("missing \"threads\": a list of host threads, each with a name, a host and ops (or a training:, pipeline: or inference: generator)")
	}
	if x, ok := top.Get("training"); ok {
		b.training(x, top.KeyNode("training"))
	}
	if x, ok := top.Get("pipeline"); ok {
		b.pipeline(x, top.KeyNode("pipeline"))
	}
	if x, ok := top.Get("inference"); ok {
		b.inference(x, top.KeyNode("inference"))
	}
	if b.memory != nil {
		// The input's errors first: they are the user's to fix, and
		// expanding less may not be what the file meant.
		if err := d.Err(); err != nil {
			return nil, err
		}
		return nil, b.memory
	}
	if b.planErr != nil {
		if err := d.Err(); err != nil {
			return nil, err
		}
		return nil, b.planErr
	}
	if b.p.NumOps() > int(b.opt.MaxOps) {
		top.Node().Errorf("the scenario expands to %d ops, more than the limit of %d; lower a count%s", b.p.NumOps(), b.opt.MaxOps, b.raise())
	} else if d.Err() == nil {
		// Ops that failed are not in the program: a semaphore only they
		// use would read as unused.
		b.checkSemaphores(semKeys)
	}
	if err := d.Err(); err != nil {
		return nil, err
	}
	for _, id := range b.collOrder {
		if b.collBad[id] {
			continue
		}
		var missing []string
		for r, issued := range b.collRanks[id] {
			if !issued {
				missing = append(missing, b.m.GPUs[b.collSigRanks(id)[r]].Name)
			}
		}
		if len(missing) > 0 {
			b.lateErrs = append(b.lateErrs, fmt.Sprintf("%s: collective %q is issued by rank, but no op issues the rank of %s: give each rank's op (in its own thread) the same id", b.collWhere[id], id, strings.Join(missing, ", ")))
		}
	}
	for _, d := range b.dups {
		if d.more > 0 {
			b.lateErrs[d.at] += fmt.Sprintf(" (and %s more ids of the ops repeated there)", countString(d.more))
		}
	}
	if len(b.lateErrs) > 0 {
		return nil, errors.New(strings.Join(b.lateErrs, "\n"))
	}
	if err := b.p.Validate(b.m); err != nil {
		if strings.HasPrefix(err.Error(), file+":") {
			return nil, err // its lines name their places in the file
		}
		return nil, fmt.Errorf("%s: %v", file, err)
	}
	b.sc.Program = b.p
	for _, k := range b.sc.VarNames {
		if !slices.Contains(b.sc.Replaced, k) {
			b.p.Vars = append(b.p.Vars, sim.Var{Name: k, Value: b.sc.Vars[k]})
		}
	}
	return b.sc, nil
}

func sortedKeys(m map[string]string) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}

type builder struct {
	file     string
	opt      Options
	memory   *MemoryError     // the ops past Options.MemoryOps
	planErr  *PlanMemoryError // the first plan past Options.PlanTasks
	sc       *Scenario
	m        *sim.Machine
	p        *sim.Program
	streams  map[string]int
	events   map[string]int
	sems     map[string]int
	comms    map[string]int16  // communicator name -> Op.Comm
	ids      map[string]string // op id -> where
	lateErrs []string
	// dups counts the duplicate ids of each pair of places (where,
	// where the id was first), reported once: at is its line in lateErrs.
	dups    map[[2]string]*dupCount
	collSig map[string]collSig // collective id -> what every rank's op must agree on
	// multiNode holds the GPU sets already warned of spanning several
	// NVLink domains (models.MultiNodeWarning), so that each is said once.
	multiNode map[string]bool
	// collRanks records which ranks of each rank-issued collective some op
	// issues; collWhere where it first appears; collOrder the ids in order.
	collRanks map[string][]bool
	collMode  map[string]bool // collective id -> issued by rank
	// collBad marks rank-issued collectives whose ops disagree: what
	// follows from the disagreement (the same rank twice, a rank missing)
	// is not reported again.
	collBad   map[string]bool
	collWhere map[string]string
	collOrder []string
	// streamTime sums each stream's kernel durations, seconds.
	streamTime []float64
	streamOver map[int]bool
	// collStreams shares one streams slice among the generated collective
	// ops with the same plan and stream name (a million ops, one slice each,
	// would be 90 MB).
	collStreams map[collStreamsKey][]int
	// opsMemo holds the templates of each list of ops read, by its YAML
	// node (an alias's target) and nesting depth: a list used through
	// many aliases (&o and *o) is read once, not once per use, which
	// made a 20-line file of nested aliases take a minute and 3 GB.
	opsMemo map[opsKey][]*tpl
	// graphSeen holds the places of the ops checkGraph has read.
	graphSeen map[string]bool
	// semNamed marks the semaphores some op written in the file names.
	semNamed map[int]bool
	// graphs holds, per thread and graph repeat, the streams a graph of
	// several streams runs on and the events its launches end with.
	graphs map[graphKey]*graphOrder
	// threadNames holds where each thread of threads: is named, for the
	// generators' threads, which must not take those names.
	threadNames map[string]string
}

type graphKey struct {
	thread string
	t      *tpl
}

// graphOrder orders each launch of a graph of several streams behind the
// one before, as CUDA does ("each launch is ordered behind ... any previous
// launches of graphExec", cudaGraphLaunch): a launch ends by joining its
// streams (graphRecords).
type graphOrder struct {
	streams []int
	events  []int // events[k]: the end of a launch on streams[k]
}

type opsKey struct {
	node  *yaml.Node
	depth int
}

type collStreamsKey struct {
	plan   *sim.CollPlan
	stream string
}

func (b *builder) loadTopology(n spec.Node) error {
	s, ok := n.String()
	if !ok {
		return nil
	}
	if b.opt.Topology != nil {
		b.sc.Topology = b.opt.Topology
		return nil
	}
	if strings.Contains(s, "/") || strings.HasSuffix(s, ".yaml") || strings.HasSuffix(s, ".yml") {
		p := s
		if !path.IsAbs(p) {
			p = path.Join(path.Dir(b.file), s)
		}
		if b.opt.ReadFile == nil {
			n.Errorf("cannot read topology file %s here; name a shipped topology instead (%s)", s, strings.Join(topologies.Shipped(), ", "))
			return nil
		}
		data, err := b.opt.ReadFile(p)
		if err != nil {
			why := err.Error()
			if errors.Is(err, fs.ErrNotExist) {
				why = "no such file"
			}
			where := ""
			if p != s {
				where = " (" + p + ", beside the scenario)"
			}
			n.Errorf("cannot read topology %s%s: %s; shipped topologies: %s", s, where, why, strings.Join(topologies.Shipped(), ", "))
			return nil
		}
		t, err := topologies.Load(p, data)
		if err != nil {
			// Its problems are the file's; this line says which scenario
			// line named it.
			return fmt.Errorf("%w\n%s: topology: %s does not load (above)", err, n.Pos(), s)
		}
		b.sc.Topology = t
		return nil
	}
	if _, ok := topologies.ShippedSource(s); !ok {
		hint := ""
		if g := spec.Suggest(s, topologies.Shipped()); g != "" {
			hint = fmt.Sprintf(" (did you mean %q?)", g)
		}
		n.Errorf("no shipped topology named %q%s; shipped: %s (or give a path to a .yaml file)", s, hint, strings.Join(topologies.Shipped(), ", "))
		return nil
	}
	t, err := topologies.LoadShipped(s)
	if err != nil {
		return err
	}
	b.sc.Topology = t
	return nil
}

func (b *builder) thread(n spec.Node, names map[string]string) {
	tm, ok := n.Map("name", "host", "ops")
	if !ok {
		return
	}
	th := sim.Thread{Host: -1}
	if nn, ok := tm.Require("name", "the thread's name, such as main"); ok {
		if s, ok := nn.Name(); ok {
			if prev, dup := names[s]; dup && prev == nn.Pos() {
				nn.Errorf("duplicate thread name %q: the same thread is used again through an alias (*); give each thread its own name", s)
			} else if dup {
				nn.Errorf("duplicate thread name %q (first at %s)", s, prev)
			}
			names[s] = nn.Pos()
			th.Name = s
		}
	}
	if hn, ok := tm.Get("host"); ok {
		if s, ok := hn.Name(); ok {
			i := b.m.NodeIndex(s)
			if i < 0 || b.m.Nodes[i].Kind != sim.NodeHost {
				hn.Errorf("%q is not a host of topology %s; hosts: %s", s, b.m.Name, b.hostNames())
			} else {
				th.Host = b.m.Nodes[i].Index
			}
		}
	} else if len(b.m.Hosts) == 1 {
		th.Host = 0
	} else {
		tm.Node().Errorf("missing \"host\": the CPU socket this thread runs on (one of %s)", b.hostNames())
	}
	on, ok := tm.Require("ops", "the thread's list of ops")
	if !ok {
		return
	}
	ts := b.ops(on, 0)
	total := countOps(ts)
	what := "a repeat count"
	if orderedGraph(ts, map[*tpl]bool{}) {
		what = "a repeat count (the count includes the 3n-2 ops that order each launch of a graph on n streams)"
	}
	if !b.checkOps(on, total, what) {
		return
	}
	th.Ops = make([]sim.Op, 0, total)
	b.expand(&th, ts, "")
	b.checkTime(&th, on)
	b.p.Threads = append(b.p.Threads, th)
}

// checkSemaphores refuses a semaphore declared in semaphores: that no op
// signals or awaits: most often a misspelt name (an await of the name meant
// would deadlock, named differently).
func (b *builder) checkSemaphores(declared map[string]spec.Node) {
	n := len(b.p.Semaphores)
	if n == 0 {
		return
	}
	// A semaphore that starts at 0 and that some op awaits but none
	// signals: that await waits forever, most often on a misspelt name.
	// A warning, which validate prints too: the run reports the deadlock.
	signalled := make([]bool, n)
	firstAwait := make([]*sim.Op, n)
	for ti := range b.p.Threads {
		for oi := range b.p.Threads[ti].Ops {
			switch op := &b.p.Threads[ti].Ops[oi]; op.Kind {
			case sim.OpSignal:
				signalled[op.Sem] = true
			case sim.OpAwait:
				if firstAwait[op.Sem] == nil {
					firstAwait[op.Sem] = op
				}
			}
		}
	}
	var sent []string
	for i, sem := range b.p.Semaphores {
		if signalled[i] {
			sent = append(sent, sem.Name)
		}
	}
	for i, sem := range b.p.Semaphores {
		if op := firstAwait[i]; op != nil && !signalled[i] && sem.Initial == 0 {
			msg := fmt.Sprintf("%s: op %s awaits semaphore %q, which no op signals and which starts at 0: it waits forever", op.Where, op.ID, sem.Name)
			switch s := spec.Suggest(sem.Name, sent); {
			case s != "":
				msg += fmt.Sprintf(" (did you mean %q?)", s)
			case len(sent) > 0:
				msg += " (semaphores signalled: " + strings.Join(sent, ", ") + ")"
			default:
				msg += "; signal it in another thread (signal: {semaphore: " + sem.Name + "}), or declare it with a count (semaphores: {" + sem.Name + ": 1})"
			}
			b.p.Warnings = append(b.p.Warnings, msg) // a run says the deadlock
		}
	}
	if len(declared) == 0 {
		return
	}
	used := make([]bool, n)
	for i := range used {
		used[i] = b.semNamed[i]
	}
	for ti := range b.p.Threads {
		for oi := range b.p.Threads[ti].Ops {
			if op := &b.p.Threads[ti].Ops[oi]; op.Kind == sim.OpSignal || op.Kind == sim.OpAwait {
				used[op.Sem] = true
			}
		}
	}
	var names []string
	for i, sem := range b.p.Semaphores {
		if used[i] {
			names = append(names, sem.Name)
		}
	}
	others := "no op uses a semaphore"
	if len(names) > 0 {
		others = "semaphores used: " + strings.Join(names, ", ")
	}
	for i, sem := range b.p.Semaphores {
		if kn, ok := declared[sem.Name]; ok && !used[i] {
			kn.Errorf("semaphore %q is declared but no op signals or awaits it (%s)", sem.Name, others)
		}
	}
}

// checkTime refuses, before running, a thread whose own host time, or a
// stream whose kernels, already add up to more than the simulated time range:
// a lower bound of the makespan.
func (b *builder) checkTime(th *sim.Thread, on spec.Node) {
	limit := sim.MaxTime.Seconds()
	api := b.m.Hosts[max(th.Host, 0)].APIOverhead.Seconds()
	host := 0.0
	for i := range th.Ops {
		op := &th.Ops[i]
		switch op.Kind {
		case sim.OpHost:
			host += op.Duration.Seconds()
		case sim.OpSignal, sim.OpAwait:
		default:
			host += api
		}
		if op.Kind == sim.OpKernel {
			for len(b.streamTime) <= op.Stream {
				b.streamTime = append(b.streamTime, 0)
			}
			b.streamTime[op.Stream] += op.Duration.Seconds()
			if b.streamTime[op.Stream] > limit && !b.streamOver[op.Stream] {
				if b.streamOver == nil {
					b.streamOver = map[int]bool{}
				}
				b.streamOver[op.Stream] = true
				b.lateErrs = append(b.lateErrs, fmt.Sprintf("%s: the kernels on stream %s add up to more than the simulated time range (at most %d days)",
					op.Where, b.p.StreamName(b.m, op.Stream), int64(limit/86400)))
			}
		}
	}
	if host > limit {
		on.Errorf("the host work and API calls of thread %s add up to %.3g s, past the simulated time range (at most %d days)", th.Name, host, int64(limit/86400))
	}
}

func (b *builder) hostNames() string {
	var out []string
	for _, h := range b.m.Hosts {
		out = append(out, h.Name)
	}
	return strings.Join(out, ", ")
}

// tpl is a parsed op, or a repeat of a list of them.
type tpl struct {
	op     sim.Op
	id     string // explicit id, or ""
	where  string
	count  int64 // repeat count; body is set for repeats
	body   []*tpl
	repeat bool
	graph  bool // each iteration of the repeat is a CUDA graph launch
	bad    bool
	// n counts the ops of a repeat's body once it is known (countOps):
	// bodies are shared where lists of ops are (opsMemo).
	n int64
	// streams, for a graph repeat, are those its body runs on, once known
	// (graphStreamsOf).
	streams []int
	// written is what a collective's op wrote of the fields the ops
	// issuing its ranks must agree on, for messages.
	written collWritten
}

// collWritten is what a collective's op wrote of its optional fields, ""
// for those it left out: dtype canonical, numbers as read.
type collWritten struct {
	dtype, algorithm, protocol, channels, smShare, root string
}

const kinds = "kernel, copy, record, wait, sync, host, signal, await, repeat, allreduce, allgather, reducescatter, broadcast, reduce, alltoall, sendrecv"

func (b *builder) ops(n spec.Node, depth int) []*tpl {
	key := opsKey{n.Target(), depth}
	if out, ok := b.opsMemo[key]; ok && key.node != nil {
		return out
	}
	out := b.readOps(n, depth)
	if b.opsMemo == nil {
		b.opsMemo = map[opsKey][]*tpl{}
	}
	b.opsMemo[key] = out
	return out
}

func (b *builder) readOps(n spec.Node, depth int) []*tpl {
	list, ok := n.Seq()
	if !ok {
		return nil
	}
	var out []*tpl
	for _, on := range list {
		om, ok := on.Map(strings.Split(kinds, ", ")...)
		if !ok {
			continue
		}
		keys := om.Keys()
		if len(keys) != 1 {
			if len(keys) == 0 {
				on.Errorf("an op needs one of: %s", kinds)
			} else {
				on.Errorf("an op is one of %s, but this one has %d keys (%s): put each op in its own list item", kinds, len(keys), strings.Join(keys, ", "))
			}
			continue
		}
		if !strings.Contains(", "+kinds+", ", ", "+keys[0]+", ") {
			continue // reported by Map
		}
		v, _ := om.Get(keys[0])
		t := b.op(keys[0], v, depth)
		if t != nil && !t.bad {
			out = append(out, t)
		}
	}
	return out
}

func countOps(ts []*tpl) int64 {
	var n int64
	for _, t := range ts {
		if t.repeat {
			if t.n == 0 {
				t.n = countOps(t.body) + 1 // +1: zero is not yet counted
				if t.graph && t.n > 1 {
					t.n = satAdd(t.n, graphOrderOps(len(t.graphStreamsOf())))
				}
			}
			n = satAdd(n, satMul(t.count, t.n-1))
		} else {
			n = satAdd(n, 1)
		}
	}
	return n
}

func countString(n int64) string {
	if n >= 1<<62 {
		return "more than 4.6e18"
	}
	return strconv.FormatInt(n, 10)
}

func (b *builder) expand(th *sim.Thread, ts []*tpl, suffix string) {
	for _, t := range ts {
		if t.repeat && t.n == 1 {
			continue // no ops in its body (counted by countOps): nothing to repeat
		}
		if t.repeat {
			for i := int64(0); i < t.count; i++ {
				first := len(th.Ops)
				g := b.graphs[graphKey{th.Name, t}]
				b.expand(th, t.body, suffix+"#"+strconv.FormatInt(i, 10))
				if t.graph && len(th.Ops) > first {
					if g == nil {
						g = b.graphOrderOf(th, t)
					}
					if g != nil {
						b.graphRecords(th, g, t.where)
					}
					th.Ops[first].GraphOps = len(th.Ops) - first
				}
			}
			continue
		}
		op := t.op
		if t.id != "" {
			op.ID = t.id + suffix
		} else {
			op.ID = th.Name + "/" + strconv.Itoa(len(th.Ops))
		}
		key := op.ID
		if op.Kind == sim.OpCollective {
			// An id names either a collective issued whole or one issued
			// rank by rank, never both.
			byRank := op.OneRank
			if prev, seen := b.collMode[op.ID]; seen && prev != byRank {
				b.lateErrs = append(b.lateErrs, fmt.Sprintf("%s: collective id %q is used both for a whole collective and for one issued by rank", t.where, op.ID))
			}
			b.collMode[op.ID] = byRank
		}
		if op.Kind == sim.OpCollective && op.OneRank {
			key += "@" + strconv.Itoa(op.Rank)
			sig := b.collSignature(&op, t.where, t.written)
			if first, seen := b.collSig[op.ID]; seen && !b.collBad[op.ID] {
				if diff := first.differences(sig); diff != "" {
					b.lateErrs = append(b.lateErrs, fmt.Sprintf("%s: the ops issuing ranks of collective %q disagree: %s; every rank's op gives the same kind, GPUs in the same order, size, dtype, root, algorithm, protocol, channels, sm_share and comm", t.where, op.ID, diff))
					if b.collBad == nil {
						b.collBad = map[string]bool{}
					}
					b.collBad[op.ID] = true
				} else if first.vals[sigDType] == "" && sig.vals[sigDType] != "" {
					// The first op left the dtype to the size: the
					// first that gives one (and agrees on the rest)
					// stands for them from now on.
					b.collSig[op.ID] = sig
				}
			} else if !seen {
				b.collSig[op.ID] = sig
			}
			if b.collRanks[op.ID] == nil {
				b.collRanks[op.ID] = make([]bool, len(op.Coll.Ranks))
				b.collWhere[op.ID] = t.where
				b.collOrder = append(b.collOrder, op.ID)
			}
			// An op over more GPUs than the first (an error said above)
			// marks no rank.
			if r := b.collRanks[op.ID]; op.Rank < len(r) {
				r[op.Rank] = true
			}
		}
		if prev, dup := b.ids[key]; dup {
			if !b.collBad[op.ID] {
				b.dupID(t.id, op.ID, t.where, prev)
			}
		} else {
			b.ids[key] = t.where
		}
		op.Where = t.where
		th.Ops = append(th.Ops, op)
	}
}

// graphStreamsOf is graphStreams of the repeat's body, worked out once.
func (t *tpl) graphStreamsOf() []int {
	if t.streams == nil {
		if t.streams = graphStreams(t.body); t.streams == nil {
			t.streams = []int{} // known: none
		}
	}
	return t.streams
}

// graphStreams lists the streams a graph's body runs on, in the order
// they first appear (a collective issued whole runs on one per rank). A
// repeat is walked once, however many lists share it.
func graphStreams(body []*tpl) []int {
	seen := map[int]bool{}
	walked := map[*tpl]bool{}
	var streams []int
	var walk func([]*tpl)
	walk = func(ts []*tpl) {
		for _, t := range ts {
			use := func(s int) {
				if !seen[s] {
					seen[s] = true
					streams = append(streams, s)
				}
			}
			switch {
			case t.repeat:
				if !walked[t] {
					walked[t] = true
					walk(t.body)
				}
			case t.op.Kind == sim.OpCollective && !t.op.OneRank:
				for _, s := range t.op.Streams {
					use(s)
				}
			case t.op.Kind == sim.OpCollective && t.op.Rank >= 0 && t.op.Rank < len(t.op.Streams):
				// One rank's part runs on its own GPU's stream, not on
				// Stream (the first rank's): a graph of rank gpu1 joined
				// gpu0's stream and deadlocked on its second launch.
				use(t.op.Streams[t.op.Rank])
			case t.op.Kind.OnStream():
				use(t.op.Stream)
			}
		}
	}
	walk(body)
	return streams
}

// orderedGraph reports whether ts holds a graph repeat on several streams,
// whose launches add ops of their own (graphRecords).
func orderedGraph(ts []*tpl, walked map[*tpl]bool) bool {
	for _, t := range ts {
		if !t.repeat || walked[t] {
			continue
		}
		walked[t] = true
		if t.graph && len(t.graphStreamsOf()) > 1 || orderedGraph(t.body, walked) {
			return true
		}
	}
	return false
}

// graphOrderOps is how many ops ordering the launches of a graph on n
// streams adds to each: see graphRecords.
func graphOrderOps(n int) int64 {
	if n < 2 {
		return 0
	}
	return int64(3*n - 2)
}

// graphOrderOf makes the order of a graph's launches on this thread; for
// a graph on one stream, whose launches its stream already orders, nil.
// Its events are named for the thread, the graph's place (line and column)
// and the stream.
func (b *builder) graphOrderOf(th *sim.Thread, t *tpl) *graphOrder {
	streams := t.graphStreamsOf()
	if len(streams) < 2 {
		return nil
	}
	pos := t.where
	if i := strings.LastIndexByte(pos, ':'); i > 0 {
		if j := strings.LastIndexByte(pos[:i], ':'); j >= 0 {
			pos = pos[j+1:]
		}
	}
	g := &graphOrder{streams: streams}
	for k, s := range streams {
		what := "done on " + b.p.StreamName(b.m, s)
		if k == 0 {
			what = "done on every stream"
		}
		g.events = append(g.events, len(b.p.Events))
		b.p.Events = append(b.p.Events, fmt.Sprintf("%s: graph at line %s %s", th.Name, pos, what))
	}
	if b.graphs == nil {
		b.graphs = map[graphKey]*graphOrder{}
	}
	b.graphs[graphKey{th.Name, t}] = g
	return g
}

// graphRecords ends a launch by joining its streams: each stream but the
// first records its end, the first waits for them all and records the end
// of the whole launch (events[0]), and the others wait for that. The next
// launch's ops follow these on every stream. Every launch adds the same
// 3n-2 ops on n streams (graphOrderOps), so the op limit counts them
// exactly before expanding.
func (b *builder) graphRecords(th *sim.Thread, g *graphOrder, where string) {
	add := func(kind sim.OpKind, s, e int) {
		th.Ops = append(th.Ops, sim.Op{ID: th.Name + "/" + strconv.Itoa(len(th.Ops)), Kind: kind, Stream: s, Event: e, Where: where})
	}
	for k := 1; k < len(g.streams); k++ {
		add(sim.OpEventRecord, g.streams[k], g.events[k])
	}
	for k := 1; k < len(g.streams); k++ {
		add(sim.OpEventWait, g.streams[0], g.events[k])
	}
	add(sim.OpEventRecord, g.streams[0], g.events[0])
	for k := 1; k < len(g.streams); k++ {
		add(sim.OpEventWait, g.streams[k], g.events[0])
	}
}

// checkGraph reports, once per op, what a CUDA graph (a repeat with graph:
// true) cannot hold: host-side ops, pageable copies, and another graph.
func (b *builder) checkGraph(body []*tpl) {
	for _, t := range body {
		// Each op once, by its place in the file, however many graph
		// repeats share it (opsMemo, and its reads at other depths): a DAG
		// of lists used through aliases would be walked as a tree.
		if b.graphSeen[t.where] {
			continue
		}
		if b.graphSeen == nil {
			b.graphSeen = map[string]bool{}
		}
		b.graphSeen[t.where] = true
		msg := ""
		switch {
		case t.repeat && t.graph:
			msg = "a graph repeat inside a graph repeat: a CUDA graph is launched whole, not from another; drop graph: true from one of them"
		case t.repeat:
			b.checkGraph(t.body)
		case t.op.Kind == sim.OpSync:
			msg = "a sync inside a graph repeat: CUDA forbids synchronizing while a graph is captured; move it after the repeat"
		case !t.op.Kind.OnStream():
			msg = "gpusim's graphs hold kernels, pinned copies, records, waits and collectives; host work, signals and awaits run on the calling thread (CUDA's host nodes run on a driver thread, which gpusim does not model): move it out of the graph repeat"
		case t.op.Kind == sim.OpCopy && t.op.Memory == sim.Pageable:
			msg = "gpusim's graphs hold kernels, pinned copies, records, waits and collectives; a pageable copy is staged by the host, and CUDA cannot capture it: use memory: pinned or move it out"
		}
		if msg != "" {
			b.lateErrs = append(b.lateErrs, t.where+": "+msg)
		}
	}
}

// dupCount is a duplicate id reported, and how many more there were
// between the same two places (the ops of repeats).
type dupCount struct {
	at   int
	more int64
}

// dupID reports a duplicate id once per pair of places, counting the
// others (each repeat of the ops makes one).
func (b *builder) dupID(written, id, where, prev string) {
	key := [2]string{where, prev}
	if d, seen := b.dups[key]; seen {
		d.more++
		return
	}
	if b.dups == nil {
		b.dups = map[[2]string]*dupCount{}
	}
	b.dups[key] = &dupCount{at: len(b.lateErrs)}
	also := "also at " + prev
	switch {
	case written == "":
		written = id // a thread's own name for an op, "main/3"
	case id != written:
		// The id this op takes in its repeat: "k" written, "k#1" run.
		also = fmt.Sprintf("this op's %s, numbered in its repeat; also at %s", written, prev)
		written = id
	}
	b.lateErrs = append(b.lateErrs, fmt.Sprintf("%s: duplicate op id %q (%s): an id names one op; give each op an id of its own (only the ops that issue the ranks of one collective share theirs)", where, written, also))
}

func (b *builder) op(kind string, n spec.Node, depth int) *tpl {
	t := &tpl{where: n.Pos()}
	if kind == "repeat" {
		if depth >= MaxRepeatDepth {
			n.Errorf("repeats nest deeper than %d", MaxRepeatDepth)
			return nil
		}
		rm, ok := n.Map("count", "ops", "graph")
		if !ok {
			return nil
		}
		t.repeat = true
		if gn, ok := rm.Get("graph"); ok {
			t.graph, _ = gn.Bool()
		}
		if cn, ok := rm.Require("count", "how many times to run ops"); ok {
			t.count, ok = cn.Int(0, 1<<62)
			if !ok {
				return nil
			}
		}
		if on, ok := rm.Require("ops", "the list of ops to repeat"); ok {
			t.body = b.ops(on, depth+1)
		}
		if t.graph {
			b.checkGraph(t.body)
		}
		return t
	}
	var keys []string
	switch kind {
	case "kernel":
		keys = []string{"id", "stream", "duration", "flops", "dtype", "bytes", "sm_share"}
	case "copy":
		keys = []string{"id", "from", "to", "bytes", "memory", "stream", "p2p"}
	case "record", "wait":
		keys = []string{"id", "event", "stream"}
	case "sync":
		keys = []string{"id", "stream", "event", "device"}
	case "host":
		keys = []string{"id", "duration"}
	case "signal":
		keys = []string{"id", "semaphore", "count"}
	case "await":
		keys = []string{"id", "semaphore"}
	default: // collectives
		keys = []string{"id", "gpus", "bytes", "dtype", "stream", "streams", "algorithm", "protocol", "channels", "sm_share", "root", "rank", "comm", "in_place"}
	}
	om, ok := n.Map(keys...)
	if !ok {
		t.bad = true
		return t
	}
	if idn, ok := om.Get("id"); ok {
		if s, ok := idn.Name(); ok {
			t.id = s
		}
	}
	op := &t.op
	op.Stream, op.Event, op.GPU, op.Sem, op.Src, op.Dst = -1, -1, -1, -1, -1, -1
	stream := func(required bool) {
		sn, ok := om.Get("stream")
		if !ok {
			if required {
				n.Errorf("missing \"stream\": the stream it runs on, as GPU/NAME (for example %s/compute)", b.m.GPUs[0].Name)
				t.bad = true
			}
			return
		}
		op.Stream = b.stream(sn)
		if op.Stream < 0 {
			t.bad = true
		}
	}
	event := func() {
		en, ok := om.Require("event", "the event's name")
		if !ok {
			t.bad = true
			return
		}
		s, ok := en.Name()
		if !ok {
			t.bad = true
			return
		}
		i, seen := b.events[s]
		if !seen {
			i = len(b.p.Events)
			b.events[s] = i
			b.p.Events = append(b.p.Events, s)
		}
		op.Event = i
	}
	switch kind {
	case "kernel":
		op.Kind = sim.OpKernel
		stream(true)
		op.SMShare = 1
		if x, ok := om.Get("sm_share"); ok {
			v, ok := x.Float(0, 1)
			if ok && v == 0 {
				x.Errorf("sm_share must be more than zero: a fraction of the SMs such as 0.5 or 50%%")
			}
			op.SMShare = v
		}
		dn, hasDur := om.Get("duration")
		fn, hasFlops := om.Get("flops")
		bn, hasBytes := om.Get("bytes")
		tn, hasDType := om.Get("dtype")
		switch {
		case hasDur && (hasFlops || hasBytes || hasDType):
			var also []string
			for _, k := range []struct {
				name string
				has  bool
			}{{"flops", hasFlops}, {"bytes", hasBytes}, {"dtype", hasDType}} {
				if k.has {
					also = append(also, k.name)
				}
			}
			dn.Errorf("duration with %s: give either duration, or flops (with dtype) and bytes for the roofline model, not both", strings.Join(also, " and "))
			t.bad = true
		case hasDur:
			op.Duration, ok = dn.Time(spec.NonNeg)
			t.bad = t.bad || !ok
		case hasFlops || hasBytes:
			var flops, bytes float64
			if hasFlops {
				flops, ok = fn.Quantity(units.FLOPs, spec.NonNeg)
				t.bad = t.bad || !ok
			}
			if hasBytes {
				bytes, ok = bn.Quantity(units.Bytes, spec.NonNeg)
				t.bad = t.bad || !ok
			}
			var dt models.DType
			if hasDType {
				if s, ok := tn.Scalar(); ok {
					if dt, ok = models.ParseDType(s); !ok {
						tn.Errorf("unknown dtype %q; dtypes: %s", s, dtypeNames())
						t.bad = true
					}
				}
			} else if hasFlops && flops > 0 {
				fn.Errorf("flops need a dtype (%s) to pick the peak rate", dtypeNames())
				t.bad = true
			}
			if !t.bad && op.Stream >= 0 {
				g := b.p.Streams[op.Stream].GPU
				share := op.SMShare
				if share <= 0 {
					share = 1 // said above
				}
				d, err := models.KernelTime(b.sc.Topology.GPUModels[g], flops, dt, bytes, share)
				if err != nil {
					// At the quantity that takes it past the range.
					gm := b.sc.Topology.GPUModels[g]
					where := n
					if _, derr := models.KernelTime(gm, 1, dt, 0, 1); hasDType && derr != nil {
						where = tn // a dtype the GPU has no rate for
					} else if _, ferr := models.KernelTime(gm, flops, dt, 0, share); hasFlops && ferr != nil {
						where = fn
					} else if hasBytes {
						where = bn
					}
					where.Errorf("%v", err)
					t.bad = true
				}
				op.Duration = d
				op.MemoryBound = models.MemoryBound(b.sc.Topology.GPUModels[g], flops, dt, bytes)
				if !hasFlops || flops == 0 {
					// Memory traffic alone: the hw backend moves it.
					op.Bytes = int64(math.Min(math.Round(bytes), 1<<62)) // past any GPU's memory: hw refuses it
				}
			}
		default:
			n.Errorf("a kernel needs a duration, or flops (with dtype) and/or bytes for the roofline model")
			t.bad = true
		}
	case "copy":
		op.Kind = sim.OpCopy
		stream(true)
		end := func(key string) int {
			en, ok := om.Require(key, "a host or GPU name")
			if !ok {
				return -1
			}
			s, ok := en.Name()
			if !ok {
				return -1
			}
			i := b.m.NodeIndex(s)
			if i < 0 || b.m.Nodes[i].Kind == sim.NodeSwitch {
				en.Errorf("%q is not a host or GPU of topology %s; hosts and GPUs: %s", s, b.m.Name, b.endpoints())
				return -1
			}
			return i
		}
		op.Src, op.Dst = end("from"), end("to")
		if bn, ok := om.Require("bytes", "the copy's size, such as 256 MiB"); ok {
			op.Bytes, ok = bn.ByteCount(spec.NonNeg)
			t.bad = t.bad || !ok
		}
		if op.Src < 0 || op.Dst < 0 {
			t.bad = true
			break
		}
		src, dst := b.m.Nodes[op.Src], b.m.Nodes[op.Dst]
		if mn, ok := om.Get("memory"); ok {
			if src.Kind == sim.NodeGPU && dst.Kind == sim.NodeGPU {
				mn.Errorf("memory applies only to copies to or from a host")
				t.bad = true
			} else if s, ok := mn.Enum("pinned", "pageable"); ok && s == "pageable" {
				op.Memory = sim.Pageable
			}
		}
		if pn, ok := om.Get("p2p"); ok {
			if src.Kind != sim.NodeGPU || dst.Kind != sim.NodeGPU {
				pn.Errorf("p2p applies only to copies between GPUs")
				t.bad = true
			} else if v, ok := pn.Bool(); ok {
				op.NoPeerAccess = !v
			}
		}
		if src.Kind == sim.NodeHost && dst.Kind == sim.NodeHost {
			n.Errorf("a copy between two hosts (%s, %s) is CPU work: use a host op", src.Name, dst.Name)
			t.bad = true
			break
		}
		if op.Stream >= 0 {
			g := b.p.Streams[op.Stream].GPU
			gn := b.m.GPUs[g].Node
			if gn != op.Src && gn != op.Dst {
				sn, _ := om.Get("stream")
				sn.Errorf("stream %s belongs to %s, which is neither end of the copy (%s to %s); use a stream of %s", b.p.StreamName(b.m, op.Stream), b.m.GPUs[g].Name, src.Name, dst.Name, gpuEnds(src, dst))
				t.bad = true
				break
			}
		}
		if src.Kind == sim.NodeGPU && dst.Kind == sim.NodeGPU {
			if b.m.PathBetween(src.Index, dst.Index).Kind == sim.PathNone {
				n.Errorf("%s cannot reach %s: no route, and no host reachable from both to stage through", src.Name, dst.Name)
				t.bad = true
			} else if pn, _ := om.Get("p2p"); op.NoPeerAccess && b.m.StagedPath(src.Index, dst.Index).Kind == sim.PathNone {
				pn.Errorf("without peer access a copy stages through a host that both GPUs reach, and no host reaches both %s and %s; drop p2p: false to copy peer to peer", src.Name, dst.Name)
				t.bad = true
			}
		} else if _, ok := b.m.Route(op.Src, op.Dst); !ok {
			n.Errorf("no route from %s to %s in topology %s", src.Name, dst.Name, b.m.Name)
			t.bad = true
		}
	case "record":
		op.Kind = sim.OpEventRecord
		event()
		stream(true)
	case "wait":
		op.Kind = sim.OpEventWait
		event()
		stream(true)
	case "sync":
		op.Kind = sim.OpSync
		_, hs := om.Get("stream")
		_, he := om.Get("event")
		dn, hd := om.Get("device")
		c := 0
		for _, h := range []bool{hs, he, hd} {
			if h {
				c++
			}
		}
		if c != 1 {
			n.Errorf("a sync waits for exactly one of: stream (GPU/NAME), event (a name), device (a GPU)")
			t.bad = true
			break
		}
		switch {
		case hs:
			op.Sync = sim.SyncStream
			stream(true)
		case he:
			op.Sync = sim.SyncEvent
			event()
		case hd:
			op.Sync = sim.SyncDevice
			if s, ok := dn.Name(); ok {
				i := b.m.NodeIndex(s)
				if i < 0 || b.m.Nodes[i].Kind != sim.NodeGPU {
					dn.Errorf("%q is not a GPU of topology %s; GPUs: %s", s, b.m.Name, b.gpuNames())
					t.bad = true
				} else {
					op.GPU = b.m.Nodes[i].Index
				}
			} else {
				t.bad = true
			}
		}
	case "host":
		op.Kind = sim.OpHost
		if dn, ok := om.Require("duration", "the CPU time of the work, such as 50 us"); ok {
			op.Duration, ok = dn.Time(spec.NonNeg)
			t.bad = t.bad || !ok
		} else {
			t.bad = true
		}
	case models.AllReduce, models.AllGather, models.ReduceScatter, models.Broadcast, models.Reduce, models.AllToAll, models.SendRecv:
		t.bad = !b.collective(kind, n, om, op, &t.written)
	case "signal", "await":
		op.Kind = sim.OpSignal
		if kind == "await" {
			op.Kind = sim.OpAwait
		}
		op.Count = 1
		if sn, ok := om.Require("semaphore", "the semaphore's name"); ok {
			if s, ok := sn.Name(); ok {
				i, seen := b.sems[s]
				if !seen {
					i = len(b.p.Semaphores)
					b.sems[s] = i
					b.p.Semaphores = append(b.p.Semaphores, sim.Semaphore{Name: s})
				}
				op.Sem = i
				if b.semNamed == nil {
					b.semNamed = map[int]bool{}
				}
				b.semNamed[i] = true // even in a repeat of count 0
			}
		}
		if cn, ok := om.Get("count"); ok && kind == "signal" { // an await takes one
			v, _ := cn.Int(1, 1<<31-1)
			op.Count = int(v)
		}
	}
	return t
}

// collective reads a collective op and builds its plan.
func (b *builder) collective(kind string, n spec.Node, om *spec.Map, op *sim.Op, w *collWritten) bool {
	op.Kind = sim.OpCollective
	cs := models.CollSpec{Kind: kind}
	ok := true
	// Ranks.
	gn, has := om.Require("gpus", "the GPUs taking part, in rank order: all, a count (the first N), or a list")
	if !has {
		return false
	}
	cs.GPUs, ok = b.gpuList(gn)
	if !ok {
		return false
	}
	if bn, has := om.Require("bytes", "the size as nccl-tests counts it, such as 256 MiB"); has {
		v, good := bn.ByteCount(spec.NonNeg)
		cs.Bytes = v
		ok = ok && good
	} else {
		ok = false
	}
	if dn, has := om.Get("dtype"); has {
		if s, good := dn.Scalar(); good {
			d, good := models.ParseDType(s)
			if !good {
				dn.Errorf("unknown dtype %q; dtypes: %s", s, dtypeNames())
				ok = false
			} else {
				w.dtype = string(d)
			}
			if sz := int64(d.Size()); good && ok && cs.Bytes%sz != 0 {
				bn, _ := om.Get("bytes")
				bn.Errorf("%d bytes is not a whole number of %s elements (%d bytes each): NCCL moves a count of elements", cs.Bytes, d, sz)
				ok = false
			}
		}
	}
	if an, has := om.Get("algorithm"); has {
		cs.Algorithm, _ = an.Enum(models.Algorithms...)
		w.algorithm = cs.Algorithm
	}
	if cn, has := om.Get("comm"); has {
		if name, good := cn.Name(); good {
			if _, seen := b.comms[name]; !seen && len(b.p.Comms) >= math.MaxInt16 {
				cn.Errorf("more than %d communicators named; collectives without comm share the communicator of their GPUs", math.MaxInt16)
				return false
			}
			op.Comm = b.namedComm(name)
		} else {
			ok = false
		}
	}
	if pn, has := om.Get("protocol"); has {
		cs.Protocol, _ = pn.Enum(models.Protocols...)
		w.protocol = cs.Protocol
	}
	if cn, has := om.Get("channels"); has {
		v, _ := cn.Int(1, 64)
		cs.Channels = int(v)
		w.channels = strconv.Itoa(cs.Channels)
	}
	if sn, has := om.Get("sm_share"); has {
		v, good := sn.Float(0, 1)
		if good && v == 0 {
			sn.Errorf("sm_share must be more than zero: a fraction of the SMs such as 0.1 or 10%%")
		}
		cs.SMShare = v
		w.smShare = strconv.FormatFloat(v, 'g', -1, 64)
	}
	if ipn, has := om.Get("in_place"); has {
		cs.InPlace, _ = ipn.Bool()
	}
	if rn, has := om.Get("root"); has {
		if kind != models.Broadcast && kind != models.Reduce {
			rn.Errorf("root applies to broadcast and reduce only")
			ok = false
		} else if s, good := rn.Name(); good {
			w.root = s
			cs.Root = -1
			for r, g := range cs.GPUs {
				if b.m.GPUs[g].Name == s {
					cs.Root = r
				}
			}
			if cs.Root < 0 {
				var names []string
				for _, g := range cs.GPUs {
					names = append(names, b.m.GPUs[g].Name)
				}
				rn.Errorf("root %q is not one of the collective's GPUs: %s", s, strings.Join(names, ", "))
				ok = false
				cs.Root = 0
			}
		}
	}
	// Streams: one name used on every GPU, or one stream per GPU.
	sn, hasOne := om.Get("stream")
	ln, hasList := om.Get("streams")
	switch {
	case hasOne && hasList:
		ln.Errorf("give stream (one name used on every GPU) or streams (one per GPU), not both")
		return false
	case hasOne:
		if s, _ := sn.String(); strings.Contains(s, "/") {
			sn.Errorf("stream is a name used on every GPU, such as comm (each GPU's comm stream); for GPU/NAME streams use streams: [...], one per GPU")
			return false
		}
		name, good := sn.Name()
		if !good {
			return false
		}
		for _, g := range cs.GPUs {
			op.Streams = append(op.Streams, b.streamFor(g, name))
		}
	case hasList:
		list, isList := ln.Seq()
		if !isList {
			return false // Seq said what it got
		}
		if len(list) != len(cs.GPUs) {
			ln.Errorf("give one stream per GPU, in the same order as the GPUs: %d GPUs, %d listed", len(cs.GPUs), len(list))
			return false
		}
		for i, x := range list {
			s := b.stream(x)
			if s < 0 {
				return false
			}
			if i < len(cs.GPUs) && b.p.Streams[s].GPU != cs.GPUs[i] {
				x.Errorf("stream %s is not a stream of %s, rank %d's GPU", b.p.StreamName(b.m, s), b.m.GPUs[cs.GPUs[i]].Name, i)
				return false
			}
			op.Streams = append(op.Streams, s)
		}
	default:
		n.Errorf("missing \"stream\": a stream name used on every GPU (such as comm), or streams: one GPU/NAME per GPU")
		return false
	}
	if rn, has := om.Get("rank"); has && len(cs.GPUs) > 0 {
		// This op issues one rank's part; the other ranks' ops (in other
		// threads, as the processes of a communicator call NCCL) share its id.
		if _, hasID := om.Get("id"); !hasID {
			rn.Errorf("a collective issued by rank needs an id, the same in every rank's op")
			return false
		}
		s, good := rn.Name()
		if !good {
			return false
		}
		op.OneRank, op.Rank = true, -1
		for r, g := range cs.GPUs {
			if b.m.GPUs[g].Name == s {
				op.Rank = r
			}
		}
		if op.Rank < 0 {
			rn.Errorf("rank %q is not one of the collective's GPUs", s)
			return false
		}
	}
	if !ok || len(cs.GPUs) == 0 {
		return false
	}
	op.Stream = op.Streams[0]
	cs.MaxTasks = b.opt.PlanTasks
	plan, err := models.BuildCollective(b.m, b.sc.Topology.GPUModels, cs)
	if err != nil {
		b.collError(n, om, cs, err, nil, nil)
		return false
	}
	b.warnMultiNode(n.Pos(), cs.GPUs)
	op.Coll = plan
	return true
}

// collErrs gathers a generator's collective errors, each message once,
// and the collectives its forced algorithm and protocol apply to, to be
// said when it has built them all (sayCollErrs): the choices a message
// offers must run every one of them.
type collErrs struct {
	forced []models.CollSpec
	errs   []collErr
	said   map[string]bool
}

type collErr struct {
	spec models.CollSpec
	err  error
}

// built notes the build of spec and its error (nil where it built).
func (c *collErrs) built(spec models.CollSpec, err error) {
	if spec.Algorithm != "" || spec.Protocol != "" {
		c.forced = append(c.forced, spec)
	}
	if err == nil {
		return
	}
	if c.said == nil {
		c.said = map[string]bool{}
	}
	if !c.said[err.Error()] {
		c.said[err.Error()] = true
		c.errs = append(c.errs, collErr{spec, err})
	}
}

// sayCollErrs says the errors c gathered, written at n (its keys m): one
// for each forced key blamed, and each of the others.
func (b *builder) sayCollErrs(n spec.Node, m *spec.Map, c *collErrs) {
	blamed := map[string]bool{}
	for _, e := range c.errs {
		if key := b.collError(n, m, e.spec, e.err, c.forced, blamed); key != "" {
			blamed[key] = true
		}
	}
}

// collError says err, the error of building collective cs written at n
// (its keys m), and returns the key it blamed. An error that the forced
// algorithm or protocol makes (the collectives they apply to, all, build
// with other choices) is said at that key, with the choices that run all
// of them here, unless blamed has the key already; other errors are said
// at n.
func (b *builder) collError(n spec.Node, m *spec.Map, cs models.CollSpec, err error, all []models.CollSpec, blamed map[string]bool) string {
	if pe := (*models.PlanTooLargeError)(nil); errors.As(err, &pe) {
		if b.planErr == nil {
			b.planErr = &PlanMemoryError{Where: n.Pos(), Err: pe}
		}
		return ""
	}
	if len(all) == 0 {
		all = []models.CollSpec{cs}
	}
	// runs reports whether every collective runs with algorithm a and
	// protocol p.
	runs := func(a, p string) bool {
		for _, c := range all {
			c.Algorithm, c.Protocol = a, p
			if _, err := models.BuildCollective(b.m, b.sc.Topology.GPUModels, c); err != nil {
				return false
			}
		}
		return true
	}
	var algos, protos []string // other choices of one key that run all
	for _, a := range models.Algorithms {
		if a != cs.Algorithm && cs.Algorithm != "" && runs(a, cs.Protocol) {
			algos = append(algos, a)
		}
	}
	for _, p := range models.Protocols {
		if p != cs.Protocol && cs.Protocol != "" && runs(cs.Algorithm, p) {
			protos = append(protos, p)
		}
	}
	these := "these collectives"
	if len(all) == 1 {
		these = "this collective"
	}
	say := func(key, want string) string {
		if !blamed[key] {
			at, _ := m.Get(key)
			at.Errorf("%v; want %s", err, strings.ReplaceAll(want, "these collectives", these))
		}
		return key
	}
	switch {
	case len(algos) > 0 && len(protos) > 0:
		return say("algorithm", fmt.Sprintf("algorithm %s, or protocol %s (those that run these collectives here)", oneOf(algos), oneOf(protos)))
	case len(algos) > 0:
		return say("algorithm", fmt.Sprintf("algorithm %s (those that run these collectives here)", oneOf(algos)))
	case len(protos) > 0:
		return say("protocol", fmt.Sprintf("protocol %s (those that run these collectives here)", oneOf(protos)))
	case cs.Algorithm != "" && cs.Protocol != "":
		// Neither alone: the pairs that run, as algorithms with protocols
		// where every such pair runs.
		var pairs, as, ps []string
		for _, a := range models.Algorithms {
			for _, p := range models.Protocols {
				if a != cs.Algorithm && p != cs.Protocol && runs(a, p) {
					pairs = append(pairs, a+" with "+p)
					if !slices.Contains(as, a) {
						as = append(as, a)
					}
					if !slices.Contains(ps, p) {
						ps = append(ps, p)
					}
				}
			}
		}
		if len(pairs) > 0 && len(pairs) == len(as)*len(ps) {
			return say("algorithm", fmt.Sprintf("another algorithm and protocol both: algorithm %s with protocol %s (those that run these collectives here)", oneOf(as), oneOf(ps)))
		}
		if len(pairs) > 0 {
			return say("algorithm", fmt.Sprintf("another algorithm and protocol both, %s (the pairs that run these collectives here)", oneOf(pairs)))
		}
	}
	n.Errorf("%v", err)
	return ""
}

// oneOf is "x" or "one of x, y, z".
func oneOf(list []string) string {
	if len(list) == 1 {
		return list[0]
	}
	return "one of " + strings.Join(list, ", ")
}

// warnMultiNode adds, once per set of GPUs, the warning that a collective
// over them spans several NVLink domains (several nodes), which gpusim
// plans as within one.
func (b *builder) warnMultiNode(where string, gpus []int) {
	w := models.MultiNodeWarning(b.m, gpus)
	if w == "" {
		return
	}
	key := fmt.Sprint(gpus)
	if b.multiNode[key] {
		return
	}
	if b.multiNode == nil {
		b.multiNode = map[string]bool{}
	}
	b.multiNode[key] = true
	b.p.Warnings = append(b.p.Warnings, where+": "+w)
}

// namedComm is the id of the communicator name names (Op.Comm), named
// now if it was not before.
func (b *builder) namedComm(name string) int16 {
	c, seen := b.comms[name]
	if !seen {
		b.p.Comms = append(b.p.Comms, name)
		c = int16(len(b.p.Comms))
		if b.comms == nil {
			b.comms = map[string]int16{}
		}
		b.comms[name] = c
	}
	return c
}

// collSigRanks returns the GPUs of a rank-issued collective, from the
// program's ops.
func (b *builder) collSigRanks(id string) []int {
	for _, th := range b.p.Threads {
		for i := range th.Ops {
			if op := &th.Ops[i]; op.ID == id && op.Coll != nil {
				return op.Coll.Ranks
			}
		}
	}
	return nil
}

// collSig is what the ops issuing the ranks of one collective must agree
// on: the plan they build (a hash of all of it), the communicator, and the
// dtype where both give one; and, to say what differs, the fields as
// written (collSigFields), and where the op is.
type collSig struct {
	plan  string
	vals  [10]string
	where string
}

var collSigFields = [10]string{"kind", "GPUs", "size", "dtype", "algorithm", "protocol", "channels", "sm_share", "root", "comm"}

// sigDType and sigComm are the indices of the dtype and the communicator
// in collSigFields.
const (
	sigDType = 3
	sigComm  = 9
)

// collSignature is op's collSig; w is what its op wrote.
func (b *builder) collSignature(op *sim.Op, where string, w collWritten) collSig {
	c := op.Coll
	h := fnv.New64a()
	for _, t := range c.Tasks {
		fmt.Fprintf(h, "%d %d %d %g %g %g %d %v %v;", t.From, t.To, t.Switch, t.Bytes, t.Wire, t.Bound, t.Delay, t.Reduce, t.Deps)
	}
	gpus := make([]string, len(c.Ranks))
	for i, g := range c.Ranks {
		gpus[i] = b.m.GPUs[g].Name
	}
	comm := ""
	if op.Comm > 0 {
		comm = b.p.Comms[op.Comm-1]
	}
	return collSig{where: where,
		plan: fmt.Sprintf("%s %v %d %s %s %g %d %x", c.Name, c.Ranks, c.Bytes, c.Algorithm, c.Protocol, c.SMShare, c.StartDelay, h.Sum64()),
		vals: [10]string{c.Name, "[" + strings.Join(gpus, ", ") + "]", strconv.FormatInt(c.Bytes, 10), w.dtype, w.algorithm, w.protocol, w.channels, w.smShare, w.root, comm}}
}

// differences says how y differs from x ("size 2 MiB here, 1 MiB at
// FILE:LINE:COL; ..."), or "" where they agree: on the plan (whatever
// was written for it: an algorithm left to gpusim may be the one another
// op names), the communicator, and the dtype where both give one.
func (x collSig) differences(y collSig) string {
	dtypes := x.vals[sigDType] != y.vals[sigDType] && x.vals[sigDType] != "" && y.vals[sigDType] != ""
	if x.plan == y.plan && x.vals[sigComm] == y.vals[sigComm] && !dtypes {
		return ""
	}
	var out []string
	for i, f := range collSigFields {
		a, b := x.vals[i], y.vals[i]
		switch {
		case a == b, i == sigDType && !dtypes:
			continue
		case f == "size":
			n, _ := strconv.ParseInt(a, 10, 64)
			m, _ := strconv.ParseInt(b, 10, 64)
			if sa, sb := units.Format(float64(n), units.Bytes), units.Format(float64(m), units.Bytes); sa != sb {
				a, b = sa, sb
			} else {
				a, b = a+" bytes", b+" bytes"
			}
		}
		if a == "" {
			a = "none"
		}
		if b == "" {
			b = "none"
		}
		out = append(out, fmt.Sprintf("%s %s here, %s at %s", f, b, a, x.where))
	}
	if len(out) == 0 {
		out = append(out, "their plans differ from the op's at "+x.where)
	}
	return strings.Join(out, "; ")
}

// streamFor returns GPU g's stream NAME, creating it on first use.
func (b *builder) streamFor(g int, name string) int {
	full := b.m.GPUs[g].Name + "/" + name
	if i, ok := b.streams[full]; ok {
		return i
	}
	idx := len(b.p.Streams)
	b.streams[full] = idx
	b.p.Streams = append(b.p.Streams, sim.Stream{GPU: g, Name: name})
	return idx
}

func gpuEnds(a, b sim.Node) string {
	if a.Kind == sim.NodeGPU && b.Kind == sim.NodeGPU {
		return a.Name + " or " + b.Name
	}
	if a.Kind == sim.NodeGPU {
		return a.Name
	}
	return b.Name
}

func dtypeNames() string {
	var out []string
	for _, d := range models.DTypes {
		out = append(out, string(d))
	}
	return strings.Join(out, ", ")
}

func (b *builder) endpoints() string {
	var out []string
	for _, n := range b.m.Nodes {
		if n.Kind != sim.NodeSwitch {
			out = append(out, n.Name)
		}
	}
	return strings.Join(out, ", ")
}

func (b *builder) gpuNames() string {
	var out []string
	for _, g := range b.m.GPUs {
		out = append(out, g.Name)
	}
	return strings.Join(out, ", ")
}

// stream resolves "GPU/NAME", creating the stream on first use.
func (b *builder) stream(n spec.Node) int {
	s, ok := n.String()
	if !ok {
		return -1
	}
	if i, ok := b.streams[s]; ok {
		return i
	}
	gpu, name, found := strings.Cut(s, "/")
	if !found || gpu == "" || name == "" || strings.Contains(name, "/") {
		n.Errorf("%q is not a stream name: streams are GPU/NAME, such as %s/compute", s, b.m.GPUs[0].Name)
		return -1
	}
	if !spec.ValidName(name) {
		n.Errorf("stream %q: %q is not a valid stream name: use ASCII letters and digits, '_', '-', '.', ':' and '#'", s, name)
		return -1
	}
	i := b.m.NodeIndex(gpu)
	if i < 0 || b.m.Nodes[i].Kind != sim.NodeGPU {
		n.Errorf("stream %q: %q is not a GPU of topology %s; GPUs: %s", s, gpu, b.m.Name, b.gpuNames())
		return -1
	}
	idx := len(b.p.Streams)
	b.streams[s] = idx
	b.p.Streams = append(b.p.Streams, sim.Stream{GPU: b.m.Nodes[i].Index, Name: name})
	return idx
}

// ControlChar returns the first control character of s (a tab or a line
// break included), taking as such the line and paragraph separators and the
// bidi controls too, which Unicode calls formats (Cf), not controls.
func ControlChar(s string) (rune, bool) {
	for _, c := range s {
		if unicode.IsControl(c) || c == '\u2028' || c == '\u2029' || unicode.Is(unicode.Bidi_Control, c) {
			return c, true
		}
	}
	return 0, false
}
