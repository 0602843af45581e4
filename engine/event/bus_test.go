package event

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

// recv reads one event or fails after a generous wait.
func recv(t *testing.T, s *Subscription) Event {
	t.Helper()
	select {
	case ev, ok := <-s.C():
		if !ok {
			t.Fatal("subscription closed")
		}
		return ev
	case <-time.After(5 * time.Second):
		t.Fatal("no event within 5s")
	}
	return Event{}
}

func TestBusStampsAndOrders(t *testing.T) {
	t.Parallel()
	b := NewBus()
	s := b.Subscribe(100)
	defer s.Close()
	at := time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)
	b.Publish(Event{Type: EvKernelStatus, Seq: 77})
	b.Publish(Event{Type: EvSessionOpened, Time: at})
	for i := 0; i < 50; i++ {
		b.Publish(Event{Type: EvCallProgress})
	}
	first := recv(t, s)
	if first.Seq != 1 || first.Type != EvKernelStatus || first.Time.IsZero() {
		t.Errorf("first event = %+v, want seq 1 (the bus owns Seq) with a time", first)
	}
	second := recv(t, s)
	if second.Seq != 2 || !second.Time.Equal(at) {
		t.Errorf("second event = %+v, want seq 2 keeping its time", second)
	}
	for want := uint64(3); want <= 52; want++ {
		if ev := recv(t, s); ev.Seq != want {
			t.Fatalf("seq %d, want %d", ev.Seq, want)
		}
	}
	if s.Missed() != 0 {
		t.Errorf("missed %d with a reader keeping up", s.Missed())
	}
}

func TestBusSlowSubscriberDoesNotBlock(t *testing.T) {
	t.Parallel()
	b := NewBus()
	slow := b.Subscribe(4)
	defer slow.Close()
	fast := b.Subscribe(20000)
	defer fast.Close()

	const total = 10000
	done := make(chan struct{})
	go func() {
		for i := 0; i < total; i++ {
			b.Publish(Event{Type: EvExecOutput})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Publish blocked on a subscriber that never reads")
	}

	// The fast subscriber lost nothing.
	for want := uint64(1); want <= total; want++ {
		if ev := recv(t, fast); ev.Seq != want || ev.Type != EvExecOutput {
			t.Fatalf("fast subscriber got %+v, want seq %d", ev, want)
		}
	}

	// The slow one gets what its buffer kept, and every gap is announced
	// by an EvMissed carrying exactly the number of events in the gap.
	var delivered, reported, last uint64
	var gap uint64
	for last < total {
		ev := recv(t, slow)
		if ev.Type == EvMissed {
			if ev.Missed == 0 || gap != 0 {
				t.Fatalf("bad EvMissed %+v (pending gap %d)", ev, gap)
			}
			gap = ev.Missed
			reported += ev.Missed
			continue
		}
		if ev.Seq != last+1+gap {
			t.Fatalf("seq %d after %d with %d reported missing", ev.Seq, last, gap)
		}
		last, gap = ev.Seq, 0
		delivered++
	}
	if reported != slow.Missed() || delivered+reported != total {
		t.Errorf("delivered %d + reported %d != %d, Missed() = %d", delivered, reported, total, slow.Missed())
	}
	if slow.Missed() == 0 {
		t.Errorf("a 4-event buffer lost nothing of %d events", total)
	}
}

func TestBusManyPublishers(t *testing.T) {
	t.Parallel()
	b := NewBus()
	const pubs, each = 8, 500
	s := b.Subscribe(pubs * each)
	defer s.Close()
	var wg sync.WaitGroup
	for p := 0; p < pubs; p++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < each; i++ {
				b.Publish(Event{Type: EvExecOutput, Exec: &ExecEvent{ID: string(rune('a' + p)), Elapsed: time.Duration(i)}})
			}
		}()
	}
	wg.Wait()
	next := map[string]time.Duration{}
	for want := uint64(1); want <= pubs*each; want++ {
		ev := recv(t, s)
		if ev.Seq != want {
			t.Fatalf("seq %d, want %d", ev.Seq, want)
		}
		if ev.Exec.Elapsed != next[ev.Exec.ID] {
			t.Fatalf("publisher %s: event %d arrived when %d was due", ev.Exec.ID, ev.Exec.Elapsed, next[ev.Exec.ID])
		}
		next[ev.Exec.ID]++
	}
	if s.Missed() != 0 {
		t.Errorf("missed %d", s.Missed())
	}
}

func TestBusClose(t *testing.T) {
	t.Parallel()
	b := NewBus()
	s := b.Subscribe(2)
	other := b.Subscribe(2)
	defer other.Close()
	b.Publish(Event{Type: EvKernelStatus}) // the delivery goroutine blocks sending it
	s.Close()
	s.Close() // idempotent
	for range s.C() {
		t.Error("an event arrived after Close returned")
	}
	b.Publish(Event{Type: EvKernelStatus}) // no panic publishing after a Close
	if ev := recv(t, other); ev.Seq != 1 {
		t.Errorf("other subscriber got %+v", ev)
	}

	// Closing from the reading goroutine itself must not deadlock.
	r := b.Subscribe(1)
	b.Publish(Event{Type: EvKernelStatus})
	closed := make(chan struct{})
	go func() {
		for range r.C() {
			r.Close()
		}
		close(closed)
	}()
	select {
	case <-closed:
	case <-time.After(5 * time.Second):
		t.Fatal("Close from the reader deadlocked")
	}
}

func TestSubscribeBatchedDeliversEverythingInOrder(t *testing.T) {
	t.Parallel()
	b := NewBus()
	s := b.SubscribeBatched(64, 20*time.Millisecond)
	defer s.Close()
	start := time.Now()
	for i := 0; i < 10; i++ {
		b.Publish(Event{Type: EvKernelStatus, Kernel: &KernelEvent{ID: "k", State: fmt.Sprint(i)}})
	}
	for i := 0; i < 10; i++ {
		select {
		case ev := <-s.C():
			if ev.Kernel.State != fmt.Sprint(i) {
				t.Fatalf("event %d is %q", i, ev.Kernel.State)
			}
			if i == 0 && time.Since(start) < 15*time.Millisecond {
				t.Fatalf("the first event came after %v, before the batching window", time.Since(start))
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("event %d never came", i)
		}
	}
	// Close ends C even while it waits out a window.
	b.Publish(Event{Type: EvKernelStatus, Kernel: &KernelEvent{ID: "k"}})
	s.Close()
	for range s.C() {
	}
}

func TestBusSubscribeToFiltersAndDoesNotCount(t *testing.T) {
	t.Parallel()
	b := NewBus()
	s := b.SubscribeTo(8, EvNotebookOpened, EvNotebookClosed)
	defer s.Close()
	if b.HasSubscribers() {
		t.Error("a filtered subscription counts for HasSubscribers")
	}
	b.Publish(Event{Type: EvCallProgress})
	b.Publish(Event{Type: EvNotebookOpened})
	b.Publish(Event{Type: EvExecOutput})
	b.Publish(Event{Type: EvNotebookClosed})
	if ev := recv(t, s); ev.Type != EvNotebookOpened {
		t.Errorf("first event = %s, want %s", ev.Type, EvNotebookOpened)
	}
	if ev := recv(t, s); ev.Type != EvNotebookClosed {
		t.Errorf("second event = %s, want %s", ev.Type, EvNotebookClosed)
	}
	all := b.Subscribe(8)
	if !b.HasSubscribers() {
		t.Error("HasSubscribers false with a subscription to every event")
	}
	all.Close()
	if b.HasSubscribers() {
		t.Error("HasSubscribers true after the only subscription to every event closed")
	}
}

// Drain hands over what a batched subscription still holds (the window
// would otherwise have held it back past the end), in order, including an
// event the reader had not yet taken, and a loss report; Close drops it.
func TestBusDrainDeliversWhatCloseDrops(t *testing.T) {
	t.Parallel()
	for _, drain := range []bool{true, false} {
		b := NewBus()
		// An hour-long window: nothing is handed over before the end.
		s := b.SubscribeBatched(4, time.Hour)
		for i := 0; i < 6; i++ { // two more than the ring holds
			b.Publish(Event{Type: EvKernelStatus, Kernel: &KernelEvent{ID: "k", State: fmt.Sprint(i)}})
		}
		got := make(chan []Event)
		go func() {
			var evs []Event
			for ev := range s.C() {
				evs = append(evs, ev)
			}
			got <- evs
		}()
		if drain {
			s.Drain()
			s.Drain() // idempotent
		} else {
			s.Close()
		}
		b.Publish(Event{Type: EvKernelStatus, Kernel: &KernelEvent{ID: "late"}})
		var evs []Event
		select {
		case evs = <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("C was not closed")
		}
		var desc []string
		for _, ev := range evs {
			if ev.Type == EvMissed {
				desc = append(desc, fmt.Sprintf("missed %d", ev.Missed))
			} else {
				desc = append(desc, ev.Kernel.State)
			}
		}
		want := "[missed 2 2 3 4 5]"
		if !drain {
			want = "[]"
		}
		if fmt.Sprint(desc) != want {
			t.Errorf("drain=%v: got %v, want %v", drain, desc, want)
		}
	}
}
