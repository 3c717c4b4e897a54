package sim

// CopyKind says which path a copy took.
type CopyKind uint8

// Copy kinds.
const (
	CopyNone   CopyKind = iota // not a copy
	CopyH2D                    // host to device
	CopyD2H                    // device to host
	CopyD2D                    // within one GPU's memory
	CopyNVLink                 // GPU to GPU, peer-to-peer over NVLink
	CopyP2P                    // GPU to GPU, peer-to-peer over PCIe
	CopyStaged                 // GPU to GPU through a host's pinned memory
)

var copyKindNames = [...]string{"", "h2d", "d2h", "d2d", "nvlink", "pcie-p2p", "host-staged"}

func (k CopyKind) String() string {
	if int(k) < len(copyKindNames) {
		return copyKindNames[k]
	}
	return "?"
}

// CauseKind says what an op was last waiting for before it started.
type CauseKind uint8

// Cause kinds.
const (
	CauseNone      CauseKind = iota // nothing: it started at time zero
	CauseHost                       // its thread reached it (the previous op on the thread released the thread)
	CauseStream                     // the previous op on its stream ended
	CauseEvent                      // the event record it waited on completed
	CauseEngine                     // a copy engine was freed by another copy
	CauseSync                       // (syncs) the last op it waited for ended
	CauseSemaphore                  // (awaits) another thread signalled
	CauseComm                       // (collective parts) the part of its communicator issued before it on its GPU ended
	CauseRank                       // (collective parts) the last of its collective's parts to start, Cause, was issued by its thread
)

var causeNames = [...]string{"none", "host", "stream", "event", "engine", "sync", "semaphore", "comm", "rank"}

func (k CauseKind) String() string {
	if int(k) < len(causeNames) {
		return causeNames[k]
	}
	return "?"
}

// OpRecord is what happened to one op. Times are absolute. Indices are
// 32-bit and the fields are ordered so that a record is 136 bytes, not 208:
// a run writes one per op and the analysis after it reads them all, so at a
// million ops their size is much of the run's memory and time.
type OpRecord struct {
	ID string

	// Call is when the thread reached the op; HostEnd is when the thread went
	// on (after the API overhead for async calls, later for blocking ones).
	Call, HostEnd Time
	// Issued is when the op was handed to the stream (or, for host-side ops,
	// when the thread reached it); Start and End bound its execution.
	Issued, Start, End Time
	// Begin is when the op's work began: Start, except for a collective's
	// part, which starts when it reaches its stream's head but begins when
	// every rank's part has.
	Begin Time

	// Bytes is a copy's size; in a run of the hw backend, also the bytes
	// a kernel it ran as its memory kernel moved (read and written).
	Bytes int64
	Coll  *CollPlan // collectives: the plan

	Thread int32 // index into Program.Threads
	Stream int32 // index into Program.Streams; -1 for ops that are not on a stream
	GPU    int32 // the stream's GPU (or the synced device); -1 if none
	Event  int32 // the event recorded, waited on or synced; -1 if none
	Src    int32 // copies: node read
	Dst    int32 // copies: node written
	Engine int32 // copies: the copy engine of the stream's GPU used; -1 otherwise
	// Sem is the semaphore of a signal or await; -1 otherwise.
	Sem int32
	// Target is, for waits and event syncs, the record of the event record
	// they depended on; -1 if none (the event had not been recorded). For a
	// collective's part, the part of the same communicator issued before it
	// on its GPU, on another stream, when that had not ended; -1 otherwise.
	Target int32
	// StreamSeq is the op's position in its stream's FIFO (0 for the first op
	// issued to it), or -1 for ops not on a stream.
	StreamSeq int32
	// ThreadPrev is the record of the op before this one on the same thread, or -1.
	ThreadPrev int32
	// Cause is the record whose completion let this op start (see CauseKind),
	// or -1.
	Cause int32

	Kind      OpKind
	Copy      CopyKind
	Memory    MemoryKind
	CauseKind CauseKind
	// Unfinished marks an op a deadlock left pending: its End (and its Start,
	// if it never started) are the makespan.
	Unfinished bool
	// MemoryBound is a kernel's Op.MemoryBound.
	MemoryBound bool
}

// GPUStats splits a GPU's time over the run.
type GPUStats struct {
	Name string
	// Compute is the time at least one kernel ran; Comm the time a
	// collective ran (all its ranks in) while no kernel did; Copy the time
	// copies ran on its streams while neither did.
	Compute, Comm, Copy Time
	// Idle time, split by what the GPU was waiting for:
	// IdleHost: no work had been issued yet (launch overhead, host work, syncs);
	// IdleData: issued work waited on copies (or a copy engine);
	// IdleGPU: issued work waited on another GPU (including a collective
	// waiting for its other ranks);
	// IdleInput: the thread feeding it waited for input batches (an await
	// on an input semaphore, such as a data loader's);
	// IdleDone: the GPU had finished everything it was given.
	IdleHost, IdleData, IdleGPU, IdleInput, IdleDone Time
	// Kernels, Copies and Collectives count the ops run.
	Kernels, Copies, Collectives int
	// EngineBusy is the busy time of each copy engine.
	EngineBusy []Time
}

// Idle returns the GPU's total idle time.
func (g GPUStats) Idle() Time { return g.IdleHost + g.IdleData + g.IdleGPU + g.IdleInput + g.IdleDone }

// ResourceStats is the use of one shared capacity over the run.
type ResourceStats struct {
	Name     string
	Capacity float64 // units per second
	Used     float64 // units carried (bytes for links and memories)
	Busy     Time    // time with any load
	Peak     float64 // largest load, units per second
	Series   []LoadPoint
}

// Utilization returns Used over what the capacity could carry in span.
func (r ResourceStats) Utilization(span Time) float64 {
	if span <= 0 || r.Capacity <= 0 {
		return 0
	}
	return r.Used / float64(r.Capacity*span.Seconds())
}

// LinkStats is the traffic of one direction of a link, or (Both) of a
// link's joint limit on both directions (duplex_bandwidth): the bytes of
// both directions against that limit.
type LinkStats struct {
	Link    int
	Reverse bool // direction B to A
	Both    bool // both directions together; Reverse is false
	// Bytes is what crossed it, protocol overhead (LL's flags) included.
	// ResourceStats.Used is its load in the link's copy-engine units:
	// more than Bytes where kernel-driven transfers, which reach only
	// SMBandwidth, crossed it (Bandwidth/SMBandwidth of their bytes each),
	// and where a collective's efficiency took capacity (CollTask.Crossing).
	Bytes float64
	ResourceStats
}

// LinkName names what l measures: "NAME a->b" for a direction, "NAME
// a<->b both ways" for a joint limit.
func (l LinkStats) LinkName(m *Machine) string {
	if l.Both {
		lk := m.Links[l.Link]
		return lk.Name + " " + m.Nodes[lk.A].Name + "<->" + m.Nodes[lk.B].Name + " both ways"
	}
	return linkDirName(m, Hop{Link: l.Link, Reverse: l.Reverse})
}

// Bound reports whether l matters on its own: a direction always does; a
// joint limit on both directions only where it bound, both directions
// together reaching it at some moment, more than one direction carries
// alone. Elsewhere it repeats its directions' bytes, and summaries leave
// it out.
func (l LinkStats) Bound(m *Machine) bool {
	return !l.Both || l.Peak >= l.Capacity*(1-1e-9) && l.Peak > m.Links[l.Link].Bandwidth*(1+1e-9)
}

// CollLinkSpan is the time a collective's transfers used a link direction:
// from the start of the first to the end of the last that crossed it.
type CollLinkSpan struct {
	Rec int32 // the record of the collective's first part
	// Dir is the link direction: 2*link, +1 from B to A.
	Dir        int32
	Start, End Time
}

// CopyLegSpan is when one DMA stage of a two-stage copy moved its bytes.
type CopyLegSpan struct {
	Rec int32 // the copy's record
	// Stage is 0 for the first stage (to the host, of a staged copy), 1
	// for the second (from the host).
	Stage      int8
	Start, End Time
}

// ThreadStats is the time of one host thread.
type ThreadStats struct {
	Name string
	// CPU is the time the thread spent in API overheads, host work and the
	// memcpys of pageable copies (wall time, including slowdowns from
	// sharing cores).
	CPU Time
	// Blocked is the time spent in syncs, awaits, and pageable copies
	// waiting for a staging buffer.
	Blocked Time
	// End is when the thread finished its last op.
	End Time
}

// PathPart says which part of an op a critical-path step is.
type PathPart uint8

// Parts of an op on the critical path.
const (
	PartOp      PathPart = iota // its execution (for host ops, the host work)
	PartAPI                     // the API overhead of the call
	PartStaging                 // a pageable copy's call after its issue: staging
)

func (p PathPart) String() string {
	switch p {
	case PartAPI:
		return "api"
	case PartStaging:
		return "staging"
	}
	return "op"
}

// PathStep is one element of the critical path: Part of Record contributed
// Time to the makespan.
type PathStep struct {
	Record int
	Part   PathPart
	Time   Time
}

// Result is the outcome of a run.
type Result struct {
	Machine  *Machine
	Program  *Program
	Makespan Time
	Ops      []OpRecord
	Threads  []ThreadStats
	GPUs     []GPUStats
	// Links has one entry per link direction, in link order.
	Links []LinkStats
	// CollLinks says, for each collective that ran and each link direction
	// its transfers crossed, when they first and last moved bytes there
	// (for traces; recorded only when Options.CollLinks asks).
	CollLinks []CollLinkSpan
	// CopyLegs says, for each two-stage copy (host-staged, or pageable)
	// and each of its DMA stages, when that stage's bytes flowed: from its
	// first chunk's start to its last chunk's end (for traces; recorded
	// only when Options.CollLinks asks).
	CopyLegs []CopyLegSpan
	// HostMemory has one entry per host; GPUMemory per GPU (device-local copies).
	HostMemory []ResourceStats
	GPUMemory  []ResourceStats
	// CriticalPath runs from the start of the run to the op that ended last.
	CriticalPath []PathStep
	// Warnings, in the order they arose.
	Warnings []string
	// Events is the number of events the engine fired; Solves the number of
	// flow-model re-solves.
	Events, Solves uint64
}
