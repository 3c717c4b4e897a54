package sim

// Event is one entry of the event queue. An Event value is owned by whoever
// schedules it and can be rescheduled or cancelled while queued, so objects that
// fire repeatedly (a flow's completion, a thread's next step) reuse one Event and
// the steady state allocates nothing.
type Event struct {
	at Time
	// slot is where it waits: its slot in the queue's heap when >= 0, the
	// FIFO's entry -2-slot when <= -2; -1 when not queued.
	slot int32
	h    Handler
}

// Handler is what an Event calls when it comes due.
type Handler interface {
	// Handle runs the event's action at its time.
	Handle()
}

// NewEvent returns an unqueued event that calls h.Handle when it comes due.
func NewEvent(h Handler) *Event { return &Event{slot: -1, h: h} }

// Init makes e an unqueued event for h, for events embedded in other structs.
func (e *Event) Init(h Handler) { *e = Event{slot: -1, h: h} }

// Queued reports whether e is waiting in a queue.
func (e *Event) Queued() bool { return e.slot != -1 }

// At returns the time e is (or was last) scheduled for. (Within package
// sim the solver re-times its flows' completions with Queue.move, which
// leaves At behind until the event fires or is cancelled.)
func (e *Event) At() Time { return e.at }

// Queue is a binary min-heap of events ordered by (time, sequence number), the
// sequence number being assigned when an event is scheduled: among events due at
// the same time, the one scheduled first fires first. Push, Pop, reschedule and
// cancel cost O(log n). The counter belongs to the queue, not to a global.
//
// The heap holds keys and slot numbers, no pointers: sifting compares keys
// in place and moves them without the garbage collector's write barriers
// (which cost a quarter of the engine's time when the heap held *Event).
// A queued event occupies a slot, which holds its pointer and its position
// in the heap.
//
// Most events of a simulation are scheduled for the time of the event being
// handled (a stream or a thread woken up, a solve). Those wait in a FIFO
// beside the heap instead: they come after every queued event of that time,
// in the order they were scheduled, so pushing and popping them is O(1).
// Pop takes the smaller of the FIFO's head and the heap's top. The FIFO
// holds the events themselves, each of which knows its entry: pushing and
// popping there takes no slot (a third of the engine's queue instructions
// went to taking and freeing slots for FIFO events).
type Queue struct {
	h     []entry
	slots []*Event // the event in each heap slot, nil when free
	pos   []int32  // each heap slot's position in h
	free  []int32  // free slots
	seq   uint64
	// fifo holds, from fhead on, events scheduled for time fat (that of
	// the latest pop) after it was popped; a cancelled or re-timed one
	// leaves a nil event. live counts the others.
	fifo    []fifoEntry
	fat     Time
	fhead   int
	live    int
	now     Time
	started bool
}

type fifoEntry struct {
	e   *Event
	seq uint64
}

type entry struct {
	at   Time
	seq  uint64
	slot int32
}

func (a entry) less(b entry) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// Len returns the number of queued events.
func (q *Queue) Len() int { return len(q.h) + q.live }

// Schedule queues e to fire at time at. If e is already queued it is moved,
// and it takes a fresh sequence number as if newly scheduled.
func (q *Queue) Schedule(e *Event, at Time) {
	q.seq++
	e.at = at
	s := e.slot
	if s >= 0 {
		i := int(q.pos[s])
		x := q.h[i]
		x.at, x.seq = at, q.seq
		q.fix(i, x)
		return
	}
	if s != -1 {
		// In the FIFO: leave a hole there and queue it anew.
		q.fifo[-2-s].e = nil
		q.live--
	}
	// The FIFO holds one time only: an event popped from the heap before
	// it had emptied (one scheduled in the past) leaves it as it was.
	if q.started && at == q.now && (q.live == 0 || q.fat == at) {
		e.slot = int32(-2 - len(q.fifo))
		q.fifo = append(q.fifo, fifoEntry{e, q.seq})
		q.fat = at
		q.live++
		return
	}
	if n := len(q.free); n > 0 {
		s = q.free[n-1]
		q.free = q.free[:n-1]
	} else {
		s = int32(len(q.slots))
		q.slots = append(q.slots, nil)
		q.pos = append(q.pos, 0)
	}
	q.slots[s] = e
	e.slot = s
	q.h = append(q.h, entry{})
	q.up(len(q.h)-1, entry{at, q.seq, s})
}

// move re-times the event queued in heap slot qs to at, as Schedule
// would: a caller that keeps the slot number of its event re-times it
// without touching the event, whose time is brought up to date when it
// leaves the heap (removeAt). A store of the time into each event, inside
// its owner's state, was 40% of the misses of a 2 MiB cache on a large
// flow case.
func (q *Queue) move(qs int32, at Time) {
	i := int(q.pos[qs])
	q.seq++
	x := q.h[i]
	x.at, x.seq = at, q.seq
	q.fix(i, x)
}

// Cancel removes e from the queue if it is queued.
func (q *Queue) Cancel(e *Event) {
	s := e.slot
	if s == -1 {
		return
	}
	if s >= 0 {
		q.removeAt(int(q.pos[s]))
		return
	}
	q.fifo[-2-s].e = nil
	q.live--
	e.slot = -1
}

// Pop removes and returns the earliest event, or nil when the queue is empty.
func (q *Queue) Pop() *Event {
	var e *Event
	if q.fifoFirst() {
		e = q.fifo[q.fhead].e
		q.fhead++
		q.live--
		e.slot = -1
		if q.fhead > 256 && 2*q.fhead > len(q.fifo) {
			// Events that keep scheduling others for the same time would
			// grow the FIFO without end: move what is left to its front.
			n := copy(q.fifo, q.fifo[q.fhead:])
			q.fifo, q.fhead = q.fifo[:n], 0
			for i, y := range q.fifo {
				if y.e != nil {
					y.e.slot = int32(-2 - i)
				}
			}
		}
	} else if len(q.h) > 0 {
		e = q.removeAt(0)
	} else {
		return nil
	}
	q.now, q.started = e.at, true
	return e
}

// Peek returns the earliest event without removing it, or nil.
func (q *Queue) Peek() *Event {
	if q.fifoFirst() {
		return q.fifo[q.fhead].e
	}
	if len(q.h) == 0 {
		return nil
	}
	return q.slots[q.h[0].slot]
}

// fifoFirst drops the FIFO's cancelled head entries and reports whether
// its head comes before the heap's top.
func (q *Queue) fifoFirst() bool {
	if q.live == 0 {
		if len(q.fifo) > 0 {
			q.fifo, q.fhead = q.fifo[:0], 0
		}
		return false
	}
	for q.fifo[q.fhead].e == nil {
		q.fhead++
	}
	if len(q.h) == 0 {
		return true
	}
	top := &q.h[0]
	return q.fat < top.at || q.fat == top.at && q.fifo[q.fhead].seq < top.seq
}

// release frees slot s of a dequeued event.
func (q *Queue) release(s int32) {
	q.slots[s].slot = -1
	q.slots[s] = nil
	q.free = append(q.free, s)
}

// removeAt takes the entry at position i out of the heap and frees its slot.
func (q *Queue) removeAt(i int) *Event {
	s, at := q.h[i].slot, q.h[i].at
	n := len(q.h) - 1
	last := q.h[n]
	q.h = q.h[:n]
	if i != n {
		q.fix(i, last)
	}
	e := q.slots[s]
	e.at = at
	q.release(s)
	return e
}

// fix places x, whose key may have changed, at or from position i.
func (q *Queue) fix(i int, x entry) {
	if i > 0 && x.less(q.h[(i-1)/2]) {
		q.up(i, x)
	} else {
		q.down(i, x)
	}
}

// up places x at the hole at position j or above it.
func (q *Queue) up(j int, x entry) {
	for j > 0 {
		i := (j - 1) / 2
		if !x.less(q.h[i]) {
			break
		}
		q.h[j] = q.h[i]
		q.pos[q.h[j].slot] = int32(j)
		j = i
	}
	q.h[j] = x
	q.pos[x.slot] = int32(j)
}

// down places x at the hole at position i or below it.
func (q *Queue) down(i int, x entry) {
	n := len(q.h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && q.h[r].less(q.h[l]) {
			j = r
		}
		if !q.h[j].less(x) {
			break
		}
		q.h[i] = q.h[j]
		q.pos[q.h[i].slot] = int32(i)
		i = j
	}
	q.h[i] = x
	q.pos[x.slot] = int32(i)
}
