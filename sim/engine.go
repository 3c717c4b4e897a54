package sim

import "fmt"

// engine owns the clock and the event queue of one run.
type engine struct {
	q      Queue
	now    Time
	events uint64 // events fired
	err    error  // first fatal error (time overflow)
}

// at schedules ev at absolute time t.
func (e *engine) at(ev *Event, t Time) { e.q.Schedule(ev, t) }

// after schedules ev d after now, recording an error instead of overflowing.
func (e *engine) after(ev *Event, d Time) {
	if d < 0 {
		panic(fmt.Sprintf("sim: negative delay %d", d))
	}
	if d > MaxTime-e.now {
		if e.err == nil {
			e.err = fmt.Errorf("simulated time overflows its range (%s after %s): a duration or size is too large", d, e.now)
		}
		return
	}
	e.q.Schedule(ev, e.now+d)
}

// run fires events in (time, sequence) order until the queue is empty or an
// error is recorded.
func (e *engine) run() {
	for e.err == nil {
		ev := e.q.Pop()
		if ev == nil {
			return
		}
		e.now = ev.at
		e.events++
		ev.h.Handle()
	}
}
