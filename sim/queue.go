package sim

// Event is one entry of the event queue. An Event value is owned by whoever
// schedules it and can be rescheduled or cancelled while queued, so objects that
// fire repeatedly (a flow's completion, a thread's next step) reuse one Event and
// the steady state allocates nothing.
type Event struct {
	at    Time
	seq   uint64
	index int // position in the heap; -1 when not queued
	h     Handler
}

// Handler is what an Event calls when it comes due.
type Handler interface {
	// Handle runs the event's action at its time.
	Handle()
}

// NewEvent returns an unqueued event that calls h.Handle when it comes due.
func NewEvent(h Handler) *Event { return &Event{index: -1, h: h} }

// Init makes e an unqueued event for h, for events embedded in other structs.
func (e *Event) Init(h Handler) { *e = Event{index: -1, h: h} }

// Queued reports whether e is waiting in a queue.
func (e *Event) Queued() bool { return e.index >= 0 }

// At returns the time e is (or was last) scheduled for.
func (e *Event) At() Time { return e.at }

// Queue is a binary min-heap of events ordered by (time, sequence number), the
// sequence number being assigned when an event is scheduled: among events due at
// the same time, the one scheduled first fires first. Push, Pop, reschedule and
// cancel cost O(log n). The counter belongs to the queue, not to a global.
type Queue struct {
	h   []*Event
	seq uint64
}

// Len returns the number of queued events.
func (q *Queue) Len() int { return len(q.h) }

// Schedule queues e to fire at time at. If e is already queued it is moved,
// and it takes a fresh sequence number as if newly scheduled.
func (q *Queue) Schedule(e *Event, at Time) {
	q.seq++
	e.at, e.seq = at, q.seq
	if e.index >= 0 {
		q.fix(e.index)
		return
	}
	e.index = len(q.h)
	q.h = append(q.h, e)
	q.up(e.index)
}

// Cancel removes e from the queue if it is queued.
func (q *Queue) Cancel(e *Event) {
	i := e.index
	if i < 0 {
		return
	}
	n := len(q.h) - 1
	if i != n {
		q.swap(i, n)
	}
	q.h[n] = nil
	q.h = q.h[:n]
	e.index = -1
	if i != n {
		q.fix(i)
	}
}

// Pop removes and returns the earliest event, or nil when the queue is empty.
func (q *Queue) Pop() *Event {
	if len(q.h) == 0 {
		return nil
	}
	e := q.h[0]
	q.Cancel(e)
	return e
}

// Peek returns the earliest event without removing it, or nil.
func (q *Queue) Peek() *Event {
	if len(q.h) == 0 {
		return nil
	}
	return q.h[0]
}

func (q *Queue) less(i, j int) bool {
	a, b := q.h[i], q.h[j]
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func (q *Queue) swap(i, j int) {
	q.h[i], q.h[j] = q.h[j], q.h[i]
	q.h[i].index = i
	q.h[j].index = j
}

func (q *Queue) fix(i int) {
	if !q.down(i) {
		q.up(i)
	}
}

func (q *Queue) up(j int) {
	for j > 0 {
		i := (j - 1) / 2
		if !q.less(j, i) {
			break
		}
		q.swap(i, j)
		j = i
	}
}

func (q *Queue) down(i0 int) bool {
	i, n := i0, len(q.h)
	for {
		l := 2*i + 1
		if l >= n {
			break
		}
		j := l
		if r := l + 1; r < n && q.less(r, l) {
			j = r
		}
		if !q.less(j, i) {
			break
		}
		q.swap(i, j)
		i = j
	}
	return i > i0
}
