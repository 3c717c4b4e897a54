package sim

import (
	"math/rand/v2"
	"testing"
)

type rec struct {
	log *[]int
	id  int
}

func (r rec) Handle() { *r.log = append(*r.log, r.id) }

// TestQueueOrdersByTimeThenScheduling pins the total order of events: time
// first, then the order in which they were scheduled; rescheduling counts as
// scheduling anew.
func TestQueueOrdersByTimeThenScheduling(t *testing.T) {
	var q Queue
	var log []int
	evs := make([]*Event, 6)
	for i := range evs {
		evs[i] = NewEvent(rec{&log, i})
	}
	q.Schedule(evs[0], 10)
	q.Schedule(evs[1], 5)
	q.Schedule(evs[2], 10)
	q.Schedule(evs[3], 5)
	q.Schedule(evs[4], 7)
	q.Schedule(evs[5], 10)
	q.Schedule(evs[0], 10) // moved behind 2 and 5
	q.Cancel(evs[4])
	for e := q.Pop(); e != nil; e = q.Pop() {
		e.h.Handle()
	}
	want := []int{1, 3, 2, 5, 0}
	if len(log) != len(want) {
		t.Fatalf("fired %v, want %v", log, want)
	}
	for i := range want {
		if log[i] != want[i] {
			t.Fatalf("fired %v, want %v", log, want)
		}
	}
	if evs[4].Queued() {
		t.Error("cancelled event still queued")
	}
}

// TestQueueMatchesAReferenceOrder drives the queue with random schedules
// (some in the past, many at the time of the latest pop, which go to the
// FIFO), reschedules, cancels and pops and checks every pop, Peek, Len and Queued
// against a plain list kept in (time, scheduling order).
func TestQueueMatchesAReferenceOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 3))
	var q Queue
	var log []int
	const n = 40
	evs := make([]*Event, n)
	for i := range evs {
		evs[i] = NewEvent(rec{&log, i})
	}
	type ref struct {
		id  int
		at  Time
		seq int
	}
	var want []ref // queued events, in no order
	seq := 0
	var lastPop Time
	find := func(id int) int {
		for k, x := range want {
			if x.id == id {
				return k
			}
		}
		return -1
	}
	first := func() int {
		best := -1
		for k, x := range want {
			if best < 0 || x.at < want[best].at || (x.at == want[best].at && x.seq < want[best].seq) {
				best = k
			}
		}
		return best
	}
	for step := 0; step < 20000; step++ {
		switch op := r.IntN(10); {
		case op < 5: // schedule or reschedule, often for the time of the latest pop
			id, at := r.IntN(n), Time(r.IntN(50))
			if r.IntN(5) < 2 {
				at = lastPop
			}
			q.Schedule(evs[id], at)
			seq++
			if k := find(id); k >= 0 {
				want[k] = ref{id, at, seq}
			} else {
				want = append(want, ref{id, at, seq})
			}
		case op < 7: // cancel
			id := r.IntN(n)
			q.Cancel(evs[id])
			if k := find(id); k >= 0 {
				want = append(want[:k], want[k+1:]...)
			}
		default: // pop
			e := q.Pop()
			k := first()
			if k < 0 {
				if e != nil {
					t.Fatalf("step %d: popped an event from an empty queue", step)
				}
				continue
			}
			if e != evs[want[k].id] || e.At() != want[k].at {
				t.Fatalf("step %d: popped %v at %v, want event %d at %v", step, e.h, e.At(), want[k].id, want[k].at)
			}
			want = append(want[:k], want[k+1:]...)
			lastPop = e.At()
		}
		if q.Len() != len(want) {
			t.Fatalf("step %d: %d queued, want %d", step, q.Len(), len(want))
		}
		if k := first(); k >= 0 && q.Peek() != evs[want[k].id] {
			t.Fatalf("step %d: peek is not the earliest event", step)
		}
		for id, e := range evs {
			if e.Queued() != (find(id) >= 0) {
				t.Fatalf("step %d: event %d queued %v", step, id, e.Queued())
			}
		}
	}
}

// TestQueueFIFOStaysSmall: two events that keep rescheduling each other for
// the same time leave the FIFO's storage bounded.
func TestQueueFIFOStaysSmall(t *testing.T) {
	var q Queue
	var log []int
	a, b := NewEvent(rec{&log, 0}), NewEvent(rec{&log, 1})
	q.Schedule(a, 5)
	q.Pop()
	q.Schedule(a, 5)
	q.Schedule(b, 5)
	for i := 0; i < 100000; i++ {
		e := q.Pop()
		if e == nil || e.At() != 5 {
			t.Fatalf("pop %d: %v", i, e)
		}
		q.Schedule(e, 5)
	}
	if q.Len() != 2 || cap(q.fifo) > 1024 {
		t.Errorf("%d queued, FIFO storage %d entries; want 2 and at most 1024", q.Len(), cap(q.fifo))
	}
	// They still alternate.
	first := q.Pop()
	if second := q.Pop(); first == second || second == nil {
		t.Error("the two events do not alternate")
	}
}
