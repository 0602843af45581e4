package event

import (
	"sync"
	"sync/atomic"
	"time"
)

// DefaultSubscriptionSize is the buffer Subscribe uses when given a size
// below one.
const DefaultSubscriptionSize = 1024

// Bus fans engine events out to subscribers. Publish never blocks: each
// subscriber has a bounded buffer, and when it overflows the oldest events
// are dropped and counted; the subscriber then receives an EvMissed event with
// the count before the next event it does get.
type Bus struct {
	// mu is held while an event is stamped and pushed to every
	// subscriber, so all subscribers see events in sequence order even
	// when many goroutines publish at once. Pushing is a copy into a ring
	// buffer, so holding it is short.
	mu   sync.Mutex
	seq  uint64
	subs map[*Subscription]struct{}
	// nsubs counts the subscriptions to every event (not SubscribeTo's),
	// readable without mu.
	nsubs atomic.Int32
}

// NewBus returns an empty bus.
func NewBus() *Bus {
	return &Bus{subs: map[*Subscription]struct{}{}}
}

// Publish stamps ev with a sequence number and time (if unset) and hands it
// to every subscriber without blocking.
func (b *Bus) Publish(ev Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.seq++
	ev.Seq = b.seq
	if ev.Time.IsZero() {
		ev.Time = time.Now()
	}
	for s := range b.subs {
		if s.types != nil && !s.types[ev.Type] {
			continue
		}
		s.push(ev)
	}
}

// HasSubscribers reports whether anyone is subscribed to every event, so
// that a publisher can skip preparing what only an event would carry. A subscriber arriving
// just after it answered false misses that event, as it would have missed it
// by subscribing a moment later.
func (b *Bus) HasSubscribers() bool { return b.nsubs.Load() > 0 }

// Subscribe returns a subscription with a buffer of size events.
func (b *Bus) Subscribe(size int) *Subscription {
	return b.subscribe(size, 0, nil)
}

// SubscribeTo is Subscribe for the events of the given types only (and
// EvMissed, when some of those were lost). Other events never reach its
// buffer or wake it, and it does not count for HasSubscribers: a component
// that follows, say, which notebooks are open costs the publishers of
// every tool call nothing.
func (b *Bus) SubscribeTo(size int, types ...EventType) *Subscription {
	want := make(map[EventType]bool, len(types))
	for _, t := range types {
		want[t] = true
	}
	return b.subscribe(size, 0, want)
}

// SubscribeBatched is Subscribe for observers that do not need each event
// the moment it happens (the workbench, its feed, recordings): after the
// first event of a quiet spell the subscription waits window before
// handing events over, and C is buffered, so a burst of events costs the
// subscriber one wake-up instead of one per event. The events a tool call
// publishes then wake no thread while the call is still running, which
// matters on a machine with two cores.
func (b *Bus) SubscribeBatched(size int, window time.Duration) *Subscription {
	return b.subscribe(size, window, nil)
}

func (b *Bus) subscribe(size int, window time.Duration, types map[EventType]bool) *Subscription {
	if size < 1 {
		size = DefaultSubscriptionSize
	}
	cbuf := 0
	if window > 0 {
		cbuf = 256
	}
	s := &Subscription{
		bus:      b,
		window:   window,
		types:    types,
		c:        make(chan Event, cbuf),
		ring:     make([]Event, size),
		signal:   make(chan struct{}, 1),
		done:     make(chan struct{}),
		finished: make(chan struct{}),
	}
	b.mu.Lock()
	b.subs[s] = struct{}{}
	b.countLocked()
	b.mu.Unlock()
	go s.deliver()
	return s
}

// countLocked updates nsubs.
func (b *Bus) countLocked() {
	n := 0
	for s := range b.subs {
		if s.types == nil {
			n++
		}
	}
	b.nsubs.Store(int32(n))
}

// Subscription is one subscriber's view of the bus.
//
// Events wait in a ring buffer; a goroutine of the subscription moves them
// to C one at a time, so the publisher only ever touches the buffer.
type Subscription struct {
	bus    *Bus
	c      chan Event
	window time.Duration      // batching delay (SubscribeBatched), 0 = none
	types  map[EventType]bool // SubscribeTo's types; nil = every event

	mu      sync.Mutex
	ring    []Event
	head, n int
	missed  uint64 // total lost
	pending uint64 // lost since the last EvMissed was delivered

	signal    chan struct{} // something was pushed (capacity 1)
	done      chan struct{} // closed by Close and Drain
	finished  chan struct{} // closed when deliver has closed c
	closeOnce sync.Once
	// drain is set by Drain before done is closed: deliver then hands
	// over what the ring still holds before closing c.
	drain atomic.Bool
}

// push adds ev to the ring, dropping the oldest event when it is full.
func (s *Subscription) push(ev Event) {
	s.mu.Lock()
	if s.n == len(s.ring) {
		s.ring[s.head] = Event{}
		s.head = (s.head + 1) % len(s.ring)
		s.n--
		s.missed++
		s.pending++
	}
	s.ring[(s.head+s.n)%len(s.ring)] = ev
	s.n++
	s.mu.Unlock()
	select {
	case s.signal <- struct{}{}:
	default:
	}
}

// next takes the event to deliver next: an EvMissed report when events were
// lost since the last delivery, else the oldest buffered event.
func (s *Subscription) next() (Event, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pending > 0 {
		ev := Event{Type: EvMissed, Time: time.Now(), Missed: s.pending}
		s.pending = 0
		return ev, true
	}
	if s.n == 0 {
		return Event{}, false
	}
	ev := s.ring[s.head]
	s.ring[s.head] = Event{}
	s.head = (s.head + 1) % len(s.ring)
	s.n--
	return ev, true
}

func (s *Subscription) deliver() {
	defer close(s.finished)
	defer close(s.c)
	quiet := true // nothing was pending when deliver last looked
	for {
		if quiet && s.window > 0 && s.pendingEvents() {
			// The first event after a quiet spell: let the rest of the
			// burst gather, then hand it all over in one go.
			if !s.sleep(s.window) {
				s.flush(nil)
				return
			}
		}
		ev, ok := s.next()
		if !ok {
			quiet = true
			select {
			case <-s.signal:
				continue
			case <-s.done:
				s.flush(nil)
				return
			}
		}
		quiet = false
		if !s.send(ev) {
			s.flush(&ev)
			return
		}
	}
}

// flush hands the reader, after a Drain, the event whose sending Drain
// interrupted (if any) and every event still in the ring, waiting for the
// reader as long as it takes. After a Close it does nothing: those events
// are dropped.
func (s *Subscription) flush(unsent *Event) {
	if !s.drain.Load() {
		return
	}
	if unsent != nil {
		s.c <- *unsent
	}
	for {
		ev, ok := s.next()
		if !ok {
			return
		}
		s.c <- ev
	}
}

// pendingEvents reports whether events wait in the ring.
func (s *Subscription) pendingEvents() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n > 0 || s.pending > 0
}

// sleep waits d, reporting false if the subscription closed meanwhile.
func (s *Subscription) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-s.done:
		return false
	}
}

// send hands ev to the reader, reporting false once the subscription is
// closed. While an EvMissed report waits for the reader, further losses are
// added to it, so the reader sees one report per gap.
func (s *Subscription) send(ev Event) bool {
	for {
		var more <-chan struct{}
		if ev.Type == EvMissed && ev.Seq == 0 {
			more = s.signal
		}
		select {
		case s.c <- ev:
			return true
		case <-s.done:
			return false
		case <-more:
			s.mu.Lock()
			ev.Missed += s.pending
			s.pending = 0
			s.mu.Unlock()
			// The pushed events need no new signal: deliver looks at the
			// buffer before it waits again.
		}
	}
}

// C delivers events in order. It is closed by Close. EvMissed events are
// made for this subscriber alone and carry no sequence number.
func (s *Subscription) C() <-chan Event { return s.c }

// Missed is the total number of events this subscriber lost.
func (s *Subscription) Missed() uint64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.missed
}

// Close unsubscribes and closes C. It may be called more than once and
// from any goroutine, including the one reading C; when it returns, C is
// closed. Events still buffered are dropped (see Drain).
func (s *Subscription) Close() {
	s.end(false)
}

// Drain unsubscribes, delivers every event published before it was called
// that C has not yet handed over, then closes C: what a recorder wants when
// the process ends, where Close would drop the last batch. Someone must keep
// reading C until it is closed, so unlike Close it must not be called from
// the goroutine reading C. When it returns, C is closed.
func (s *Subscription) Drain() {
	s.end(true)
}

func (s *Subscription) end(drain bool) {
	s.closeOnce.Do(func() {
		if drain {
			s.drain.Store(true)
		}
		s.bus.mu.Lock()
		delete(s.bus.subs, s)
		s.bus.countLocked()
		s.bus.mu.Unlock()
		close(s.done)
	})
	<-s.finished
}
