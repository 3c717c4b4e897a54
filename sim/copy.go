package sim

// A copy runs as one or two stages, each a sequence of chunks moved one at a
// time. A direct copy (pinned H2D or D2H, peer-to-peer, device-local) is one
// stage of one chunk. A staged copy is two stages pipelined over the host's
// staging buffers: chunk i of the second stage follows chunk i of the first,
// and the first stage runs at most StagingBuffers chunks ahead of the second.
//
//	pageable H2D: host memcpy into the bounce buffer, then DMA to the GPU
//	pageable D2H: DMA into the bounce buffer, then host memcpy out of it
//	GPU to GPU without P2P: DMA to the staging host, then DMA to the other GPU
//
// DMA chunks need the op to have started on its stream (it holds a copy
// engine) and pay the GPU's copy overhead plus the route's latency before
// their bytes flow; host memcpy chunks start as soon as the call is made.
//
// A stage moves pieces, not chunks: a copy of at most coalesceAbove chunks
// moves each chunk as a piece of its own, as described above. A longer one
// keeps its first and last coalesceEdge chunks as they are and takes the
// chunks between them in runs of equal length (the last run may be
// shorter), so that it has at most coalesceAbove pieces: a run of n chunks
// is one flow of n chunks' bytes after n times the chunk's delay. Chunk by
// chunk, a 1 PiB staged copy is 2^29 chunks and several events each (hours
// of wall time); in pieces, any size costs at most coalesceAbove pieces.
//
// Why the runs give the rate the chunks would: the flow model's rates depend
// only on which flows are active, not on how much work they have, and the
// pipeline's rules (chunk i of the second stage follows chunk i of the
// first, which runs at most buffers chunks ahead) are the same for pieces.
// So a stretch of pieces of n chunks each, with n times the delays, runs the
// schedule of a copy of that many chunks with every time multiplied by n:
// the same steady rate. What differs is confined to the two ends of the
// coalesced stretch, where the pipeline fills or drains once more in runs
// (the second stage waits for the first stage's first run, or the first
// stage, at most buffers pieces ahead, for the second stage's last run:
// about one run of one stage, 1/14,336 of the stretch), and to other flows
// sharing a resource with the copy while it runs, which see its delays as
// fewer, longer gaps. The first and last chunks, where the copy's own fill
// and drain happen, are simulated as they are (TestLongCopiesAreCoalesced).

type stage struct {
	c       *copyState
	uses    []use
	bound   float64
	grp     *group // the host cores, for memcpy stages
	delay   Time
	dma     bool // a DMA stage: needs the op started on its stream
	next    int  // next piece to start
	done    int  // pieces finished
	running bool
	began   Time // when the current piece's bytes began to flow
	first   Time // when the first piece's bytes began to flow
	f       flow
	delayEv Event
}

// coalesceAbove is the most chunks a copy moves one by one, and the most
// pieces any copy has: 16,384 chunks, 32 GiB at the default 2 MiB
// staging_chunk (64 MiB at the smallest, a 4 KiB page). Copies of up to that
// many chunks run exactly as they always did; a longer one takes about as
// many events as one of coalesceAbove chunks (tens of milliseconds of wall
// time), whatever its size.
const coalesceAbove = 1 << 14

// coalesceEdge is how many chunks at each end of a coalesced copy stay
// chunks: the pipeline's fill and drain, and anything that starts or ends
// near them, are unchanged.
const coalesceEdge = 1 << 10

type copyState struct {
	o       *opState
	st      [2]stage
	n       int // number of stages
	chunks  int
	chunk   int64
	bytes   int64
	buffers int
	// pieces is how many pieces each stage moves: chunks, unless the copy
	// is coalesced (run > 0); then pieces coalesceEdge to
	// coalesceEdge+runs-1 are runs of run chunks each (the last of them
	// may be shorter).
	pieces    int
	runs, run int
	hostStage int // index of the host memcpy stage, or -1
	// dir is the way the copy's data crosses the GPU whose engine it
	// holds (its stream's): 0 into it, 1 out of it, -1 within it (or
	// neither end on it, which validation refuses).
	dir int8
	// hostBusy is how long the host memcpy stage's chunks ran: CPU time of
	// the thread, which stays in the call until the stage ends.
	hostBusy Time
}

func newCopy(o *opState) *copyState {
	r := o.r
	m := r.m
	op := o.op
	g := &m.GPUs[o.stream.gpu.idx]
	c := &copyState{o: o, bytes: op.Bytes, hostStage: -1, chunks: 1, chunk: op.Bytes, buffers: 1, pieces: 1}
	rec := o.record()
	linkUses := func(rt Route) []use {
		var us []use
		for _, h := range rt.Hops {
			us = r.linkUse(us, h, 1)
		}
		return us
	}
	dma := func(rt Route, host int, gpus ...int) stage {
		us := linkUses(rt)
		if host >= 0 {
			us = append(us, use{res: int32(r.hosts[host].memRes), coef: 1})
		}
		return stage{uses: us, bound: gpuMemoryBound(m, rt, gpus), delay: satAdd(g.CopyOverhead, rt.Latency(m)), dma: true}
	}
	memcpy := func(host int, rate float64) stage {
		// The thread's memcpy reads and writes each byte of the memory's
		// host and keeps one core of the thread's own host busy: it shares
		// those cores with the other CPU work there.
		h := m.Hosts[host]
		if rate == 0 {
			rate = h.MemcpyBandwidth
		}
		return stage{uses: []use{{res: int32(r.hosts[host].memRes), coef: 2}}, bound: rate, grp: &o.thread.host.cpu}
	}
	src, dst := m.Nodes[op.Src], m.Nodes[op.Dst]
	staging := -1 // host whose staging chunk size applies
	switch {
	case src.Kind == NodeHost:
		rec.Copy = CopyH2D
		rt := r.route(op.Src, op.Dst)
		if op.Memory == Pageable {
			c.st[0], c.st[1] = memcpy(src.Index, m.Hosts[src.Index].PageableH2D), dma(rt, src.Index, op.Dst)
			c.n, c.hostStage, staging = 2, 0, src.Index
		} else {
			c.st[0], c.n = dma(rt, src.Index, op.Dst), 1
		}
	case dst.Kind == NodeHost:
		rec.Copy = CopyD2H
		rt := r.route(op.Src, op.Dst)
		if op.Memory == Pageable {
			c.st[0], c.st[1] = dma(rt, dst.Index, op.Src), memcpy(dst.Index, m.Hosts[dst.Index].PageableD2H)
			c.n, c.hostStage, staging = 2, 1, dst.Index
		} else {
			c.st[0], c.n = dma(rt, dst.Index, op.Src), 1
		}
	default:
		p := r.copyPath(op)
		switch p.Kind {
		case PathLocal:
			rec.Copy = CopyD2D
			gs := r.gpus[src.Index]
			c.st[0] = stage{uses: []use{{res: int32(gs.memRes), coef: 2}}, bound: inf, delay: g.CopyOverhead, dma: true}
			c.n = 1
		case PathNVLink, PathP2P:
			rec.Copy = CopyP2P
			if p.Kind == PathNVLink {
				rec.Copy = CopyNVLink
			}
			c.st[0], c.n = dma(p.Route, -1, op.Src, op.Dst), 1
		case PathStaged:
			rec.Copy = CopyStaged
			c.st[0], c.st[1] = dma(p.ToHost, p.Host, op.Src), dma(p.FromHost, p.Host, op.Dst)
			c.st[1].delay = satAdd(c.st[1].delay, m.Hosts[p.Host].StagingHandoff)
			c.n, staging = 2, p.Host
		}
	}
	switch sg := o.stream.gpu.idx; {
	case src.Kind == NodeGPU && src.Index == sg && !(dst.Kind == NodeGPU && dst.Index == sg):
		c.dir = 1
	case dst.Kind == NodeGPU && dst.Index == sg && !(src.Kind == NodeGPU && src.Index == sg):
		c.dir = 0
	default:
		c.dir = -1
	}
	if staging >= 0 {
		h := m.Hosts[staging]
		c.chunk = h.StagingChunk
		c.buffers = h.StagingBuffers
		// Rounded up, without overflowing near the largest int64.
		c.chunks = int(c.bytes / c.chunk)
		if c.bytes%c.chunk != 0 {
			c.chunks++
		}
		if c.chunks < 1 {
			c.chunks = 1
		}
		c.pieces = c.chunks
		if c.chunks > coalesceAbove && !r.chunkByChunk {
			mid := c.chunks - 2*coalesceEdge
			c.run = (mid + coalesceAbove - 2*coalesceEdge - 1) / (coalesceAbove - 2*coalesceEdge)
			c.runs = (mid + c.run - 1) / c.run
			c.pieces = 2*coalesceEdge + c.runs
		}
	}
	for k := 0; k < c.n; k++ {
		s := &c.st[k]
		s.c = c
		s.delayEv.Init(s)
		s.f.owner = s
	}
	return c
}

// gpuMemoryBound is the most a DMA over rt moves a second as the GPUs at
// its ends (gpus, nodes) read or write each byte in their memory: no copy
// outruns them, though links may (a custom topology's hundreds of
// NVLinks). Each copy is bound alone: copies into one GPU do not share its memory, which no
// preset's links can fill (an H100's 18 NVLinks and PCIe carry under a
// third of its 3.35 TB/s both ways), and a shared memory use for every
// DMA cost the flow solver 14% more instructions (BenchmarkFlows).
func gpuMemoryBound(m *Machine, rt Route, gpus []int) float64 {
	bound := inf
	for _, node := range gpus {
		bound = min(bound, m.GPUs[m.Nodes[node].Index].MemoryBandwidth)
	}
	// Where a link of the route is no faster, the memory cannot bind:
	// no bound (a bounded flow costs the solver more).
	for _, h := range rt.Hops {
		if m.Links[h.Link].Bandwidth <= bound {
			return inf
		}
	}
	return bound
}

func (c *copyState) chunkBytes(i int) int64 {
	if c.chunks == 1 {
		return c.bytes
	}
	if rest := c.bytes - int64(i)*c.chunk; rest < c.chunk {
		return rest
	}
	return c.chunk
}

// piece returns piece i's bytes and how many chunks it holds.
func (c *copyState) piece(i int) (int64, int) {
	if c.run == 0 || i < coalesceEdge {
		return c.chunkBytes(i), 1
	}
	if i >= coalesceEdge+c.runs {
		return c.chunkBytes(c.chunks - (c.pieces - i)), 1
	}
	// Runs hold only whole chunks: the last chunk is among the edge's.
	k := i - coalesceEdge
	n := min(c.run, c.chunks-2*coalesceEdge-k*c.run)
	return int64(n) * c.chunk, n
}

// pump starts every piece that may start now.
func (c *copyState) pump() {
	for k := 0; k < c.n; k++ {
		s := &c.st[k]
		if s.running || s.next >= c.pieces {
			continue
		}
		if s.dma && !c.o.started {
			continue
		}
		if k == 1 && s.next >= c.st[0].done {
			continue
		}
		if k == 0 && c.n == 2 && s.next >= c.st[1].done+c.buffers {
			continue
		}
		s.running = true
		d := s.delay
		if _, n := c.piece(s.next); n > 1 {
			d = satMul(d, Time(n)) // each chunk's delay
		}
		if d > 0 {
			c.o.r.e.after(&s.delayEv, d)
		} else {
			s.Handle()
		}
	}
}

// Handle starts the stage's current piece once its delay has passed.
func (s *stage) Handle() {
	c := s.c
	s.f.uses = s.uses
	s.f.bound = s.bound
	s.f.grp = s.grp
	s.f.base = s.bound
	s.began = c.o.r.e.now
	if s.next == 0 {
		s.first = s.began
	}
	b, _ := c.piece(s.next)
	c.o.r.s.start(&s.f, float64(b))
	s.next++
}

func (s *stage) flowDone(*flow) {
	c := s.c
	s.running = false
	s.done++
	k := 0
	if s == &c.st[1] {
		k = 1
	}
	o := c.o
	if k == c.hostStage {
		c.hostBusy += o.r.e.now - s.began
	}
	if s.done == c.pieces {
		if s.dma && c.n == 2 && o.r.spans {
			// A two-stage copy's DMA stage (a leg of a staged copy, the
			// DMA of a pageable one): when its bytes crossed the links,
			// for traces, which otherwise drew the whole copy on them.
			o.r.res.CopyLegs = append(o.r.res.CopyLegs, CopyLegSpan{Rec: int32(o.rec), Stage: int8(k), Start: s.first, End: o.r.e.now})
		}
		if k == c.n-1 {
			o.finish()
		}
		if k == c.hostStage {
			o.thread.stagingDone(c.hostBusy)
		}
	}
	c.pump()
}
