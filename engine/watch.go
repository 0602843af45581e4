package engine

import (
	"context"
	"runtime/pprof"
	"time"
)

// watchLabel labels each watcher goroutine with its notebook's path, so a
// goroutine profile tells whose it is.
const watchLabel = "notebook-watch"

// Watching notebooks in use. Besides the check before every call that
// reads or changes a notebook (freshness.go, syncFromDisk), each notebook
// in use has a watcher that checks its file's last_modified every
// Config.WatchInterval, so that an edit made elsewhere is seen (and
// reported, outside.go) while the agent is busy with something else. The
// watcher runs from use to release: unuse, a switch of Jupyter server and
// Close stop it and wait for it.

// DefaultWatchInterval is how often a notebook in use is checked when
// nothing else checks it (--watch-interval).
const DefaultWatchInterval = 2 * time.Second

// watch starts d's watcher, when watching is on.
func (e *Engine) watch(d *document) {
	every := e.cfg.WatchInterval
	if every <= 0 {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	d.unwatch = func() {
		cancel()
		<-done
	}
	// The watcher carries its notebook's label from its first instant (a
	// goroutine inherits its creator's labels), and done is closed once
	// watchFile has returned: a goroutine profile taken at any moment
	// after use, or after unwatch, counts it right.
	pprof.Do(ctx, pprof.Labels(watchLabel, d.path), func(ctx context.Context) {
		go func() {
			defer close(done)
			e.watchFile(ctx, d, every)
		}()
	})
}

// watchFile is the watcher of one notebook. A check that fails (the file
// is gone, Jupyter is restarting) is logged when its reason changes, and
// the watcher goes on: the file may come back (git checkout).
func (e *Engine) watchFile(ctx context.Context, d *document, every time.Duration) {
	tick := time.NewTicker(every)
	defer tick.Stop()
	failing := ""
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		err := e.checkFile(ctx, d, "")
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && err.Error() != failing:
			failing = err.Error()
			e.log.Warn("checking a notebook in use for changes made elsewhere", "notebook", d.name, "path", d.path, "err", err)
		case err == nil && failing != "":
			failing = ""
			e.log.Info("notebook in use can be checked again", "notebook", d.name, "path", d.path)
		}
	}
}

// stopWatching stops the watchers of docs and waits for them. Callers must
// not hold e.mu (a check in progress may take it).
func stopWatching(docs ...*document) {
	for _, d := range docs {
		if d.unwatch != nil {
			d.unwatch()
		}
	}
}
