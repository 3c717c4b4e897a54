package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"gpusim/internal/spec"
	"gpusim/internal/units"
	"gpusim/models"
	"gpusim/plots"
	"gpusim/scenarios"
	"gpusim/sim"
	"gpusim/topologies"
)

const validateSynopsis = "gpusim validate FILE [--set k=v]... [--max-ops N]"

func cmdValidate(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("validate", validateSynopsis, stderr)
	set := setFlag{}
	fs.Var(set, "set", "override a scenario var: name=value (repeatable)")
	maxOps := fs.Int64("max-ops", scenarios.DefaultMaxOps, "refuse scenarios that expand to more than `N` ops")
	if helpRequested(fs, validateSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if err := checkMaxOps("validate", *maxOps); err != nil {
		return err
	}
	if err := oneArg("validate", validateSynopsis, "FILE", "a scenario or topology file, or a shipped name", pos, set); err != nil {
		return err
	}
	name := pos[0]
	data, err := readInput(name)
	var big *tooLargeError
	if errors.As(err, &big) {
		return err
	}
	kind := ""
	if err == nil {
		kind = fileKind(data)
	} else if !notThere(err, name) {
		return fmt.Errorf("%s: cannot read: %v", name, unwrapPath(err))
	} else if base := strings.TrimSuffix(name, ".yaml"); strings.ContainsAny(name, "/\\") {
		kind = "missing"
	} else if _, ok := scenarios.ShippedSource(base); ok {
		kind = "scenario" // loadScenario serves shipped names
	} else if _, ok := topologies.ShippedSource(base); ok {
		kind = "topology"
	} else {
		kind = "missing"
	}
	switch kind {
	case "missing":
		return fmt.Errorf("%s: no such file, shipped scenario or shipped topology (scenarios: %s; topologies: %s)", name,
			strings.Join(scenarios.Shipped(), ", "), strings.Join(topologies.Shipped(), ", "))
	case "topology":
		if len(set) > 0 {
			return &usageError{fmt.Sprintf("gpusim validate: --set sets a scenario's vars; %s is a topology, which has none", name)}
		}
		t, err := loadTopology(name)
		if err != nil {
			return err
		}
		fmt.Fprintf(stdout, "%s: ok: topology %s (%s, %s, %s, %s)\n", name, t.Name,
			plural(len(t.Machine.Hosts), "1 host", "%d hosts"), plural(len(t.Machine.GPUs), "1 GPU", "%d GPUs"),
			plural(len(t.Machine.Switches), "1 switch", "%d switches"), plural(len(t.Machine.Links), "1 link", "%d links"))
	default:
		sc, src, err := loadSweepBase("validate", name, set, *maxOps, true)
		if err != nil {
			return err
		}
		lint := sim.Lint(sc.Topology.Machine, sc.Program)
		printWarnings(stderr, sc.Warnings, sc.Program.Warnings, lint)
		sweep := ""
		var more []string
		if len(sc.Sweep) > 0 {
			if more, err = validateSweep(src, sc, set, *maxOps, append(slices.Clone(sc.Program.Warnings), lint...)); err != nil {
				return err
			}
			loaded := "each value loaded"
			var held []string
			for _, sv := range sc.Sweep {
				if _, ok := set[sv.Name]; ok {
					held = append(held, sv.Name)
				}
			}
			if len(held) > 0 {
				names := strings.Join(held, ", ")
				if n := len(held); n > 1 {
					names = strings.Join(held[:n-1], ", ") + " and " + held[n-1]
				}
				loaded = "each value of the others loaded with " + names + " held by --set"
			}
			sweep = fmt.Sprintf("; a sweep of %s, %s", plural(scenarios.CountPoints(sc.Sweep, maxPoints), "1 point", "%d points"), loaded)
		}
		printWarnings(stderr, more)
		fmt.Fprintf(stdout, "%s: ok: scenario %s on %s (%s, %s, %s%s)\n", name, sc.Name, sc.Topology.Name,
			plural(len(sc.Program.Threads), "1 thread", "%d threads"), plural(sc.Program.NumOps(), "1 op", "%d ops"),
			plural(len(sc.Program.Streams), "1 stream", "%d streams"), sweep)
	}
	return nil
}

func unwrapPath(err error) error {
	if pe, ok := err.(*os.PathError); ok {
		return pe.Err
	}
	return err
}

// fileKind guesses whether data is a topology or a scenario from its keys:
// a scenario unless it has a topology's keys and none of a scenario's.
func fileKind(data []byte) string {
	if spec.KindOf(data) == "topology" {
		return "topology"
	}
	return "scenario"
}

const (
	topoShowSynopsis = "gpusim topo show TOPOLOGY"
	topoListSynopsis = "gpusim topo list"
	topoPlotSynopsis = "gpusim topo plot TOPOLOGY -o FILE"
	topoDotSynopsis  = "gpusim topo dot TOPOLOGY [-o FILE]"
	topoSynopsis     = topoShowSynopsis + " | " + topoListSynopsis + " | " + topoPlotSynopsis + " | " + topoDotSynopsis + " | " + importSynopsis + " | " + discoverSynopsis
)

func cmdTopo(args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return &usageError{"usage: " + topoSynopsis}
	}
	if args[0] == "-h" || args[0] == "--help" {
		fmt.Fprintln(stdout, "usage: "+topoSynopsis+"\n\nTOPOLOGY is a topology file or the name of a shipped one ("+strings.Join(topologies.Shipped(), ", ")+").")
		return nil
	}
	switch args[0] {
	case "list", "show":
		// These take no flags; --help asks what they do (not after --,
		// where -h is a file's name).
		for _, a := range args[1:] {
			if a == "--" {
				break
			}
			if a == "-h" || a == "--help" || a == "-help" {
				what := map[string]string{
					"list": topoListSynopsis + "\n\nLists the shipped topologies: name, GPU count, description.",
					"show": topoShowSynopsis + "\n\nPrints the resolved machine (hosts, GPUs, switches, links) and the route and path kind of every GPU pair.\nTOPOLOGY is a topology file or the name of a shipped one (" + strings.Join(topologies.Shipped(), ", ") + ").",
				}
				fmt.Fprintln(stdout, "usage: "+what[args[0]])
				return nil
			}
		}
	}
	switch args[0] {
	case "list":
		if len(args) != 1 {
			return &usageError{fmt.Sprintf("gpusim topo list: unexpected argument %q: it takes no arguments (usage: %s)", args[1], topoListSynopsis)}
		}
		for _, n := range topologies.Shipped() {
			t, err := topologies.LoadShipped(n)
			if err != nil {
				return err
			}
			fmt.Fprintf(stdout, "%-16s %-8s %s\n", n, plural(len(t.Machine.GPUs), "1 GPU", "%d GPUs"), firstLine(t.Description))
		}
		return nil
	case "show":
		if len(args) > 1 && args[1] == "--" {
			// What follows is a name, even one that starts with -.
			args = append([]string{args[0]}, args[2:]...)
		} else {
			for _, a := range args[1:] {
				if a == "--" {
					return &usageError{fmt.Sprintf("gpusim topo show: -- comes before the TOPOLOGY it marks as a name (usage: %s)", topoShowSynopsis)}
				}
				if len(a) > 1 && strings.HasPrefix(a, "-") {
					return &usageError{fmt.Sprintf("gpusim topo show: unknown flag %s: it takes no flags; a file named so is ./%s or follows -- (usage: %s)", a, a, topoShowSynopsis)}
				}
			}
		}
		switch {
		case len(args) == 1:
			return &usageError{"gpusim topo show: name a TOPOLOGY, a file or a shipped name (usage: " + topoShowSynopsis + ")"}
		case len(args) > 2:
			return &usageError{fmt.Sprintf("gpusim topo show: unexpected argument %q: it takes one TOPOLOGY (usage: %s)", args[2], topoShowSynopsis)}
		}
		t, err := loadTopology(args[1])
		if err != nil {
			return err
		}
		out := bufio.NewWriter(stdout)
		showTopology(out, t)
		_ = out.Flush() // runChecked's writer catches a write that failed
		return nil
	case "plot", "dot":
		return cmdTopoDraw(args[0], args[1:], stdout, stderr)
	case "import":
		return cmdTopoImport(args[1:], stdout, stderr)
	case "discover":
		return cmdTopoDiscover(args[1:], stdout, stderr)
	}
	return &usageError{fmt.Sprintf("gpusim topo: unknown subcommand %q; usage: %s", args[0], topoSynopsis)}
}

// checkNameFlag refuses a --name that could not name a topology.
func checkNameFlag(cmd, name string) error {
	if name != "" && !spec.ValidName(name) {
		return &usageError{fmt.Sprintf("gpusim %s: --name %q is not a valid name: use ASCII letters and digits, '_', '-', '.', ':' and '#'", cmd, name)}
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// loadTopology reads a topology file, or a shipped topology by name.
func loadTopology(name string) (*topologies.Topology, error) {
	data, err := readInput(name)
	if err == nil {
		return topologies.Load(name, data)
	}
	if !notThere(err, name) {
		var big *tooLargeError
		if errors.As(err, &big) {
			return nil, err
		}
		return nil, fmt.Errorf("%s: cannot read: %v", name, unwrapPath(err))
	}
	base := strings.TrimSuffix(filepath.Base(name), ".yaml")
	if _, ok := topologies.ShippedSource(base); ok && !strings.ContainsAny(name, "/\\") {
		return topologies.LoadShipped(base)
	}
	if _, ok := scenarios.ShippedSource(base); ok && !strings.ContainsAny(name, "/\\") {
		return nil, fmt.Errorf("%s: a shipped scenario, not a topology: gpusim run %s runs it", name, name)
	}
	if s := spec.Suggest(name, topologies.Shipped()); s != "" {
		return nil, fmt.Errorf("%s: no such file or shipped topology (did you mean %s? shipped: %s)", name, s, strings.Join(topologies.Shipped(), ", "))
	}
	return nil, fmt.Errorf("%s: no such file or shipped topology (shipped: %s)", name, strings.Join(topologies.Shipped(), ", "))
}

func showTopology(w io.Writer, t *topologies.Topology) {
	m := t.Machine
	from := t.File
	if _, err := os.Stat(t.File); err != nil {
		if _, ok := topologies.ShippedSource(t.Name); ok && t.File == "topologies/"+t.Name+".yaml" {
			from = "shipped with gpusim" // no such file here: the embedded copy
		}
	}
	fmt.Fprintf(w, "topology %s (%s)\n", t.Name, from)
	if d := firstLine(t.Description); d != "" {
		fmt.Fprintln(w, d)
	}
	fmt.Fprintln(w, "\nhosts:")
	for i, h := range m.Hosts {
		cores := "unlimited"
		if h.Cores > 0 {
			cores = fmt.Sprint(h.Cores)
		}
		api := h.APIOverhead.String()
		if i < len(t.TimingOverhead) && t.TimingOverhead[i] > 0 {
			api += fmt.Sprintf(" (and timing_overhead %s in replays)", t.TimingOverhead[i])
		}
		fmt.Fprintf(w, "  %-8s cores %s, api_overhead %s, sync_latency %s, graph_launch %s, memcpy %s, memory %s, p2p %s\n", h.Name, cores, api,
			h.SyncLatency, h.GraphLaunch, units.Format(h.MemcpyBandwidth, units.Bandwidth), units.Format(h.MemoryBandwidth, units.Bandwidth), yesNo(m.Nodes[h.Node].P2P))
		// What pageable and staged copies run at: a second line, so that
		// the keys given are seen to take effect.
		pageable := func(v float64) string {
			if v <= 0 {
				v = h.MemcpyBandwidth // unset: the memcpy rate
			}
			return units.Format(v, units.Bandwidth)
		}
		fmt.Fprintf(w, "           pageable h2d %s, d2h %s; staging %d x %s buffers, handoff %s, setup %s\n", pageable(h.PageableH2D), pageable(h.PageableD2H),
			h.StagingBuffers, units.Format(float64(h.StagingChunk), units.Bytes), h.StagingHandoff, h.StagingSetup)
	}
	fmt.Fprintln(w, "\ngpus:")
	for i, g := range m.GPUs {
		gm := t.GPUModels[i]
		var peaks []string
		for _, d := range models.DTypes {
			if v, ok := gm.Peak[d]; ok {
				peaks = append(peaks, string(d)+" "+units.Format(v, units.FLOPRate))
			}
		}
		fmt.Fprintf(w, "  %-8s %s on %s: %d copy engines (overhead %s), memory %s x %.2f, kernels x %.2f + %s\n", g.Name, gm.Name, m.Hosts[g.Host].Name,
			g.CopyEngines, g.CopyOverhead, units.Format(gm.MemoryBandwidth, units.Bandwidth), gm.MemoryEfficiency, gm.ComputeEfficiency, gm.KernelOverhead)
		fmt.Fprintf(w, "           peaks: %s\n", strings.Join(peaks, ", "))
	}
	if len(m.Switches) > 0 {
		fmt.Fprintln(w, "\nswitches:")
		for _, s := range m.Switches {
			nvls := ""
			if s.NVLS {
				nvls = ", nvls (reduces in the switch: NCCL's NVLS all-reduce)"
			}
			fmt.Fprintf(w, "  %-8s %s, p2p %s%s\n", s.Name, s.Kind, yesNo(m.Nodes[s.Node].P2P), nvls)
		}
	}
	fmt.Fprintln(w, "\nlinks (bandwidth per direction):")
	for i, l := range m.Links {
		typ := t.LinkTypes[i]
		if typ == "" {
			typ = l.Kind.String()
		}
		if t.LinkCounts[i] > 1 {
			typ = fmt.Sprintf("%d x %s", t.LinkCounts[i], typ)
		}
		bw := units.Format(l.Bandwidth, units.Bandwidth)
		if l.SMBandwidth > 0 && l.SMBandwidth != l.Bandwidth {
			bw += " (kernels " + units.Format(l.SMBandwidth, units.Bandwidth) + ")"
		}
		if l.Duplex > 0 {
			bw += ", " + units.Format(l.Duplex, units.Bandwidth) + " both ways"
		}
		fmt.Fprintf(w, "  %-22s %s <-> %s, %s, %s, latency %s, p2p %s\n", l.Name, m.Nodes[l.A].Name, m.Nodes[l.B].Name, typ,
			bw, l.Latency, yesNo(l.P2P))
	}
	fmt.Fprintln(w, "\nhost to GPU routes:")
	paths := m.NewPaths()
	for _, g := range m.GPUs {
		h := m.Hosts[g.Host]
		r, _ := paths.Route(h.Node, g.Node)
		fmt.Fprintf(w, "  %s -> %s: %s (bottleneck %s)\n", h.Name, g.Name, m.FormatRoute(h.Node, r), units.Format(bottleneck(m, r), units.Bandwidth))
	}
	if len(m.GPUs) > maxPairList {
		showPairGroups(w, m, paths)
	} else if len(m.GPUs) > 1 {
		fmt.Fprintln(w, "\nGPU pairs:")
		for a := range m.GPUs {
			for b := range m.GPUs {
				if a == b {
					continue
				}
				fmt.Fprintf(w, "  %s -> %s: %s\n", m.GPUs[a].Name, m.GPUs[b].Name, pairPath(m, paths.PathBetween(a, b), a, b))
			}
		}
		fmt.Fprintln(w, "\npath kinds:")
		var names []string
		for _, g := range m.GPUs {
			names = append(names, g.Name)
		}
		width := 6
		for _, n := range names {
			width = max(width, len(n)+1)
		}
		fmt.Fprintf(w, "  %*s", width, "")
		for _, n := range names {
			fmt.Fprintf(w, "%*s", width, n)
		}
		fmt.Fprintln(w)
		none := false
		for a := range m.GPUs {
			fmt.Fprintf(w, "  %*s", width, names[a])
			for b := range m.GPUs {
				s := "X"
				if a != b {
					k := paths.PathBetween(a, b).Kind
					s, none = pathShort[k], none || k == sim.PathNone
				}
				fmt.Fprintf(w, "%*s", width, s)
			}
			fmt.Fprintln(w)
		}
		fmt.Fprintln(w, "  "+pathLegend(none))
	}
}

// maxPairList is the most GPUs whose pairs topo show lists one by one, with
// a matrix of path kinds; beyond it (a rack of 72 GPUs has 5,112 pairs) it
// groups the pairs whose paths look alike.
const maxPairList = 16

var pathShort = map[sim.PathKind]string{sim.PathNVLink: "NV", sim.PathP2P: "P2P", sim.PathStaged: "HOST", sim.PathNone: "-"}

// pairPath describes p, the path from GPU a to GPU b: its kind, route(s)
// and bottleneck.
func pairPath(m *sim.Machine, p sim.GPUPath, a, b int) string {
	switch p.Kind {
	case sim.PathStaged:
		return fmt.Sprintf("%s through %s: %s, then %s", p.Kind, m.Hosts[p.Host].Name,
			m.FormatRoute(m.GPUs[a].Node, p.ToHost), m.FormatRoute(m.Hosts[p.Host].Node, p.FromHost))
	case sim.PathNone:
		return "unreachable"
	}
	return fmt.Sprintf("%s: %s (bottleneck %s)", p.Kind, m.FormatRoute(m.GPUs[a].Node, p.Route), units.Format(bottleneck(m, p.Route), units.Bandwidth))
}

// showPairGroups prints the GPU pairs grouped by the shape of their path:
// its description with the two GPUs' names taken out, in the order the
// shapes first appear, each with its count and first pair.
func showPairGroups(w io.Writer, m *sim.Machine, paths *sim.Paths) {
	type group struct {
		n    int
		a, b int
		desc string
	}
	var order []string
	groups := map[string]*group{}
	kinds := map[sim.PathKind]int{}
	for a := range m.GPUs {
		for b := range m.GPUs {
			if a == b {
				continue
			}
			p := paths.PathBetween(a, b)
			desc := pairPath(m, p, a, b)
			shape := replaceName(replaceName(desc, m.GPUs[a].Name, "<from>"), m.GPUs[b].Name, "<to>")
			g, ok := groups[shape]
			if !ok {
				g = &group{a: a, b: b, desc: desc}
				groups[shape] = g
				order = append(order, shape)
			}
			g.n++
			kinds[p.Kind]++
		}
	}
	n := len(m.GPUs) * (len(m.GPUs) - 1)
	fmt.Fprintf(w, "\nGPU pairs (%d, grouped by the shape of their path; more than %d GPUs):\n", n, maxPairList)
	for _, shape := range order {
		g := groups[shape]
		fmt.Fprintf(w, "  %s like %s -> %s: %s\n", plural(g.n, "1 pair", "%d pairs"), m.GPUs[g.a].Name, m.GPUs[g.b].Name, g.desc)
	}
	fmt.Fprint(w, "\npath kinds:")
	for _, k := range []sim.PathKind{sim.PathNVLink, sim.PathP2P, sim.PathStaged, sim.PathNone} {
		if kinds[k] > 0 {
			fmt.Fprintf(w, " %s %d", pathShort[k], kinds[k])
		}
	}
	fmt.Fprintln(w, " "+pathLegend(kinds[sim.PathNone] > 0))
}

// pathLegend explains the path kinds' short names; none says a pair has no
// path (-).
func pathLegend(none bool) string {
	if none {
		return "(NV: NVLink P2P, P2P: PCIe P2P, HOST: staged through host memory, -: no path)"
	}
	return "(NV: NVLink P2P, P2P: PCIe P2P, HOST: staged through host memory)"
}

// replaceName replaces the node name old by new where it stands as a whole
// word of a route ("gpu1" but not the "gpu1" of "gpu10").
func replaceName(s, old, new string) string {
	var b strings.Builder
	for {
		i := strings.Index(s, old)
		if i < 0 {
			b.WriteString(s)
			return b.String()
		}
		end := i + len(old)
		whole := (i == 0 || !isNameByte(s[i-1])) && (end == len(s) || !isNameByte(s[end]))
		b.WriteString(s[:i])
		if whole {
			b.WriteString(new)
		} else {
			b.WriteString(old)
		}
		s = s[end:]
	}
}

// isNameByte reports whether c may be part of a node name (spec.ValidName).
func isNameByte(c byte) bool { return spec.ValidName(string(c)) }

func bottleneck(m *sim.Machine, r sim.Route) float64 {
	b := 0.0
	for i, h := range r.Hops {
		bw := m.Links[h.Link].Bandwidth
		if i == 0 || bw < b {
			b = bw
		}
	}
	return b
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// maxHeatmapGPUs bounds topo plot: beyond it the cells are too small to
// read (and the n^2 copies it simulates take a while).
const maxHeatmapGPUs = 64

// cmdTopoDraw is "topo plot" (a heatmap of predicted peer bandwidth) and
// "topo dot" (Graphviz DOT of the machine graph).
func cmdTopoDraw(sub string, args []string, stdout, stderr io.Writer) error {
	synopsis := topoPlotSynopsis
	if sub == "dot" {
		synopsis = topoDotSynopsis
	}
	fs := newFlagSet("topo "+sub, synopsis, stderr)
	out := fs.String("o", "", "write to `FILE` (plot: .png, .svg or .pdf; dot: default standard output)")
	if helpRequested(fs, synopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(pos) == 0:
		return &usageError{fmt.Sprintf("gpusim topo %s: name a TOPOLOGY, a file or a shipped name (usage: %s)", sub, synopsis)}
	case len(pos) > 1:
		return &usageError{fmt.Sprintf("gpusim topo %s: unexpected argument %q: it takes one TOPOLOGY (usage: %s)", sub, pos[1], synopsis)}
	case sub == "plot" && *out == "":
		return &usageError{fmt.Sprintf("gpusim topo plot: -o FILE is required: the picture's file, .png, .svg or .pdf (usage: %s)", synopsis)}
	}
	if err := notAnInput("topo "+sub, "o", *out, pos[0]); err != nil {
		return err
	}
	if sub == "plot" {
		if _, err := plots.FormatOf(*out); err != nil {
			return &usageError{"gpusim topo plot: -o " + err.Error()}
		}
	}
	t, err := loadTopology(pos[0])
	if err != nil {
		return err
	}
	if sub == "dot" {
		if *out == "" {
			if err := plots.WriteDOT(stdout, t.Machine); err != nil {
				return &failError{err}
			}
			return nil
		}
		return writeFileAtomic(*out, func(w io.Writer) error { return plots.WriteDOT(w, t.Machine) })
	}
	if len(t.Machine.GPUs) < 2 {
		return fmt.Errorf("%s: one GPU: there is no peer bandwidth to plot", t.Name)
	}
	if n := len(t.Machine.GPUs); n > maxHeatmapGPUs {
		return fmt.Errorf("%s: %d GPUs: a heatmap of every pair is readable up to %d; use gpusim topo show for the paths", t.Name, n, maxHeatmapGPUs)
	}
	p, err := plots.TopoHeatmap(t.Machine, "")
	if err != nil {
		return fmt.Errorf("gpusim topo plot: %v", err)
	}
	n := float64(len(t.Machine.GPUs))
	side := plots.Pixels(math.Max(640, 160+90*n))
	return writePlot(*out, p, side+plots.Pixels(60), side)
}

const importSynopsis = "gpusim topo import FILE [--gpu MODEL] [--pcie TYPE] [--name NAME] [--no-p2p] [-o FILE]"

// cmdTopoImport turns the text of `nvidia-smi topo -m` into a topology.
func cmdTopoImport(args []string, stdout, stderr io.Writer) error {
	fs := newFlagSet("topo import", importSynopsis, stderr)
	gpu := fs.String("gpu", "", "the GPU model (nvidia-smi topo -m names none; default: inferred from the NVLink counts): "+strings.Join(models.GPUNames(), ", "))
	pcie := fs.String("pcie", "", "the GPUs' PCIe link type, such as pcie4x16 (default: the GPU model's)")
	name := fs.String("name", "", "the topology's name (default: the file's name)")
	out := fs.String("o", "", "write the topology YAML to `FILE` (default: standard output)")
	noP2P := fs.Bool("no-p2p", false, "no GPU pair copies peer to peer over PCIe (consumer GPUs): hosts and PCIe switches get p2p: false")
	if helpRequested(fs, importSynopsis, args, stdout) {
		return nil
	}
	pos, err := parseFlags(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return &usageError{"usage: " + importSynopsis + " (FILE is what nvidia-smi topo -m prints; - reads standard input)"}
	}
	if err := notAnInput("topo import", "o", *out, pos[0]); err != nil {
		return err
	}
	if err := checkNameFlag("topo import", *name); err != nil {
		return err
	}
	if _, ok := models.LookupGPU(*gpu); *gpu != "" && !ok {
		return &usageError{fmt.Sprintf("gpusim topo import: --gpu %q: unknown GPU model; models: %s", *gpu, strings.Join(models.GPUNames(), ", "))}
	}
	if *pcie != "" {
		var types []string
		for _, t := range models.LinkNames() {
			if lt, _ := models.LookupLink(t); lt.Kind == sim.LinkPCIe {
				types = append(types, t)
			}
		}
		if lt, ok := models.LookupLink(*pcie); !ok || lt.Kind != sim.LinkPCIe {
			return &usageError{fmt.Sprintf("gpusim topo import: --pcie %q: not a PCIe link type; types: %s", *pcie, strings.Join(types, ", "))}
		}
	}
	var data []byte
	file := pos[0]
	if file == "-" {
		data, err = io.ReadAll(io.LimitReader(os.Stdin, maxInput+1))
		file = "stdin"
		if err == nil && len(data) > maxInput {
			err = &tooLargeError{file, int64(len(data))}
		}
	} else {
		data, err = readInput(file)
	}
	if err != nil {
		var big *tooLargeError
		if errors.As(err, &big) {
			return err
		}
		return fmt.Errorf("%s: cannot read: %v", file, unwrapPath(err))
	}
	n := *name
	if n == "" {
		// The file's name, with what a name cannot hold as '-'.
		n = strings.Map(func(r rune) rune {
			if spec.ValidName(string(r)) {
				return r
			}
			return '-'
		}, strings.TrimSuffix(filepath.Base(file), filepath.Ext(file)))
		if strings.Trim(n, "-") == "" {
			n = "" // a name of no letter it could hold ("топология.txt"): "imported"
		}
	}
	text, _, err := topologies.FromNvidiaSMI(file, data, topologies.SMIOptions{GPU: *gpu, PCIe: *pcie, Name: n, NoP2P: *noP2P})
	if err != nil {
		return err
	}
	if *out == "" {
		_, err := io.WriteString(stdout, text)
		if err != nil {
			return &failError{err}
		}
		return nil
	}
	return writeFileAtomic(*out, func(w io.Writer) error {
		_, err := io.WriteString(w, text)
		return err
	})
}

// plural is one when n is 1, and many with n in place of its %d otherwise.
func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return fmt.Sprintf(many, n)
}

// validateSweep loads the sweep's points that take each value of each var
// (the others at their first value): a value that no point could run with
// (d: abc, a topology that does not exist) is found without running the
// sweep's every point, each problem on a line of its own naming the value.
// It returns the warnings of those points (the loader's and Lint's) that
// the first point, which gave base, does not give: each once, naming the
// first point that gives it.
func validateSweep(src *scenarioSource, sc *scenarios.Scenario, set setFlag, maxOps int64, base []string) ([]string, error) {
	if err := sweepTooLarge(sc); err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	for _, w := range base {
		seen[w] = true
	}
	var warns []string
	first := make(scenarios.Point, len(sc.Sweep))
	for k, sv := range sc.Sweep {
		first[k] = sv.Values[0]
	}
	// A var --set pins (to check one point of a sweep) keeps its value.
	pinned := func(k int) bool {
		_, ok := set[sc.Sweep[k].Name]
		return ok
	}
	var problems []string
	expand, plans := expandOps(), planTasksFor(memoryOps())
	for k, sv := range sc.Sweep {
		for j, v := range sv.Values {
			if j == 0 && k > 0 || j > 0 && pinned(k) {
				continue // the point of every first value: loaded once
			}
			p := append(scenarios.Point(nil), first...)
			p[k] = v
			point := p.Set(sc.Sweep)
			for i := range sc.Sweep {
				if pinned(i) {
					delete(point, sc.Sweep[i].Name)
				}
			}
			psc, err := src.load(scenarios.Options{Set: set, Point: point, MaxOps: maxOps, MemoryOps: expand, PlanTasks: plans})
			if err != nil {
				if me := (*scenarios.MemoryError)(nil); errors.As(err, &me) {
					return nil, asLoadFailure(err, fmt.Sprintf(" (the sweep's point with %s)", pointDesc(sc.Sweep, p, set)))
				}
				for _, line := range strings.Split(err.Error(), "\n") {
					problems = append(problems, fmt.Sprintf("%s (the sweep's point with %s)", line, pointDesc(sc.Sweep, p, set)))
				}
				continue
			}
			for _, w := range append(psc.Program.Warnings, sim.Lint(psc.Topology.Machine, psc.Program)...) {
				if !seen[w] {
					seen[w] = true
					warns = append(warns, fmt.Sprintf("%s (the sweep's point with %s)", w, pointDesc(sc.Sweep, p, set)))
				}
			}
		}
	}
	if len(problems) > 0 {
		return nil, errors.New(strings.Join(problems, "\n"))
	}
	return warns, nil
}

// pointDesc is "a=1, b=x" for point p, a var held by --set written with
// its value and "(--set)".
func pointDesc(sweep []scenarios.SweepVar, p scenarios.Point, set setFlag) string {
	var parts []string
	for k, sv := range sweep {
		if v, ok := set[sv.Name]; ok {
			parts = append(parts, sv.Name+"="+v+" (--set)")
			continue
		}
		parts = append(parts, sv.Name+"="+p[k])
	}
	return strings.Join(parts, ", ")
}
