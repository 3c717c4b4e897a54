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

type stage struct {
	c       *copyState
	uses    []use
	bound   float64
	grp     *group // the host cores, for memcpy stages
	delay   Time
	dma     bool // a DMA stage: needs the op started on its stream
	next    int  // next chunk to start
	done    int  // chunks finished
	running bool
	began   Time // when the current chunk's bytes began to flow
	f       flow
	delayEv Event
}

type copyState struct {
	o         *opState
	st        [2]stage
	n         int // number of stages
	chunks    int
	chunk     int64
	bytes     int64
	buffers   int
	hostStage int // index of the host memcpy stage, or -1
	// hostBusy is how long the host memcpy stage's chunks ran: CPU time of
	// the thread, which stays in the call until the stage ends.
	hostBusy Time
}

func newCopy(o *opState) *copyState {
	r := o.r
	m := r.m
	op := o.op
	g := &m.GPUs[o.stream.gpu.idx]
	c := &copyState{o: o, bytes: op.Bytes, hostStage: -1, chunks: 1, chunk: op.Bytes, buffers: 1}
	rec := o.record()
	linkUses := func(rt Route) []use {
		var us []use
		for _, h := range rt.Hops {
			i := 2 * h.Link
			if h.Reverse {
				i++
			}
			us = append(us, use{res: int32(i), coef: 1})
		}
		return us
	}
	dma := func(rt Route, host int) stage {
		us := linkUses(rt)
		if host >= 0 {
			us = append(us, use{res: int32(r.hosts[host].memRes), coef: 1})
		}
		return stage{uses: us, bound: inf, delay: satAdd(g.CopyOverhead, rt.Latency(m)), dma: true}
	}
	memcpy := func(host int, rate float64) stage {
		// The thread's memcpy reads and writes each byte of host memory and
		// keeps one core busy: it shares the cores with other CPU work.
		h := m.Hosts[host]
		if rate == 0 {
			rate = h.MemcpyBandwidth
		}
		return stage{uses: []use{{res: int32(r.hosts[host].memRes), coef: 2}}, bound: rate, grp: &r.hosts[host].cpu}
	}
	src, dst := m.Nodes[op.Src], m.Nodes[op.Dst]
	staging := -1 // host whose staging chunk size applies
	switch {
	case src.Kind == NodeHost:
		rec.Copy = CopyH2D
		rt := r.route(op.Src, op.Dst)
		if op.Memory == Pageable {
			c.st[0], c.st[1] = memcpy(src.Index, m.Hosts[src.Index].PageableH2D), dma(rt, src.Index)
			c.n, c.hostStage, staging = 2, 0, src.Index
		} else {
			c.st[0], c.n = dma(rt, src.Index), 1
		}
	case dst.Kind == NodeHost:
		rec.Copy = CopyD2H
		rt := r.route(op.Src, op.Dst)
		if op.Memory == Pageable {
			c.st[0], c.st[1] = dma(rt, dst.Index), memcpy(dst.Index, m.Hosts[dst.Index].PageableD2H)
			c.n, c.hostStage, staging = 2, 1, dst.Index
		} else {
			c.st[0], c.n = dma(rt, dst.Index), 1
		}
	default:
		p := r.path(src.Index, dst.Index)
		if op.NoPeerAccess && (p.Kind == PathNVLink || p.Kind == PathP2P) {
			p = m.stagedPath(r.trees, src.Index, dst.Index)
		}
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
			c.st[0], c.n = dma(p.Route, -1), 1
		case PathStaged:
			rec.Copy = CopyStaged
			c.st[0], c.st[1] = dma(p.ToHost, p.Host), dma(p.FromHost, p.Host)
			c.st[1].delay = satAdd(c.st[1].delay, m.Hosts[p.Host].StagingHandoff)
			c.n, staging = 2, p.Host
		}
	}
	if staging >= 0 {
		h := m.Hosts[staging]
		c.chunk = h.StagingChunk
		c.buffers = h.StagingBuffers
		c.chunks = int((c.bytes + c.chunk - 1) / c.chunk)
		if c.chunks < 1 {
			c.chunks = 1
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

func (c *copyState) chunkBytes(i int) int64 {
	if c.chunks == 1 {
		return c.bytes
	}
	if rest := c.bytes - int64(i)*c.chunk; rest < c.chunk {
		return rest
	}
	return c.chunk
}

// pump starts every chunk that may start now.
func (c *copyState) pump() {
	for k := 0; k < c.n; k++ {
		s := &c.st[k]
		if s.running || s.next >= c.chunks {
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
		if s.delay > 0 {
			c.o.r.e.after(&s.delayEv, s.delay)
		} else {
			s.Handle()
		}
	}
}

// Handle starts the stage's current chunk once its delay has passed.
func (s *stage) Handle() {
	c := s.c
	s.f.uses = s.uses
	s.f.bound = s.bound
	s.f.grp = s.grp
	s.f.base = s.bound
	s.began = c.o.r.e.now
	c.o.r.s.start(&s.f, float64(c.chunkBytes(s.next)))
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
	if s.done == c.chunks {
		if k == c.n-1 {
			o.finish()
		}
		if k == c.hostStage {
			o.thread.stagingDone(c.hostBusy)
		}
	}
	c.pump()
}
