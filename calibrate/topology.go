package calibrate

import (
	"bytes"
	"fmt"
	"math"
	"strings"

	"go.yaml.in/yaml/v3"

	"gpusim/sim"
	"gpusim/topologies"
)

// CheckBase says, before any measuring, whether base (file's text) can take
// a calibration of a machine with devices GPUs: Apply would refuse it.
func CheckBase(file string, base []byte, devices int) error {
	_, _, err := checkBase(file, base, devices)
	return err
}

func checkBase(file string, base []byte, devices int) (*topologies.Topology, *yaml.Node, error) {
	t, err := topologies.Load(file, base)
	if err != nil {
		return nil, nil, err
	}
	if n := len(t.Machine.GPUs); n > devices {
		return nil, nil, fmt.Errorf("%s has %d GPUs but this machine has %d: use a topology of this machine (gpusim topo discover writes one)", file, n, devices)
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(base, &doc); err != nil {
		return nil, nil, fmt.Errorf("%s: %v", file, err)
	}
	if doc.Kind != yaml.DocumentNode || len(doc.Content) == 0 || doc.Content[0].Kind != yaml.MappingNode {
		return nil, nil, fmt.Errorf("%s: not a topology mapping", file)
	}
	return t, &doc, nil
}

// Apply writes r's fitted numbers into a topology (its YAML text base; file
// names it in messages) and returns the calibrated YAML, with the
// provenance and every measurement in comments. Machine GPU i is device i.
//
// What goes where (the model's parameters, docs/model.md):
//   - each host: api_overhead and timing_overhead = the mean host time of a
//     kernel op in a loop of empty kernels run through the hw backend (a
//     launch, its timing event and the backend's bookkeeping), split by
//     HostSplit into the launch and the backend's timing; memcpy_bandwidth
//     = one thread's memcpy; pageable_h2d_bandwidth and
//     pageable_d2h_bandwidth = the pageable copies' fitted bandwidths each
//     way (the driver's staging is what limits them, and it is not
//     symmetric); sync_latency = SyncLatency;
//   - each GPU: copy_overhead = the device-local copy latency (a copy
//     engine's fixed cost, no link in the way); kernel_overhead = an empty
//     kernel's GPU time; memory_efficiency = twice the device-local copy
//     rate (it reads and writes each byte) over the model's peak;
//     copy_engines = what the driver reports;
//   - the first link of each GPU's route to its host: bandwidth = the mean of
//     the fitted H2D and D2H bandwidths, latency = the mean fitted latency
//     less copy_overhead and the route's other link latencies,
//     duplex_bandwidth = the rate of H2D and D2H at once where it is under
//     DuplexShort of twice that bandwidth, else twice it where the base or
//     its link preset has a limit; links further up that would be slower
//     are raised to the same bandwidth.
//
// P2P fits, aggregates, kernel throughputs and host memcpy are recorded in
// comments only: the model has no parameter that they set on their own.
func (r *Result) Apply(file string, base []byte) ([]byte, error) {
	t, doc, err := checkBase(file, base, len(r.Devices))
	if err != nil {
		return nil, err
	}
	m, root := t.Machine, doc.Content[0]
	var notes []string
	if n := get(root, "name"); n != nil {
		n.Value = strings.TrimSuffix(n.Value, "-calibrated") + "-calibrated"
	}
	// Hosts.
	type dirs struct{ h2d, d2h []float64 }
	pageable := map[int]*dirs{}
	for g := range m.GPUs {
		h := m.GPUs[g].Host
		if pageable[h] == nil {
			pageable[h] = &dirs{}
		}
		if g < len(r.H2DPageable) && r.H2DPageable[g].Bandwidth > 0 {
			pageable[h].h2d = append(pageable[h].h2d, r.H2DPageable[g].Bandwidth)
		}
		if g < len(r.D2HPageable) && r.D2HPageable[g].Bandwidth > 0 {
			pageable[h].d2h = append(pageable[h].d2h, r.D2HPageable[g].Bandwidth)
		}
	}
	api, timing := r.HostSplit()
	for i, hn := range seq(root, "hosts") {
		switch {
		case timing > 0:
			set(hn, "api_overhead", timeStr(api))
			set(hn, "timing_overhead", timeStr(timing))
		case api > 0: // all of it api_overhead: a base's timing_overhead would count twice
			set(hn, "api_overhead", timeStr(api))
			del(hn, "timing_overhead")
		}
		if l, ok := r.SyncLatency(); ok {
			set(hn, "sync_latency", timeStr(l))
		}
		if r.HostMemcpy > 0 {
			set(hn, "memcpy_bandwidth", bwStr(r.HostMemcpy))
		}
		if d := pageable[i]; d != nil && len(d.h2d) > 0 {
			set(hn, "pageable_h2d_bandwidth", bwStr(mean(d.h2d)))
		}
		if d := pageable[i]; d != nil && len(d.d2h) > 0 {
			set(hn, "pageable_d2h_bandwidth", bwStr(mean(d.d2h)))
		}
	}
	// GPUs.
	copyOverhead := make([]float64, len(m.GPUs))
	for g, gn := range seq(root, "gpus") {
		if g >= len(m.GPUs) {
			break
		}
		if g < len(r.D2D) && r.D2D[g].Bandwidth > 0 {
			copyOverhead[g] = max(0, r.D2D[g].Latency)
			set(gn, "copy_overhead", timeStr(copyOverhead[g]))
			peak := t.GPUModels[g].MemoryBandwidth
			eff, err := Efficiency(2*r.D2D[g].Bandwidth, peak)
			if err != nil {
				notes = append(notes, fmt.Sprintf("%s: memory_efficiency not set: device-local copies moved %s, and the peak is %s: %v", m.GPUs[g].Name, bwStr(2*r.D2D[g].Bandwidth), bwStr(peak), err))
			} else {
				set(gn, "memory_efficiency", fmt.Sprintf("%.3f", eff))
			}
		}
		if g < len(r.KernelOverhead) && r.KernelOverhead[g] > 0 {
			set(gn, "kernel_overhead", timeStr(r.KernelOverhead[g]))
		}
		if g < len(r.Devices) && r.Devices[g].CopyEngines > 0 {
			set(gn, "copy_engines", fmt.Sprint(r.Devices[g].CopyEngines))
		}
	}
	// Links on each GPU's route to its host. The loader makes link i of the
	// file link i of the machine.
	links := seq(root, "links")
	if len(links) != len(m.Links) {
		return nil, fmt.Errorf("%s: %d links in the file, %d in the machine: cannot tell which to calibrate", file, len(links), len(m.Links))
	}
	raised := map[int]float64{}     // upstream links raised so far: the most any GPU needs
	raisedBoth := map[int]float64{} // upstream joint limits raised so far: the most any GPU's route carried
	for g := range m.GPUs {
		if g >= len(r.H2D) || g >= len(r.D2H) || r.H2D[g].Bandwidth <= 0 || r.D2H[g].Bandwidth <= 0 {
			continue
		}
		gpuNode, hostNode := m.GPUs[g].Node, m.Hosts[m.GPUs[g].Host].Node
		rt, ok := m.Route(gpuNode, hostNode)
		if !ok || len(rt.Hops) == 0 {
			notes = append(notes, fmt.Sprintf("%s: no route to its host; H2D/D2H fits not applied", m.GPUs[g].Name))
			continue
		}
		bw := (r.H2D[g].Bandwidth + r.D2H[g].Bandwidth) / 2
		lat := (r.H2D[g].Latency+r.D2H[g].Latency)/2 - copyOverhead[g]
		// Both ways at once: a joint limit where they fall clearly short
		// of twice one way (measurements repeat within 1-2%), never below
		// one way; routeBoth is what the route carried both ways (0 where
		// not measured), which no link further up may hold it below.
		both, routeBoth := 0.0, 0.0
		if g < len(r.Bidirectional) {
			both = r.Bidirectional[g]
		}
		switch {
		case both <= 0:
		case both < DuplexShort*2*bw:
			routeBoth = max(both, bw)
		default:
			routeBoth = 2 * bw
		}
		for k, h := range rt.Hops {
			l := m.Links[h.Link]
			ln := links[h.Link]
			count := 1.0
			if c := get(ln, "count"); c != nil {
				if _, err := fmt.Sscan(c.Value, &count); err != nil || count < 1 {
					count = 1
				}
			}
			if k == 0 {
				set(ln, "bandwidth", bwStr(bw/count))
				switch {
				case both <= 0:
					// Not measured (the budget): a base's limit stays, in
					// proportion to the new bandwidth.
					scaleDuplex(ln, l, bw, count)
				case both < DuplexShort*2*bw:
					set(ln, "duplex_bandwidth", bwStr(max(both, bw)/count))
				case l.Duplex > 0:
					// A limit this machine does not have (the base's own, or
					// its link preset's): twice one way, which is none.
					set(ln, "duplex_bandwidth", bwStr(2*bw/count))
				default:
					del(ln, "duplex_bandwidth")
				}
				continue
			}
			lat -= l.Latency.Seconds()
			up := l.Bandwidth
			if need := math.Max(bw, raised[h.Link]); l.Bandwidth < need {
				raised[h.Link] = need
				set(ln, "bandwidth", bwStr(need/count))
				scaleDuplex(ln, l, need, count)
				up = need
			}
			// Its joint limit (its own or its preset's, in proportion to
			// its bandwidth) may not hold both ways below what the route
			// carried.
			// Another GPU's route may have set it: a GPU not measured
			// both ways (the budget) keeps it.
			if want := max(routeBoth, raisedBoth[h.Link]); l.Duplex > 0 && l.Bandwidth > 0 && want > 0 {
				if l.Duplex/l.Bandwidth*up < want*(1-1e-9) {
					raisedBoth[h.Link] = want
					set(ln, "duplex_bandwidth", bwStr(min(want, 2*up)/count))
				}
			}
		}
		set(links[rt.Hops[0].Link], "latency", timeStr(math.Max(0, lat)))
	}
	for li := range m.Links { // in link order: the same bytes every time
		if bw, ok := raised[li]; ok {
			notes = append(notes, fmt.Sprintf("link %s raised to %s so it does not limit the copies of the GPUs behind it", m.Links[li].Name, bwStr(bw)))
		}
	}
	peaks := make([]float64, len(m.GPUs)) // datasheet memory bandwidths
	for g := range peaks {
		if g < len(t.GPUModels) {
			peaks[g] = float64(t.GPUModels[g].MemoryBandwidth)
		}
	}
	root.HeadComment = r.provenance(m, peaks, notes)
	doc.HeadComment = ""
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	out := buf.Bytes()
	// The result must load: a check, not a hope.
	if _, err := topologies.Load(file, out); err != nil {
		return nil, fmt.Errorf("calibrated topology does not load (a bug): %v", err)
	}
	return out, nil
}

// HostSplit divides BracketedOp, the host time of a kernel op as the hw
// backend runs it, into what any program pays (api: the launch, the bare
// loop's median, 4.67 us on the H200 of docs/measured) and what the
// backend's timing adds (timing: the rest, its event record and
// bookkeeping: 7.14 - 4.67 us there). The split keeps their sum
// BracketedOp, so a replay predicts the backend's run as before, while
// gpusim run on the calibrated topology charges a program of the user's
// own the launch alone. Without a launch measured, or one longer than the
// backend's op, api is BracketedOp and timing zero.
func (r *Result) HostSplit() (api, timing float64) {
	if r.BracketedOp <= 0 {
		return 0, 0
	}
	if r.Launch <= 0 || r.Launch >= r.BracketedOp {
		return r.BracketedOp, 0
	}
	return r.Launch, r.BracketedOp - r.Launch
}

// SyncLatency is the host's sync_latency: an event record and a
// synchronize on it, on an idle stream, less the record's call (5.15 us on
// the H200 of docs/measured: 7.10 - 1.95): from the record call's return,
// on an idle GPU, to the synchronize's return, what the model calls the
// host seeing work sync_latency after it ended. The model charges the two
// calls api_overhead each (the launch's: 4.67 us there), so it predicts
// this round trip long by the calls' difference (9.8 us against 7.1):
// one API overhead serves every call. ok is false where either was not
// measured. A round trip shorter than the record alone gives zero.
func (r *Result) SyncLatency() (l float64, ok bool) {
	if r.EventRoundTrip <= 0 || r.EventRecord <= 0 {
		return 0, false
	}
	return max(0, r.EventRoundTrip-r.EventRecord), true
}

// DuplexShort is the share of twice one way's bandwidth below which H2D and
// D2H at once set a link's duplex_bandwidth. The two H200 calibrations of
// docs/measured moved 98.9 and 100.4 GB/s both ways against 110.5 for twice
// one way (0.89-0.91); runs of one measurement there repeat within 1-2%.
const DuplexShort = 0.97

// PoorFit and PoorFitPageable are the residuals (median relative misfit)
// above which a path's fit is called unreliable. In the two H200
// calibrations of docs/measured, pinned, device-local and peer paths fitted
// within 0.2-2.6%, pageable ones (the driver's staging varies copy to copy)
// within 3.1-9.6%; the thresholds are about three times the worst of each.
const (
	PoorFit         = 0.10
	PoorFitPageable = 0.25
)

// Warnings says what in r should not be trusted as it stands: fits that
// miss their samples by more than PoorFit (PoorFitPageable for pageable
// paths), paths not fitted, host copies not measured from their GPU's
// NUMA node.
func (r *Result) Warnings() []string {
	var out []string
	for _, fs := range [][]PathFit{r.H2D, r.D2H, r.D2D, r.H2DPageable, r.D2HPageable, r.P2P} {
		for _, f := range fs {
			poor := PoorFit
			if strings.Contains(f.Name, "pageable") {
				poor = PoorFitPageable
			}
			switch {
			case f.Unfitted != "":
				out = append(out, fmt.Sprintf("%s: not fitted (%s); the model keeps its value", f.Name, f.Unfitted))
			case f.Bandwidth > 0 && f.Residual > poor:
				out = append(out, fmt.Sprintf("%s: the fit misses its samples by %.0f%% (median): its latency and bandwidth are unreliable; calibrate again on a quiet machine", f.Name, 100*f.Residual))
			}
		}
	}
	return append(out, r.Placement...)
}

func (r *Result) provenance(m *sim.Machine, peaks []float64, notes []string) string {
	var b strings.Builder
	w := func(format string, a ...any) { fmt.Fprintf(&b, format+"\n", a...) }
	w("Calibrated by gpusim calibrate on %s (driver CUDA %d.%d).", r.Date.Format("2006-01-02 15:04 UTC"), r.DriverVersion/1000, r.DriverVersion%1000/10)
	for i, d := range r.Devices {
		w("GPU %d: %s, %d SMs, compute %d.%d, %d copy engines, %.1f GiB, clock %d MHz.", i, d.Name, d.SMs, d.ComputeMajor, d.ComputeMin, d.CopyEngines, float64(d.MemoryBytes)/(1<<30), d.ClockKHz/1000)
	}
	var placed []string
	for i, node := range r.Nodes {
		if node >= 0 {
			placed = append(placed, fmt.Sprintf("gpu%d node %d", i, node))
		}
	}
	if len(placed) > 0 {
		w("Each GPU's host copies from memory on its own NUMA node, issued from its CPUs: %s.", strings.Join(placed, ", "))
	}
	w("Copy paths: time = latency + bytes / bandwidth, robust fit (IRLS, Tukey) over log-spaced sizes;")
	w("residual = median relative misfit, spread = largest (P90-P10)/median at one size.")
	fits := func(fs []PathFit) {
		for _, f := range fs {
			if f.Unfitted != "" {
				w("  %-22s not fitted (the model's value is kept): %s", f.Name, f.Unfitted)
				continue
			}
			if f.Bandwidth <= 0 {
				w("  %-22s skipped", f.Name)
				continue
			}
			w("  %-22s latency %9s  bandwidth %11s  residual %.1f%%  spread %.1f%%  outliers %d/%d", f.Name, timeStr(f.Latency), bwStr(f.Bandwidth), 100*f.Residual, 100*f.Spread, f.Outliers, f.N)
		}
	}
	fits(r.H2D)
	fits(r.D2H)
	fits(r.D2D)
	fits(r.H2DPageable)
	fits(r.D2HPageable)
	fits(r.P2P)
	for g, x := range r.Bidirectional {
		if x > 0 {
			w("  gpu%d H2D+D2H at once: %s in all", g, bwStr(x))
		}
	}
	for g, xs := range r.CopyEngineScaling {
		if len(xs) > 0 {
			var s []string
			for _, x := range xs {
				s = append(s, bwStr(x))
			}
			w("  gpu%d copies on 1-4 streams at once (H2D/D2H alternating): %s", g, strings.Join(s, ", "))
		}
	}
	for i, x := range r.P2PBidirectional {
		w("  p2p pair %d both ways at once: %s", i, bwStr(x))
	}
	for _, x := range []struct {
		what string
		v    float64
	}{{"H2D", r.AllH2D}, {"D2H", r.AllD2H}, {"pageable H2D (a host thread each)", r.AllH2DPageable}, {"pageable D2H (a host thread each)", r.AllD2HPageable}} {
		if x.v > 0 {
			w("  every GPU's %s at once: %s in all", x.what, bwStr(x.v))
		}
	}
	if r.AllP2P > 0 {
		w("  every pair with peer access, both ways at once: %s in all", bwStr(r.AllP2P))
	}
	api, timing := r.HostSplit()
	w("Host, per kernel op through the hw backend (mean of a run of 400, median of %d runs across the calibration): %s", len(r.HostOpRuns), timeStr(r.BracketedOp))
	if timing > 0 {
		w("  = api_overhead %s (a launch in the bare loop below) + timing_overhead %s (the backend's event and bookkeeping).", timeStr(api), timeStr(timing))
	} else {
		w("  = api_overhead.")
	}
	var runs []string
	for _, h := range r.HostOpRuns {
		runs = append(runs, fmt.Sprintf("%s (after %s)", timeStr(h.PerOp), h.After))
	}
	for len(runs) > 0 {
		k := min(len(runs), 4)
		w("  runs: %s", strings.Join(runs[:k], ", "))
		runs = runs[k:]
	}
	w("Host, per call in a bare loop (median): launch %s; launch and its timing event %s (mean, median of 15 rounds, %s;", timeStr(r.Launch), timeStr(r.BracketedOpMedian), timeStr(r.BracketedOpLoop))
	w("  with 4 us kernels %s); event record %s; synchronize on an idle stream %s; record + synchronize %s;", timeStr(r.BracketedOpBusy), timeStr(r.EventRecord), timeStr(r.IdleStreamSync), timeStr(r.EventRoundTrip))
	w("  4-byte pinned H2D memcpyAsync %s.", timeStr(r.CopyCall))
	if l, ok := r.SyncLatency(); ok {
		w("  = sync_latency %s (record + synchronize less the record: from the work's end to the synchronize's return).", timeStr(l))
	}
	w("Host memcpy, one thread, pageable to pageable: %s.", bwStr(r.HostMemcpy))
	for g := range r.KernelOverhead {
		line := fmt.Sprintf("gpu%d: empty kernel on all SMs %s (kernel_overhead)", g, timeStr(r.KernelOverhead[g]))
		if g < len(r.MemoryKernel) && r.MemoryKernel[g] > 0 {
			line += fmt.Sprintf("; memory kernel %s read+write", bwStr(r.MemoryKernel[g]))
			if g < len(peaks) && peaks[g] > 0 {
				// Beside memory_efficiency (from device-local copies): what
				// replay's memory kernels will run at against it.
				line += fmt.Sprintf(" (%.2f of the %s peak)", r.MemoryKernel[g]/peaks[g], bwStr(peaks[g]))
			}
		}
		if g < len(r.FMA) && r.FMA[g] > 0 {
			line += fmt.Sprintf("; FP32 FMA kernel %.1f TFLOP/s", r.FMA[g]/1e12)
		}
		w("%s.", line)
	}
	if len(r.Skipped) > 0 {
		w("Skipped (the budget was spent, unless it says why): %s.", strings.Join(r.Skipped, ", "))
	}
	for _, n := range append(r.Warnings(), notes...) {
		w("Note: %s.", strings.TrimSuffix(n, "."))
	}
	w("Values set here: hosts' api_overhead, timing_overhead, sync_latency, memcpy_bandwidth and pageable_h2d/d2h_bandwidth;")
	w("GPUs' copy_overhead, kernel_overhead, memory_efficiency, copy_engines; bandwidth, latency and (where both ways at once")
	w("fall short) duplex_bandwidth of each GPU's link toward its host.")
	return strings.TrimRight(b.String(), "\n")
}

func get(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// scaleDuplex keeps link l's duplex_bandwidth (node ln), if it has one, in
// the same proportion to its bandwidth when that goes to now (for all count
// links together), so that it stays within what the loader takes (one
// direction's bandwidth to twice it).
func scaleDuplex(ln *yaml.Node, l sim.Link, now, count float64) {
	if get(ln, "duplex_bandwidth") == nil || l.Duplex <= 0 || l.Bandwidth <= 0 {
		return
	}
	ratio := min(max(l.Duplex/l.Bandwidth, 1), 2)
	set(ln, "duplex_bandwidth", bwStr(ratio*now/count))
}

// del removes key from mapping m.
func del(m *yaml.Node, key string) {
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			m.Content = append(m.Content[:i], m.Content[i+2:]...)
			return
		}
	}
}

func seq(m *yaml.Node, key string) []*yaml.Node {
	n := get(m, key)
	if n == nil || n.Kind != yaml.SequenceNode {
		return nil
	}
	return n.Content
}

func set(m *yaml.Node, key, value string) {
	if n := get(m, key); n != nil {
		n.Kind, n.Tag, n.Value, n.Style = yaml.ScalarNode, "!!str", value, 0
		n.Content = nil
		return
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// timeStr writes seconds in the unit that reads best, to 4 significant digits.
func timeStr(s float64) string {
	switch {
	case s == 0:
		return "0 us"
	case s < 1e-6:
		return fmt.Sprintf("%.4g ns", s*1e9)
	case s < 1e-3:
		return fmt.Sprintf("%.4g us", s*1e6)
	case s < 1:
		return fmt.Sprintf("%.4g ms", s*1e3)
	}
	return fmt.Sprintf("%.4g s", s)
}

// bwStr writes bytes/s as GB/s (or MB/s), to 4 significant digits.
func bwStr(x float64) string {
	if x < 1e9 {
		return fmt.Sprintf("%.4g MB/s", x/1e6)
	}
	return fmt.Sprintf("%.4g GB/s", x/1e9)
}
