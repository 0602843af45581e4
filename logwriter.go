package main

import (
	"fmt"
	"io"
	"sync"
	"time"
)

// logWriter hands each log record to a goroutine that writes it, so that
// logging never blocks a call: with --log-level debug and a stderr pipe
// its host does not drain, a direct write waited for the pipe, and with it
// the call that logged (and the managed Jupyter, whose output we log). When
// the queue is full a record is dropped and counted, and the count is
// written before the next record that gets through.
type logWriter struct {
	w    io.Writer
	ch   chan []byte
	done chan struct{}

	mu      sync.Mutex
	closed  bool
	dropped int
}

// logQueue is how many records wait to be written before they are dropped.
const logQueue = 4096

func newLogWriter(w io.Writer) *logWriter {
	l := &logWriter{w: w, ch: make(chan []byte, logQueue), done: make(chan struct{})}
	go l.run()
	return l
}

func (l *logWriter) Write(p []byte) (int, error) {
	b := append([]byte(nil), p...)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return len(p), nil
	}
	select {
	case l.ch <- b:
	default:
		l.dropped++
	}
	return len(p), nil
}

func (l *logWriter) run() {
	defer close(l.done)
	for b := range l.ch {
		l.mu.Lock()
		n := l.dropped
		l.dropped = 0
		l.mu.Unlock()
		if n > 0 {
			fmt.Fprintf(l.w, "jupyter-mcp-server: %d log records dropped: the log was not read as fast as it was written\n", n)
		}
		l.w.Write(b)
	}
}

// Close writes what is queued, waiting at most a moment: a log nobody reads
// must not keep the process from exiting either.
func (l *logWriter) Close() {
	l.mu.Lock()
	if !l.closed {
		l.closed = true
		close(l.ch)
	}
	l.mu.Unlock()
	select {
	case <-l.done:
	case <-time.After(2 * time.Second):
	}
}
