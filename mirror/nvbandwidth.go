package mirror

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"gpusim/sim"
)

// nvbandwidth v0.8 (methods.md §5): 512 MiB buffers, 16 copies per
// measurement timed between events while a spin kernel holds the streams
// until everything is enqueued; copy-engine copies are cuMemcpyAsync; "read"
// tests issue the copy from the GPU that reads (the destination), "write"
// tests from the source; bidirectional host tests add a reverse copy of twice
// the size; the "all" tests run every GPU at once, the others copying twice
// the size; the latency tests chase pointers (one load at a time) over a
// 2 MiB buffer.

// NVBandwidthDefaultBuffer is nvbandwidth's default buffer size (v0.7 and later).
const NVBandwidthDefaultBuffer = 512 << 20

const nvbLoop = 16

// NVBandwidthTests lists the tests gpusim mirrors, in nvbandwidth's order.
var NVBandwidthTests = []string{
	"host_to_device_memcpy_ce",
	"device_to_host_memcpy_ce",
	"host_to_device_bidirectional_memcpy_ce",
	"device_to_host_bidirectional_memcpy_ce",
	"device_to_device_memcpy_read_ce",
	"device_to_device_memcpy_write_ce",
	"device_to_device_bidirectional_memcpy_read_ce",
	"device_to_device_bidirectional_memcpy_write_ce",
	"all_to_host_memcpy_ce",
	"host_to_all_memcpy_ce",
	"host_device_latency_sm",
	"device_to_device_latency_sm",
}

// nvbandwidthList is every test of nvbandwidth v0.8, single-node build, in
// the order of its createTestcases() (methods.md §5): a test's index there
// is what nvbandwidth's -t takes in place of its name.
var nvbandwidthList = []string{
	"host_to_device_memcpy_ce", "device_to_host_memcpy_ce",
	"host_to_device_bidirectional_memcpy_ce", "device_to_host_bidirectional_memcpy_ce",
	"device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce",
	"device_to_device_bidirectional_memcpy_read_ce", "device_to_device_bidirectional_memcpy_write_ce",
	"all_to_host_memcpy_ce", "all_to_host_bidirectional_memcpy_ce",
	"host_to_all_memcpy_ce", "host_to_all_bidirectional_memcpy_ce",
	"all_to_one_write_ce", "all_to_one_read_ce", "one_to_all_write_ce", "one_to_all_read_ce",
	"host_to_device_memcpy_sm", "device_to_host_memcpy_sm",
	"host_to_device_bidirectional_memcpy_sm", "device_to_host_bidirectional_memcpy_sm",
	"device_to_device_memcpy_read_sm", "device_to_device_memcpy_write_sm",
	"device_to_device_bidirectional_memcpy_read_sm", "device_to_device_bidirectional_memcpy_write_sm",
	"all_to_host_memcpy_sm", "all_to_host_bidirectional_memcpy_sm",
	"host_to_all_memcpy_sm", "host_to_all_bidirectional_memcpy_sm",
	"all_to_one_write_sm", "all_to_one_read_sm", "one_to_all_write_sm", "one_to_all_read_sm",
	"host_device_latency_sm", "device_to_device_latency_sm", "device_local_copy",
}

// NVBandwidthTestName resolves what nvbandwidth's -t takes, a test's name or
// its index in nvbandwidth's own list (0 host_to_device_memcpy_ce ... 34
// device_local_copy), to the name of a test gpusim mirrors; an index of a
// test gpusim does not mirror is an error that names the test.
func NVBandwidthTestName(arg string) (string, error) {
	if slices.Contains(NVBandwidthTests, arg) {
		return arg, nil
	}
	if i, err := strconv.Atoi(arg); err == nil {
		if i < 0 || i >= len(nvbandwidthList) {
			return "", fmt.Errorf("no test has index %d: nvbandwidth's tests are numbered 0 to %d; tests: %s", i, len(nvbandwidthList)-1, strings.Join(NVBandwidthTests, ", "))
		}
		name := nvbandwidthList[i]
		if !slices.Contains(NVBandwidthTests, name) {
			return "", fmt.Errorf("test %d is %s, which gpusim does not mirror; tests: %s", i, name, strings.Join(NVBandwidthTests, ", "))
		}
		return name, nil
	}
	if slices.Contains(nvbandwidthList, arg) {
		return "", fmt.Errorf("test %s is not mirrored by gpusim; tests: %s", arg, strings.Join(NVBandwidthTests, ", "))
	}
	return "", fmt.Errorf("unknown test %q; tests: %s", arg, strings.Join(NVBandwidthTests, ", "))
}

// NVBandwidth runs one nvbandwidth test (a name or an index, as
// NVBandwidthTestName takes them) on m with the given buffer size and
// returns its matrices (most tests have one; bidirectional device-to-device
// tests have three: each direction and their total). Its cells'
// simulations run through each (nil: one after another).
func NVBandwidth(m *sim.Machine, test string, buffer int64, each Each) ([]*Matrix, error) {
	test, err := NVBandwidthTestName(test)
	if err != nil {
		return nil, err
	}
	paths := m.NewPaths() // every pair's path: a search per GPU, not per pair
	g := len(m.GPUs)
	gpus := gpuIndexNames(m)
	host := func(i int) int { return m.Hosts[m.GPUs[i].Host].Node }
	node := func(i int) int { return m.GPUs[i].Node }
	size := float64(buffer) * nvbLoop
	cells := &batch{m: m, each: each} // a test's cells, simulated together
	hostTest := func(title string, measured func(d int) copySpec, others func(d, o int) []copySpec) ([]*Matrix, error) {
		mx := newMatrix(test, title, "GB/s", []string{"0"}, gpus)
		for d := 0; d < g; d++ {
			specs := []copySpec{measured(d)}
			if others != nil {
				for o := 0; o < g; o++ {
					specs = append(specs, others(d, o)...)
				}
			}
			cells.add(specs, func(ts, _ []sim.Time) { mx.set(0, d, gbps(size, ts[0])) })
		}
		if err := cells.run(); err != nil {
			return nil, err
		}
		return []*Matrix{mx}, nil
	}
	h2d := func(d int, scale int64) copySpec {
		return copySpec{src: host(d), dst: node(d), gpu: d, bytes: buffer * scale, repeat: nvbLoop}
	}
	d2h := func(d int, scale int64) copySpec {
		return copySpec{src: node(d), dst: host(d), gpu: d, bytes: buffer * scale, repeat: nvbLoop}
	}
	switch test {
	case "host_to_device_memcpy_ce":
		return hostTest("memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", func(d int) copySpec { return h2d(d, 1) }, nil)
	case "device_to_host_memcpy_ce":
		return hostTest("memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)", func(d int) copySpec { return d2h(d, 1) }, nil)
	case "host_to_device_bidirectional_memcpy_ce":
		return hostTest("memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)", func(d int) copySpec { return h2d(d, 1) },
			func(d, o int) []copySpec {
				if o != d {
					return nil
				}
				return []copySpec{d2h(d, 2)}
			})
	case "device_to_host_bidirectional_memcpy_ce":
		return hostTest("memcpy CE CPU(row) <-> GPU(column) bandwidth (GB/s)", func(d int) copySpec { return d2h(d, 1) },
			func(d, o int) []copySpec {
				if o != d {
					return nil
				}
				return []copySpec{h2d(d, 2)}
			})
	case "all_to_host_memcpy_ce":
		return hostTest("memcpy CE CPU(row) <- GPU(column) bandwidth (GB/s)", func(d int) copySpec { return d2h(d, 1) },
			func(d, o int) []copySpec {
				if o == d {
					return nil
				}
				return []copySpec{d2h(o, 2)}
			})
	case "host_to_all_memcpy_ce":
		return hostTest("memcpy CE CPU(row) -> GPU(column) bandwidth (GB/s)", func(d int) copySpec { return h2d(d, 1) },
			func(d, o int) []copySpec {
				if o == d {
					return nil
				}
				return []copySpec{h2d(o, 2)}
			})
	case "device_to_device_memcpy_read_ce", "device_to_device_memcpy_write_ce":
		read := strings.Contains(test, "read")
		title := "memcpy CE GPU(row) -> GPU(column) bandwidth (GB/s)"
		if read {
			title = "memcpy CE GPU(row) <- GPU(column) bandwidth (GB/s)"
		}
		mx := newMatrix(test, title, "GB/s", gpus, gpus)
		for i := 0; i < g; i++ {
			for j := 0; j < g; j++ {
				if i == j || !peer(paths, i, j) {
					continue
				}
				// Row i reads from (or writes to) column j; the copy is
				// issued by the GPU that reads.
				s := copySpec{src: node(i), dst: node(j), gpu: i, bytes: buffer, repeat: nvbLoop}
				if read {
					s = copySpec{src: node(j), dst: node(i), gpu: i, bytes: buffer, repeat: nvbLoop}
				}
				cells.add([]copySpec{s}, func(ts, _ []sim.Time) { mx.set(i, j, gbps(size, ts[0])) })
			}
		}
		if err := cells.run(); err != nil {
			return nil, err
		}
		return []*Matrix{mx}, nil
	case "device_to_device_bidirectional_memcpy_read_ce", "device_to_device_bidirectional_memcpy_write_ce":
		read := strings.Contains(test, "read")
		word := "Write"
		if read {
			word = "Read"
		}
		// Named as nvbandwidth names them (methods.md §5): _read1 (or
		// _write1), _read2 (_write2), _total.
		one := newMatrix(test+"_"+strings.ToLower(word)+"1", fmt.Sprintf("memcpy CE GPU(row) <-> GPU(column) %s1 bandwidth (GB/s)", word), "GB/s", gpus, gpus)
		two := newMatrix(test+"_"+strings.ToLower(word)+"2", fmt.Sprintf("memcpy CE GPU(row) <-> GPU(column) %s2 bandwidth (GB/s)", word), "GB/s", gpus, gpus)
		tot := newMatrix(test+"_total", "memcpy CE GPU(row) <-> GPU(column) Total bandwidth (GB/s)", "GB/s", gpus, gpus)
		for i := 0; i < g; i++ {
			for j := 0; j < g; j++ {
				if i == j || !peer(paths, i, j) {
					continue
				}
				a := copySpec{src: node(i), dst: node(j), gpu: i, bytes: buffer, repeat: nvbLoop}
				b := copySpec{src: node(j), dst: node(i), gpu: j, bytes: buffer, repeat: nvbLoop}
				if read {
					a = copySpec{src: node(j), dst: node(i), gpu: i, bytes: buffer, repeat: nvbLoop}
					b = copySpec{src: node(i), dst: node(j), gpu: j, bytes: buffer, repeat: nvbLoop}
				}
				cells.add([]copySpec{a, b}, func(ts, _ []sim.Time) {
					one.set(i, j, gbps(size, ts[0]))
					two.set(i, j, gbps(size, ts[1]))
					tot.set(i, j, gbps(size, ts[0])+gbps(size, ts[1]))
				})
			}
		}
		if err := cells.run(); err != nil {
			return nil, err
		}
		return []*Matrix{one, two, tot}, nil
	case "host_device_latency_sm":
		mx := newMatrix(test, "memory latency SM CPU(row) <-> GPU(column) (ns)", "ns", []string{"0"}, gpus)
		for d := 0; d < g; d++ {
			rt, _ := m.Route(node(d), host(d))
			mx.set(0, d, loadLatency(m, rt).Seconds()*1e9)
		}
		return []*Matrix{mx}, nil
	case "device_to_device_latency_sm":
		mx := newMatrix(test, "memory latency SM GPU(row) <-> GPU(column) (ns)", "ns", gpus, gpus)
		for i := 0; i < g; i++ {
			for j := 0; j < g; j++ {
				if i == j || !peer(paths, i, j) {
					continue
				}
				mx.set(i, j, loadLatency(m, paths.PathBetween(i, j).Route).Seconds()*1e9)
			}
		}
		return []*Matrix{mx}, nil
	}
	return nil, fmt.Errorf("unknown nvbandwidth test %q; tests: %s", test, strings.Join(NVBandwidthTests, ", "))
}

// peer reports whether GPUs i and j can access each other's memory (P2P).
func peer(paths *sim.Paths, i, j int) bool {
	k := paths.PathBetween(i, j).Kind
	return k == sim.PathNVLink || k == sim.PathP2P
}

// loadLatency is the time of one dependent load over a route: the request
// out and the data back, each paying every link's latency.
func loadLatency(m *sim.Machine, rt sim.Route) sim.Time {
	return 2 * rt.Latency(m)
}
