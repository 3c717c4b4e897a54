package sim

import (
	"fmt"
	"hash/maphash"
	"strings"
	"testing"
)

// TestValidateFindsDuplicateIDs checks the duplicate-ID rule: the second and
// later ops with an ID are reported, each once, in program order; parts of a
// collective issued rank by rank share an ID but not a rank.
func TestValidateFindsDuplicateIDs(t *testing.T) {
	m := &Machine{Name: "m"}
	m.AddHost(Host{Name: "cpu0"}, true)
	host := func(id string) Op { return Op{ID: id, Kind: OpHost, Duration: Microsecond} }
	part := func(id string, rank int) Op {
		// Only the ID rule is under test: the part's other fields are
		// left for the collective checks to complain about.
		return Op{ID: id, Kind: OpCollective, OneRank: true, Rank: rank}
	}
	p := &Program{Name: "p", Threads: []Thread{
		{Name: "a", Ops: []Op{host("x"), host("y"), part("c", 0), host("x"), host("")}},
		{Name: "b", Ops: []Op{host("y"), part("c", 1), part("c", 1), host("x"), host("z")}},
	}}
	err := p.Validate(m)
	if err == nil {
		t.Fatal("no error")
	}
	var got []string
	for _, line := range strings.Split(err.Error(), "\n") {
		if strings.HasSuffix(line, "duplicate id") || strings.HasSuffix(line, "has no id") {
			got = append(got, line)
		}
	}
	want := []string{"op x: duplicate id", "op : has no id", "op y: duplicate id", "op c: duplicate id", "op x: duplicate id"}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %q, want %q", got, want)
	}
	// A thousand ops with ten IDs: 990 duplicates, the first 50 listed
	// (ops 10 to 59: op0 ... op9 five times), then the count of the rest.
	many := make([]Op, 0, 1000)
	for i := 0; i < 1000; i++ {
		many = append(many, host(fmt.Sprintf("op%d", i%10)))
	}
	err = (&Program{Name: "p", Threads: []Thread{{Name: "a", Ops: many}}}).Validate(m)
	lines := strings.Split(err.Error(), "\n")
	if n := strings.Count(err.Error(), "duplicate id"); n != 50 || len(lines) != 51 || lines[49] != "op op9: duplicate id" || lines[50] != "and 940 more problems" {
		t.Errorf("%d duplicates listed in %d lines, the last two %q; want 50 and \"and 940 more problems\"", n, len(lines), lines[max(0, len(lines)-2):])
	}
	// 51 problems: the last one counted.
	err = (&Program{Name: "p", Threads: []Thread{{Name: "a", Ops: many[:61]}}}).Validate(m)
	if !strings.HasSuffix(err.Error(), "\nop op9: duplicate id\nand 1 more problem") {
		t.Errorf("51 duplicates: %q...", err.Error()[max(0, len(err.Error())-60):])
	}
}

// TestIDTableComparesIDsWhereHashFragmentsMatch plants, where op b's probe
// starts, an entry with b's hash fragment that points at op a: add must
// compare the IDs, find them different, and go on probing.
func TestIDTableComparesIDsWhereHashFragmentsMatch(t *testing.T) {
	a := Op{ID: "a", Kind: OpHost}
	b := Op{ID: "b", Kind: OpHost}
	p := &Program{Threads: []Thread{{Ops: []Op{a, b, b}}}}
	ids := newIDTable(p)
	if ids.add(&p.Threads[0].Ops[0], 0) {
		t.Fatal("first op reported as a duplicate")
	}
	h := maphash.String(ids.seed, "b")
	planted := h & ids.mask
	for ids.table[planted] != 0 { // keep a's own entry
		planted = (planted + 1) & ids.mask
	}
	ids.table[planted] = h>>32<<32 | 1 // b's fragment, a's position
	if ids.add(&p.Threads[0].Ops[1], 1) {
		t.Error("b reported as a duplicate of a, whose entry only shares its hash fragment")
	}
	if !ids.add(&p.Threads[0].Ops[2], 2) {
		t.Error("the second b not reported as a duplicate")
	}
}

// TestValidateRefusesNegativeHostTimes: a negative staging handoff or graph
// launch (reachable from Go, not from YAML) is refused, not run into a
// saturated sum that reads as a time overflow.
func TestValidateRefusesNegativeHostTimes(t *testing.T) {
	for _, h := range []Host{
		{Name: "cpu0", StagingHandoff: -Microsecond},
		{Name: "cpu0", GraphLaunch: -Microsecond},
	} {
		h.MemoryBandwidth, h.MemcpyBandwidth, h.StagingChunk, h.StagingBuffers = 1e9, 1e9, 1<<20, 2
		m := &Machine{Name: "m"}
		m.AddHost(h, true)
		if err := m.Validate(); err == nil || !strings.Contains(err.Error(), "must not be negative") {
			t.Errorf("%+v: error %v, want a negative host time refused", h, err)
		}
	}
}

// TestValidateRefusesUnstageableCopies: a copy without peer access between
// GPUs that no one host reaches (each on its own host, joined by NVLink) is
// refused, not left to deadlock.
func TestValidateRefusesUnstageableCopies(t *testing.T) {
	m := &Machine{Name: "m"}
	for i := range 2 {
		h := m.AddHost(Host{Name: fmt.Sprint("cpu", i), MemoryBandwidth: 1e9, MemcpyBandwidth: 1e9, StagingChunk: 1 << 20, StagingBuffers: 2}, true)
		m.AddGPU(GPU{Name: fmt.Sprint("gpu", i), Host: h, CopyEngines: 1, MemoryBandwidth: 1e12})
		m.AddLink(Link{A: m.GPUs[i].Node, B: m.Hosts[h].Node, Kind: LinkC2C, Bandwidth: 1e9, P2P: true})
	}
	m.AddLink(Link{A: m.GPUs[0].Node, B: m.GPUs[1].Node, Kind: LinkNVLink, Bandwidth: 1e9, P2P: true})
	for _, noPeer := range []bool{false, true} {
		p := &Program{Name: "p", Streams: []Stream{{GPU: 0, Name: "s"}}, Threads: []Thread{{Name: "a", Host: 0, Ops: []Op{
			{ID: "c", Kind: OpCopy, Stream: 0, Src: m.GPUs[0].Node, Dst: m.GPUs[1].Node, Bytes: 1, NoPeerAccess: noPeer},
		}}}}
		err := p.Validate(m)
		if refused := err != nil && strings.Contains(err.Error(), "no host reachable from both gpu0 and gpu1"); refused != noPeer {
			t.Errorf("no peer access %v: error %v", noPeer, err)
		}
	}
}

// TestValidateRefusesNegativeKernelTraffic: a kernel's memory traffic
// (what the hw backend moves for it) may be zero, not negative.
func TestValidateRefusesNegativeKernelTraffic(t *testing.T) {
	m := &Machine{Name: "m"}
	h := m.AddHost(Host{Name: "cpu0"}, true)
	m.AddGPU(GPU{Name: "gpu0", Host: h, CopyEngines: 1, MemoryBandwidth: 1e12})
	for _, bytes := range []int64{0, 1 << 20, -1} {
		p := &Program{Name: "p", Streams: []Stream{{GPU: 0, Name: "s"}}, Threads: []Thread{{Name: "a", Host: 0, Ops: []Op{
			{ID: "k", Kind: OpKernel, Stream: 0, Duration: Microsecond, SMShare: 1, Bytes: bytes},
		}}}}
		err := p.Validate(m)
		if refused := err != nil && strings.Contains(err.Error(), "op k: negative memory traffic"); refused != (bytes < 0) {
			t.Errorf("kernel of %d bytes: error %v", bytes, err)
		}
	}
}
