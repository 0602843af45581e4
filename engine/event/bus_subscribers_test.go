package event

import "testing"

func TestBusHasSubscribers(t *testing.T) {
	b := NewBus()
	if b.HasSubscribers() {
		t.Fatal("a new bus has subscribers")
	}
	s1, s2 := b.Subscribe(1), b.Subscribe(1)
	if !b.HasSubscribers() {
		t.Fatal("HasSubscribers false with two subscribers")
	}
	s1.Close()
	if !b.HasSubscribers() {
		t.Fatal("HasSubscribers false with one subscriber left")
	}
	s2.Close()
	s2.Close()
	if b.HasSubscribers() {
		t.Fatal("HasSubscribers true after every subscriber left")
	}
}
