package plots

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"

	"gonum.org/v1/plot"

	"gpusim/sim"
)

// PeerBandwidth predicts the bandwidth of a 256 MiB copy from each GPU to
// each other (GB/s), by simulating it alone on the machine, and the path
// kind of each pair ("NV", "P2P", "HOST").
func PeerBandwidth(m *sim.Machine) ([][]float64, [][]string, error) {
	const bytes = 256 << 20
	n := len(m.GPUs)
	bw := make([][]float64, n)
	kinds := make([][]string, n)
	short := map[sim.PathKind]string{sim.PathNVLink: "NV", sim.PathP2P: "P2P", sim.PathStaged: "HOST", sim.PathNone: "no path"}
	paths := m.NewPaths()
	for a := 0; a < n; a++ {
		bw[a] = make([]float64, n)
		kinds[a] = make([]string, n)
		for b := 0; b < n; b++ {
			if a == b {
				bw[a][b] = math.NaN()
				continue
			}
			kind := paths.PathBetween(a, b).Kind
			kinds[a][b] = short[kind]
			if kind == sim.PathNone {
				bw[a][b] = math.NaN()
				continue
			}
			p := &sim.Program{Name: "peer", Streams: []sim.Stream{{GPU: a, Name: "copy"}}, Threads: []sim.Thread{{Name: "t", Host: m.GPUs[a].Host,
				Ops: []sim.Op{{ID: "c", Kind: sim.OpCopy, Stream: 0, Src: m.GPUs[a].Node, Dst: m.GPUs[b].Node, Bytes: bytes}}}}}
			res, err := sim.RunOptions(m, p, sim.Options{NoLoadSeries: true})
			if err != nil {
				return nil, nil, err
			}
			c := res.Ops[0]
			bw[a][b] = bytes / (c.End - c.Start).Seconds() / 1e9
		}
	}
	return bw, kinds, nil
}

// TopoHeatmap draws the predicted peer bandwidth between every pair of GPUs
// (GB/s, a 256 MiB copy engine copy) with its path kind in each cell.
func TopoHeatmap(m *sim.Machine, title string) (*plot.Plot, error) {
	bw, kinds, err := PeerBandwidth(m)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(m.GPUs))
	for i, g := range m.GPUs {
		names[i] = g.Name
	}
	if title == "" {
		title = m.Name + ": predicted peer bandwidth"
	}
	key := "NV: NVLink, P2P: PCIe peer-to-peer, HOST: staged through host memory"
	for _, row := range kinds {
		for _, k := range row {
			if k == "no path" {
				key += "; no path: the GPUs cannot reach each other"
				break
			}
		}
		if strings.Contains(key, "no path") {
			break
		}
	}
	return Heatmap(title+", 256 MiB copies\n"+key, "destination GPU", "source GPU", names, names, bw, kinds, "GB/s")
}

// WriteDOT writes the machine graph as Graphviz DOT: hosts, GPUs and
// switches as nodes (GPUs grouped under their host), links as edges
// labelled with their kind and bandwidth per direction.
func WriteDOT(w io.Writer, m *sim.Machine) error {
	bw := bufio.NewWriter(w)
	fmt.Fprintf(bw, "graph %s {\n", strconv.Quote(m.Name))
	fmt.Fprintln(bw, "  layout=neato; overlap=false; splines=true;")
	fmt.Fprintln(bw, "  node [fontname=Helvetica, fontsize=11]; edge [fontname=Helvetica, fontsize=9];")
	for _, n := range m.Nodes {
		shape, color := "box", "lightgrey"
		label := n.Name
		switch n.Kind {
		case sim.NodeHost:
			shape, color = "box3d", "lightblue"
			h := m.Hosts[n.Index]
			if h.Cores > 0 {
				label += fmt.Sprintf("\n%d cores", h.Cores)
			}
		case sim.NodeGPU:
			shape, color = "box", "palegreen"
			label += "\n" + m.GPUs[n.Index].Model
		case sim.NodeSwitch:
			shape = "ellipse"
			label += "\n" + m.Switches[n.Index].Kind
			if !n.P2P {
				label += " (no P2P)"
			}
		}
		fmt.Fprintf(bw, "  %s [shape=%s, style=filled, fillcolor=%s, label=%s];\n", strconv.Quote(n.Name), shape, color, strconv.Quote(label))
	}
	for _, l := range m.Links {
		style := "solid"
		switch l.Kind {
		case sim.LinkNVLink, sim.LinkC2C:
			style = "bold"
		case sim.LinkSocket:
			style = "dashed"
		}
		label := fmt.Sprintf("%s %s", l.Kind, linkRate(l.Bandwidth))
		fmt.Fprintf(bw, "  %s -- %s [style=%s, label=%s];\n", strconv.Quote(m.Nodes[l.A].Name), strconv.Quote(m.Nodes[l.B].Name), style, strconv.Quote(strings.TrimSpace(label)))
	}
	fmt.Fprintln(bw, "}")
	return bw.Flush()
}

// linkRate writes a link's bandwidth as topo show does: four significant
// digits, in TB/s from 1,000 GB/s.
func linkRate(bw float64) string {
	if bw >= 1e12 {
		return strconv.FormatFloat(bw/1e12, 'g', 4, 64) + " TB/s"
	}
	return strconv.FormatFloat(bw/1e9, 'g', 4, 64) + " GB/s"
}
