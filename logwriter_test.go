package main

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
)

// blockedWriter blocks every write until released, as a pipe nobody reads.
type blockedWriter struct {
	release chan struct{}
	mu      sync.Mutex
	buf     bytes.Buffer
}

func (b *blockedWriter) Write(p []byte) (int, error) {
	<-b.release
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func TestLogWriterNeverBlocks(t *testing.T) {
	t.Parallel()
	bw := &blockedWriter{release: make(chan struct{})}
	lw := newLogWriter(bw)
	start := time.Now()
	for range logQueue * 3 {
		lw.Write([]byte("a record\n"))
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("writing to a blocked log took %s", d)
	}
	close(bw.release)
	for len(lw.ch) > 0 {
		time.Sleep(time.Millisecond)
	}
	lw.Write([]byte("the last record\n"))
	lw.Close()
	bw.mu.Lock()
	out := bw.buf.String()
	bw.mu.Unlock()
	if !strings.Contains(out, "log records dropped") || !strings.HasSuffix(out, "the last record\n") {
		t.Fatalf("log:\n%.300s … %s", out, out[max(0, len(out)-200):])
	}
	lw.Write([]byte("after close\n")) // dropped, not a panic
}
