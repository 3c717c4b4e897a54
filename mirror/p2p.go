package mirror

import (
	"fmt"
	"io"
	"strings"

	"gpusim/sim"
)

// p2pBandwidthLatencyTest (cuda-samples; methods.md §6): 40,000,000 ints
// (160 MB) a copy, 5 copies per measurement, cudaMemcpyPeerAsync on a stream
// of the row's GPU behind a delay kernel, timed with events. P2P=Disabled
// leaves peer access off, so the copy is staged through host memory.
// Bidirectional runs the reverse copy on the column GPU's stream at the same
// time and counts both. The diagonal is a copy within one GPU, counted twice
// (read and write). Latency: 100 copies of 16 bytes; the GPU latency is their
// time over 100, the CPU latency the host's time to enqueue one.
const (
	p2pBytes        = 40_000_000 * 4
	p2pRepeat       = 5
	p2pLatencyBytes = 16
	p2pLatencyCount = 100
)

// P2PConnectivity is the name of the first matrix P2PTest returns: the
// sample's "P2P Connectivity Matrix", 1 where cudaDeviceCanAccessPeer says
// yes (an NVLink or PCIe P2P route here) and on the diagonal, 0 elsewhere.
const P2PConnectivity = "p2p_connectivity"

// P2PTest returns the matrices of p2pBandwidthLatencyTest, in its order:
// the connectivity matrix, then the bandwidth and latency matrices. Its
// cells' simulations run through each (nil: one after another).
func P2PTest(m *sim.Machine, each Each) ([]*Matrix, error) {
	g := len(m.GPUs)
	paths := m.NewPaths() // every pair's paths: a search per GPU, not per pair
	// The sample copies between every pair: one that cannot is said once.
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			if i != j && paths.PathBetween(i, j).Kind == sim.PathNone {
				return nil, fmt.Errorf("%s and %s cannot reach each other: no route, and no host reachable from both; the sample copies between every pair of GPUs", m.GPUs[i].Name, m.GPUs[j].Name)
			}
		}
	}
	gpus := gpuIndexNames(m)
	node := func(i int) int { return m.GPUs[i].Node }
	// Without peer access a copy stages through a host both GPUs reach;
	// where none does (GPUs of different Graces of a GB200 rack), the
	// P2P=Disabled cells are N/A.
	unstaged := func(i, j int) bool { return i != j && paths.StagedPath(i, j).Kind == sim.PathNone }
	conn := newMatrix(P2PConnectivity, "P2P Connectivity Matrix", "", gpus, gpus)
	for i := 0; i < g; i++ {
		for j := 0; j < g; j++ {
			if i == j || peer(paths, i, j) {
				conn.set(i, j, 1)
			} else {
				conn.set(i, j, 0)
			}
		}
	}
	out := []*Matrix{conn}
	cells := &batch{m: m, each: each} // every cell's simulation, run at the end
	for _, bidir := range []bool{false, true} {
		for _, enabled := range []bool{false, true} {
			name, title := "unidirectional", "Unidirectional P2P=%s Bandwidth Matrix (GB/s)"
			if bidir {
				name, title = "bidirectional", "Bidirectional P2P=%s Bandwidth Matrix (GB/s)"
			}
			state := "Disabled"
			if enabled {
				state = "Enabled"
				if !bidir {
					title = "Unidirectional P2P=%s Bandwidth (P2P Writes) Matrix (GB/s)"
				}
			}
			mx := newMatrix(fmt.Sprintf("%s_p2p_%s", name, strings.ToLower(state)), fmt.Sprintf(title, state), "GB/s", gpus, gpus)
			for i := 0; i < g; i++ {
				for j := 0; j < g; j++ {
					if !enabled && (unstaged(i, j) || bidir && unstaged(j, i)) {
						continue
					}
					specs := []copySpec{{src: node(i), dst: node(j), gpu: i, bytes: p2pBytes, repeat: p2pRepeat, noPeer: !enabled}}
					if bidir {
						specs = append(specs, copySpec{src: node(j), dst: node(i), gpu: j, bytes: p2pBytes, repeat: p2pRepeat, noPeer: !enabled})
					}
					cells.add(specs, func(ts, _ []sim.Time) {
						t := ts[0]
						if bidir {
							t = max(ts[0], ts[1])
						}
						v := gbps(float64(p2pBytes*p2pRepeat*len(specs)), t)
						if i == j {
							v *= 2 // read and write
						}
						mx.set(i, j, v)
					})
				}
			}
			out = append(out, mx)
		}
	}
	for _, enabled := range []bool{false, true} {
		state, title := "Disabled", "P2P=Disabled Latency Matrix (us)"
		if enabled {
			state, title = "Enabled", "P2P=Enabled Latency (P2P Writes) Matrix (us)"
		}
		gpuM := newMatrix("latency_p2p_"+strings.ToLower(state)+"_gpu", title, "us", gpus, gpus)
		cpuM := newMatrix("latency_p2p_"+strings.ToLower(state)+"_cpu", title+" (CPU)", "us", gpus, gpus)
		for i := 0; i < g; i++ {
			for j := 0; j < g; j++ {
				if !enabled && unstaged(i, j) {
					continue
				}
				cells.add([]copySpec{{src: node(i), dst: node(j), gpu: i, bytes: p2pLatencyBytes, repeat: p2pLatencyCount, noPeer: !enabled}}, func(ts, hs []sim.Time) {
					gpuM.set(i, j, ts[0].Seconds()*1e6/p2pLatencyCount)
					cpuM.set(i, j, hs[0].Seconds()*1e6/p2pLatencyCount)
				})
			}
		}
		out = append(out, gpuM, cpuM)
	}
	if err := cells.run(); err != nil {
		return nil, err
	}
	return out, nil
}

// WriteP2P prints the matrices as p2pBandwidthLatencyTest does (its
// outputBandwidthMatrix and outputLatencyMatrix print "   D\D" (or "   GPU",
// "   CPU"), then "%6d " per column, and each row "%6d " then "%6.02f " per
// cell: the header's columns end one place left of the cells'), without the
// trailing spaces, as measured.md's pasted outputs show them. The
// connectivity matrix has a layout of its own: "     D\D" and "%6d" per
// column, each row "%6d\t" then "%6d" per cell.
func WriteP2P(w io.Writer, ms []*Matrix) {
	for _, mx := range ms {
		if mx.Name == P2PConnectivity {
			writeConnectivity(w, mx)
			continue
		}
		corner := "D\\D"
		if mx.Unit == "us" {
			corner = "GPU"
			if strings.HasSuffix(mx.Name, "_cpu") {
				corner = "CPU"
			} else {
				fmt.Fprintln(w, mx.Title)
			}
		} else {
			fmt.Fprintln(w, mx.Title)
		}
		fmt.Fprintf(w, "   %s", corner)
		for k, c := range mx.Cols {
			if k > 0 {
				fmt.Fprint(w, " ")
			}
			fmt.Fprintf(w, "%6s", c)
		}
		fmt.Fprintln(w)
		for i, r := range mx.Rows {
			fmt.Fprintf(w, "%6s", r)
			for _, v := range mx.Cells[i] {
				if v == nil {
					fmt.Fprintf(w, " %6s", "N/A")
				} else {
					fmt.Fprintf(w, " %6.02f", *v)
				}
			}
			fmt.Fprintln(w)
		}
	}
}

// writeConnectivity prints the "P2P Connectivity Matrix" as the sample does
// after its device list.
func writeConnectivity(w io.Writer, mx *Matrix) {
	fmt.Fprintln(w, mx.Title)
	fmt.Fprint(w, "     D\\D")
	for _, c := range mx.Cols {
		fmt.Fprintf(w, "%6s", c)
	}
	fmt.Fprintln(w)
	for i, r := range mx.Rows {
		fmt.Fprintf(w, "%6s\t", r)
		for _, v := range mx.Cells[i] {
			fmt.Fprintf(w, "%6.0f", *v)
		}
		fmt.Fprintln(w)
	}
}
