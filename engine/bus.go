package engine

// Bus fans engine events out to subscribers. Publish never blocks: each
// subscriber has a bounded buffer, and when it overflows the oldest events
// are dropped and counted; the subscriber then receives an EvMissed event with
// the count before the next event it does get.
type Bus struct {
	// implemented in the foundation issue
}

// NewBus returns an empty bus.
func NewBus() *Bus { panic("unimplemented") }

// Publish stamps ev with a sequence number and time (if unset) and hands it
// to every subscriber without blocking.
func (b *Bus) Publish(ev Event) { panic("unimplemented") }

// Subscribe returns a subscription with a buffer of size events.
func (b *Bus) Subscribe(size int) *Subscription { panic("unimplemented") }

// Subscription is one subscriber's view of the bus.
type Subscription struct{}

// C delivers events in order. It is closed by Close.
func (s *Subscription) C() <-chan Event { panic("unimplemented") }

// Missed is the total number of events this subscriber lost.
func (s *Subscription) Missed() uint64 { panic("unimplemented") }

// Close unsubscribes and closes C.
func (s *Subscription) Close() { panic("unimplemented") }
