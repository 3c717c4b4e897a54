package sim

// Event is one entry of the event queue. An Event value is owned by whoever
// schedules it and can be rescheduled or cancelled while queued, so objects that
// fire repeatedly (a flow's completion, a thread's next step) reuse one Event and
// the steady state allocates nothing.
type Event struct {
	at   Time
	slot int32 // the queue's slot for it while queued; -1 otherwise
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
func (e *Event) Queued() bool { return e.slot >= 0 }

// At returns the time e is (or was last) scheduled for.
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
type Queue struct {
	h     []entry
	slots []*Event // the event in each slot, nil when free
	pos   []int32  // each slot's position in h
	free  []int32  // free slots
	seq   uint64
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
func (q *Queue) Len() int { return len(q.h) }

// Schedule queues e to fire at time at. If e is already queued it is moved,
// and it takes a fresh sequence number as if newly scheduled.
func (q *Queue) Schedule(e *Event, at Time) {
	q.seq++
	e.at = at
	if e.slot >= 0 {
		i := int(q.pos[e.slot])
		x := q.h[i]
		x.at, x.seq = at, q.seq
		q.fix(i, x)
		return
	}
	var s int32
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

// Cancel removes e from the queue if it is queued.
func (q *Queue) Cancel(e *Event) {
	if e.slot < 0 {
		return
	}
	q.removeAt(int(q.pos[e.slot]))
}

// Pop removes and returns the earliest event, or nil when the queue is empty.
func (q *Queue) Pop() *Event {
	if len(q.h) == 0 {
		return nil
	}
	return q.removeAt(0)
}

// Peek returns the earliest event without removing it, or nil.
func (q *Queue) Peek() *Event {
	if len(q.h) == 0 {
		return nil
	}
	return q.slots[q.h[0].slot]
}

// removeAt takes the entry at position i out of the heap and frees its slot.
func (q *Queue) removeAt(i int) *Event {
	s := q.h[i].slot
	n := len(q.h) - 1
	last := q.h[n]
	q.h = q.h[:n]
	if i != n {
		q.fix(i, last)
	}
	e := q.slots[s]
	q.slots[s] = nil
	q.free = append(q.free, s)
	e.slot = -1
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
