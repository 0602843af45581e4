package observe

import (
	"sort"
	"strings"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// Bounds on what the projection keeps. An agent can produce output far
// faster than anyone can read it (a loop printing 200,000 lines), so every
// list and every text is capped, and what was left out is counted and shown.
const (
	MaxCalls           = 500       // calls kept in the timeline
	MaxArgsBytes       = 16 << 10  // arguments kept per call
	MaxHeldArgsBytes   = 1 << 20   // arguments kept while a call is held: a person approves all of them
	MaxTextBytes       = 64 << 10  // text content kept per call
	MaxStructuredBytes = 256 << 10 // structuredContent kept per call (parsed as a tree)
	MaxMetaBytes       = 16 << 10  // _meta kept per call
	MaxSourceBytes     = 32 << 10  // source kept per cell
	MaxCellOutputs     = 20        // outputs kept per cell (the latest)
	MaxOutputText      = 64 << 10  // text kept per output (the head, as the agent's)
	MaxExecTailLines   = 200       // streamed lines kept per execution
	MaxLineBytes       = 1024      // bytes kept per streamed line
	MaxFinishedExecs   = 20        // finished executions kept beside the running ones
)

// Call is one tool call as last seen, with what was cut from it.
type Call struct {
	event.CallEvent

	Finished      time.Time // when the call.finished event was published
	ArgsCut       int       // bytes of Args left out (Args is then not valid JSON)
	TextCut       int
	StructuredCut int
	MetaCut       int

	// HeldSince is when the call was first held (for approval, or while
	// new calls were paused); zero if never. Held (event.CallEvent) is
	// how long it was, once it ran or was refused.
	HeldSince time.Time

	// ArgsLine is free for a reader to keep its one-line form of Args in
	// (the workbench draws it on every frame); the state clears it
	// whenever Args change.
	ArgsLine string

	// The search index (query.go), built on the first search after each
	// change of the call.
	indexed   bool
	hay, kind string
}

// Output is one cell output as kept by the projection.
type Output struct {
	event.OutputSnapshot

	// Decoded is what the state's image decoder made of Image (see
	// NewState), made once and shared by the copies of this output; nil
	// when the output has no image or the state decodes none.
	Decoded any
}

// Cell is one cell of a notebook in use.
type Cell struct {
	// Ver is new for every change of the cell (a changed cell is a new
	// value), for a reader's cache of its drawing.
	Ver            uint64
	ID             string
	Type           string
	Source         string
	SourceCut      int
	ExecutionCount *int
	Outputs        []Output
	OutputsOmitted int // outputs left out by the engine and by us
}

// snapshot turns the cell back into the engine's form.
func (c *Cell) snapshot() event.CellSnapshot {
	snap := event.CellSnapshot{ID: c.ID, Type: c.Type, Source: c.Source, ExecutionCount: c.ExecutionCount, OutputsOmitted: c.OutputsOmitted}
	for _, o := range c.Outputs {
		snap.Outputs = append(snap.Outputs, o.OutputSnapshot)
	}
	return snap
}

// Notebook is a notebook in use, kept up to date from notebook events.
type Notebook struct {
	Ver                  uint64 // bumped on every change, for a reader's cache
	Name, Path, KernelID string
	Cells                []Cell
	LastCellID           string // the cell changed last
	Changed              time.Time
}

// Exec is one execution: running, or recently finished.
type Exec struct {
	event.ExecEvent

	Started      time.Time
	Finished     time.Time // zero while running
	tail         []string  // last lines of streamed output (bounded)
	partial      string    // unterminated last line
	partialOf    string    // the stream ("stream:NAME") that left it open
	LinesDropped int       // lines that fell out of the tail
	Outputs      int       // outputs received
	Images       int
}

// Running reports whether the execution has not finished.
func (x *Exec) Running() bool { return x.Finished.IsZero() }

// Tail returns the last n lines of output, the partial line included.
func (x *Exec) Tail(n int) []string {
	lines := x.tail
	if x.partial != "" {
		lines = append(lines[:len(lines):len(lines)], x.partial)
	}
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return lines
}

// KeptLines is how many complete lines the tail holds now (at most
// 2*MaxExecTailLines: the tail is trimmed in batches).
func (x *Exec) KeptLines() int { return len(x.tail) }

// ImageDecoder turns an output's image into what a reader draws from. It
// runs once per output, when the output arrives.
type ImageDecoder func(mime string, data []byte) any

// State is everything known about the engine, reduced from its events. It
// is plain data with bounded size and no lock: the workbench's model owns
// one, and the feed server keeps one to send a newly attached workbench a
// snapshot.
type State struct {
	decode  ImageDecoder // nil: the feed server has no use for decoded images
	cellVer uint64       // the last Cell.Ver given

	Calls        []*Call // oldest first
	callIndex    map[string]*Call
	CallsDropped int

	Sessions map[string]string // id -> client name

	Notebooks     map[string]*Notebook
	NotebookOrder []string

	Execs        []*Exec // oldest first
	execIndex    map[string]*Exec
	ExecsDropped int

	Kernels   map[string]event.KernelEvent
	sandboxes map[string]event.SandboxEvent

	Server     event.ServerEvent
	haveServer bool
	Missed     uint64 // events the bus dropped because we were slow
	Applied    uint64 // events applied

	// Change counters, one per part of the state: each is bumped when its
	// part changes, so that the workbench redraws a pane only when what
	// the pane shows changed. Under an output flood only ExecsVer moves.
	CallsVer     uint64 // calls and the count of dropped calls
	NotebooksVer uint64 // notebooks opened or closed (each has its own Ver)
	ExecsVer     uint64 // executions and their output
	KernelsVer   uint64 // kernels and sandboxes
	ServerVer    uint64 // server state, sessions, missed events
}

// NewState returns an empty state. decode, when not nil, is run on every
// output image as it arrives (see Output.Decoded).
func NewState(decode ImageDecoder) *State {
	return &State{
		decode:    decode,
		callIndex: map[string]*Call{},
		Sessions:  map[string]string{},
		Notebooks: map[string]*Notebook{},
		execIndex: map[string]*Exec{},
		Kernels:   map[string]event.KernelEvent{},
		sandboxes: map[string]event.SandboxEvent{},
	}
}

// Apply folds one event into the state.
func (s *State) Apply(ev event.Event) {
	s.Applied++
	switch ev.Type {
	case event.EvCallStarted, event.EvCallProgress, event.EvCallHeld, event.EvCallFinished, event.EvCallTask:
		if ev.Call != nil {
			s.CallsVer++
			s.applyCall(ev)
		}
	case event.EvSessionOpened:
		if ev.Session != nil {
			s.ServerVer++
			s.Sessions[ev.Session.ID] = ev.Session.Client
		}
	case event.EvSessionClosed:
		if ev.Session != nil {
			s.ServerVer++
			delete(s.Sessions, ev.Session.ID)
		}
	case event.EvNotebookOpened, event.EvNotebookChanged, event.EvNotebookClosed:
		if ev.Notebook != nil {
			s.applyNotebook(ev)
		}
	case event.EvNotebookOutsideEdit:
		if ev.Notebook != nil {
			s.applyOutsideEdit(ev)
		}
	case event.EvExecStarted, event.EvExecOutput, event.EvExecFinished:
		if ev.Exec != nil {
			s.ExecsVer++
			s.applyExec(ev)
		}
	case event.EvKernelStatus:
		if ev.Kernel != nil {
			s.KernelsVer++
			k := *ev.Kernel
			if old, ok := s.Kernels[k.ID]; ok && k.Name == "" {
				k.Name = old.Name
			}
			s.Kernels[k.ID] = k
		}
	case event.EvKernelLost:
		if ev.Kernel != nil {
			s.applyKernelLost(ev)
		}
	case event.EvSandboxStatus:
		if ev.Sandbox != nil {
			s.KernelsVer++
			s.sandboxes[ev.Sandbox.Name] = *ev.Sandbox
		}
	case event.EvServerState:
		if ev.Server != nil {
			s.ServerVer++
			srv := *ev.Server
			if srv.JupyterURL == "" {
				srv.JupyterURL = s.Server.JupyterURL
			}
			s.Server, s.haveServer = srv, true
		}
	case event.EvMissed:
		s.ServerVer++
		s.Missed += ev.Missed
	}
}

// capBytes returns at most n bytes of b (a copy) and how many were left out.
func capBytes(b []byte, n int) ([]byte, int) {
	if len(b) <= n {
		return append([]byte(nil), b...), 0
	}
	return append([]byte(nil), b[:n]...), len(b) - n
}

// capString keeps the head of s.
func capString(s string, n int) (string, int) {
	if len(s) <= n {
		return s, 0
	}
	return strings.ToValidUTF8(s[:n], ""), len(s) - n
}

func (s *State) applyCall(ev event.Event) {
	c := ev.Call
	r, ok := s.callIndex[c.ID]
	if !ok && ev.Type == event.EvCallTask {
		return // a call no longer kept: its task's polls draw nothing
	}
	if !ok {
		r = &Call{CallEvent: event.CallEvent{ID: c.ID}}
		s.callIndex[c.ID] = r
		s.Calls = append(s.Calls, r)
		s.trimCalls()
	}
	r.indexed = false
	if c.Session != "" {
		r.Session = c.Session
	}
	if c.Tool != "" {
		r.Tool = c.Tool
	}
	if len(c.Args) > 0 {
		limit := MaxArgsBytes
		if ev.Type == event.EvCallHeld {
			limit = MaxHeldArgsBytes
		}
		r.Args, r.ArgsCut = capBytes(c.Args, limit)
		r.ArgsLine = ""
	}
	if c.Destructive {
		r.Destructive = true
	}
	if c.Editable {
		r.Editable = true
	}
	if c.Edited {
		r.Edited = true
	}
	if c.Summary != "" {
		r.Summary = c.Summary
	}
	if c.UndoOf != "" {
		r.UndoOf = c.UndoOf
	}
	if c.ResendOf != "" {
		r.ResendOf = c.ResendOf
	}
	if c.DecidedBy != "" {
		r.DecidedBy = c.DecidedBy
	}
	if c.Task != nil {
		t := *c.Task
		r.Task = &t
	}
	if !c.Started.IsZero() {
		r.Started = c.Started
	} else if r.Started.IsZero() {
		r.Started = ev.Time
	}
	wasHeld := r.Status == event.CallHeld
	if c.Status != "" {
		r.Status = c.Status
	}
	if c.Held > 0 {
		r.Held = c.Held
	}
	switch ev.Type {
	case event.EvCallStarted:
		if r.Status == "" {
			r.Status = event.CallRunning
		}
	case event.EvCallHeld:
		r.Status = event.CallHeld
		if r.HeldSince.IsZero() {
			r.HeldSince = eventTime(ev, r.Started)
		}
		if c.Preview != nil {
			r.Preview = c.Preview
		}
		r.HeldUntil = c.HeldUntil
	case event.EvCallProgress:
		r.Progress, _ = capString(c.Progress, 512)
		if r.Status != event.CallHeld {
			r.HeldUntil = time.Time{}
		}
		if wasHeld && r.Status == event.CallRunning {
			r.endHold(ev)
		}
	case event.EvCallFinished:
		r.Duration = c.Duration
		r.Preview = nil // what it would do is now what it did
		r.HeldUntil = time.Time{}
		r.Finished = ev.Time
		if r.Finished.IsZero() {
			r.Finished = r.Started.Add(c.Duration)
		}
		r.Text, r.TextCut = capString(c.Text, MaxTextBytes)
		r.Structured, r.StructuredCut = capBytes(c.Structured, MaxStructuredBytes)
		r.Meta, r.MetaCut = capBytes(c.Meta, MaxMetaBytes)
		r.IsError, r.Error = c.IsError, c.Error
		r.SchemaOK, r.SchemaProblem = c.SchemaOK, c.SchemaProblem
		r.CellID, r.Notebook, r.Images = c.CellID, c.Notebook, c.Images
		r.TextBytes, r.StructuredBytes, r.ImageBytes = c.TextBytes, c.StructuredBytes, c.ImageBytes
		r.Undoable = c.Undoable
		r.CellError = c.CellError
		if wasHeld {
			r.endHold(ev)
		}
		if c.UndoOf != "" && !c.IsError {
			s.undone(c.UndoOf)
		}
		if r.Status == "" || r.Status == event.CallRunning || r.Status == event.CallHeld {
			r.Status = event.CallOK
			if r.IsError || r.Error != "" {
				r.Status = event.CallError
			}
		}
	}
}

// undone marks the call an undo reverted as no longer undoable; when that
// call was an undo itself, the call it had reverted is in effect again.
func (s *State) undone(id string) {
	r := s.callIndex[id]
	if r == nil {
		return
	}
	r.Undoable = false
	if r.UndoOf != "" {
		if back := s.callIndex[r.UndoOf]; back != nil {
			back.Undoable = true
		}
	}
}

// trimCalls drops the oldest finished call (or, when every call is still
// active, the oldest) until the timeline fits its bound.
func (s *State) trimCalls() {
	for len(s.Calls) > MaxCalls {
		drop := 0
		for i, r := range s.Calls {
			if r.Status != event.CallRunning && r.Status != event.CallHeld {
				drop = i
				break
			}
		}
		delete(s.callIndex, s.Calls[drop].ID)
		s.Calls = append(s.Calls[:drop], s.Calls[drop+1:]...)
		s.CallsDropped++
	}
}

// Call returns the call with the given id, or nil.
func (s *State) Call(id string) *Call { return s.callIndex[id] }

// Exec returns the execution with the given id, or nil.
func (s *State) Exec(id string) *Exec { return s.execIndex[id] }

func (s *State) newCell(c event.CellSnapshot) Cell {
	s.cellVer++
	cs := Cell{Ver: s.cellVer, ID: c.ID, Type: c.Type, ExecutionCount: c.ExecutionCount, OutputsOmitted: c.OutputsOmitted}
	cs.Source, cs.SourceCut = capString(c.Source, MaxSourceBytes)
	outs := c.Outputs
	if len(outs) > MaxCellOutputs {
		cs.OutputsOmitted += len(outs) - MaxCellOutputs
		outs = outs[len(outs)-MaxCellOutputs:]
	}
	for _, o := range outs {
		cs.Outputs = append(cs.Outputs, s.newOutput(o))
	}
	return cs
}

// newOutput keeps an output as the engine's output model gave it, bounded
// like the agent's text (engine Config.MaxOutputBytes). MaxOutputText only
// cuts further (by the model's rules, so the note stays true) when that
// bound is set higher, or a feed sends more.
func (s *State) newOutput(o event.OutputSnapshot) Output {
	out := Output{OutputSnapshot: o.Bound(MaxOutputText)}
	if len(o.Image) > 0 && s.decode != nil {
		out.Decoded = s.decode(o.MimeType, o.Image)
	}
	return out
}

func (s *State) applyNotebook(ev event.Event) {
	n := ev.Notebook
	if ev.Type == event.EvNotebookClosed {
		if _, ok := s.Notebooks[n.Name]; ok {
			s.NotebooksVer++
			delete(s.Notebooks, n.Name)
			for i, name := range s.NotebookOrder {
				if name == n.Name {
					s.NotebookOrder = append(s.NotebookOrder[:i], s.NotebookOrder[i+1:]...)
					break
				}
			}
		}
		return
	}
	nb, ok := s.Notebooks[n.Name]
	if !ok {
		nb = &Notebook{Name: n.Name}
		s.NotebooksVer++
		s.Notebooks[n.Name] = nb
		s.NotebookOrder = append(s.NotebookOrder, n.Name)
	}
	nb.Ver++
	if n.Path != "" {
		nb.Path = n.Path
	}
	if n.KernelID != "" {
		nb.KernelID = n.KernelID
	}
	nb.Changed = ev.Time
	op := n.Op
	if ev.Type == event.EvNotebookOpened {
		op = event.OpReload
	}
	cells := make([]Cell, 0, len(n.Cells))
	for _, c := range n.Cells {
		cells = append(cells, s.newCell(c))
	}
	switch op {
	case event.OpReload:
		nb.Cells = cells
		return
	case event.OpInsert:
		at := clamp(n.Index, 0, len(nb.Cells))
		nb.Cells = append(nb.Cells[:at], append(cells, nb.Cells[at:]...)...)
	case event.OpDelete:
		if len(n.CellIDs) > 0 {
			gone := map[string]bool{}
			for _, id := range n.CellIDs {
				gone[id] = true
			}
			kept := nb.Cells[:0]
			for _, c := range nb.Cells {
				if !gone[c.ID] {
					kept = append(kept, c)
				}
			}
			nb.Cells = kept
		} else if n.Index >= 0 && n.Index < len(nb.Cells) {
			nb.Cells = append(nb.Cells[:n.Index], nb.Cells[n.Index+1:]...)
		}
	case event.OpMove:
		from := n.From
		if len(cells) > 0 {
			if i := nb.IndexOf(cells[0].ID); i >= 0 {
				from = i
			}
		}
		if from >= 0 && from < len(nb.Cells) {
			c := nb.Cells[from]
			if len(cells) > 0 {
				c = cells[0]
			}
			rest := append(nb.Cells[:from:from], nb.Cells[from+1:]...)
			to := clamp(n.Index, 0, len(rest))
			nb.Cells = append(rest[:to:to], append([]Cell{c}, rest[to:]...)...)
		}
	default:
		// edit, output, exec_count, clear_output and any change we do not
		// know: each snapshot is the changed cell as it now is, so it
		// replaces the cell with its id (or, without one, at Index).
		for i, c := range cells {
			at := nb.IndexOf(c.ID)
			if at < 0 {
				at = n.Index + i
			}
			if at >= 0 && at < len(nb.Cells) {
				nb.Cells[at] = c
			}
		}
	}
	if len(cells) > 0 {
		nb.LastCellID = cells[len(cells)-1].ID
	}
}

// IndexOf returns the index of the cell with the given id, or -1.
func (nb *Notebook) IndexOf(id string) int {
	if id == "" {
		return -1
	}
	for i, c := range nb.Cells {
		if c.ID == id {
			return i
		}
	}
	return -1
}

func clamp(v, lo, hi int) int {
	if v < lo {
		return lo
	}
	if v > hi {
		return hi
	}
	return v
}

func (s *State) applyExec(ev event.Event) {
	e := ev.Exec
	x, ok := s.execIndex[e.ID]
	if !ok {
		x = &Exec{ExecEvent: event.ExecEvent{ID: e.ID}, Started: ev.Time}
		s.execIndex[e.ID] = x
		s.Execs = append(s.Execs, x)
	}
	merge := func(dst *string, v string) {
		if v != "" {
			*dst = v
		}
	}
	merge(&x.Notebook, e.Notebook)
	merge(&x.CellID, e.CellID)
	merge(&x.KernelID, e.KernelID)
	merge(&x.SandboxID, e.SandboxID)
	merge(&x.CallID, e.CallID)
	if e.Code != "" {
		x.Code, _ = capString(e.Code, MaxSourceBytes)
	}
	switch ev.Type {
	case event.EvExecOutput:
		if e.Output != nil {
			x.addOutput(*e.Output)
		}
	case event.EvExecFinished:
		x.Status = e.Status
		x.Elapsed = e.Elapsed
		x.Finished = ev.Time
		if x.Finished.IsZero() {
			x.Finished = x.Started.Add(e.Elapsed)
		}
		if x.Status == "" {
			x.Status = "ok"
		}
		s.trimExecs()
	}
}

// addOutput appends an output to the execution's tail.
func (x *Exec) addOutput(o event.OutputSnapshot) {
	x.Outputs++
	var text string
	switch {
	case len(o.Image) > 0:
		x.Images++
		text = "[" + o.MimeType + " image]\n"
	case o.Kind == "error":
		text = o.Text
		if text == "" {
			text = "error"
		}
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
	case o.Kind == "stream":
		text = o.Text
	default:
		text = o.Text
		if !strings.HasSuffix(text, "\n") {
			text += "\n"
		}
	}
	if o.Cut != nil {
		text = o.Text + "\n" + o.Cut.Note() + "\n" // as the agent reads it
	}
	switch from := o.Kind + ":" + o.Name; {
	case o.Redraw:
		// The piece restates the line the last one left open (a
		// progress bar redrawn with "\r"): it replaces it.
		x.partial = ""
	case x.partial != "" && (o.Kind != "stream" || from != x.partialOf):
		// A line left open belongs to its own output: the agent reads the
		// next output (a result, an error, the other stream) apart from it.
		x.pushLine(x.partial)
		x.partial = ""
	}
	x.partialOf = o.Kind + ":" + o.Name
	x.appendText(text)
}

// appendText splits text into lines and keeps the last MaxExecTailLines. A
// single enormous text costs one pass: only its last lines are kept. Lines
// are cut from text in place, and the tail is trimmed within its own array,
// so a flood of one-line outputs allocates next to nothing per output.
func (x *Exec) appendText(text string) {
	if text == "" {
		return
	}
	if x.partial != "" {
		text = x.partial + text
		x.partial = ""
	}
	complete := strings.HasSuffix(text, "\n")
	text = strings.TrimSuffix(text, "\n")
	// Count and skip lines that would fall out of the tail anyway.
	n := strings.Count(text, "\n") + 1
	if n > MaxExecTailLines+1 {
		skip := n - MaxExecTailLines - 1
		idx := 0
		for i := 0; i < skip; i++ {
			idx += strings.IndexByte(text[idx:], '\n') + 1
		}
		text = text[idx:]
		x.LinesDropped += skip
	}
	for {
		i := strings.IndexByte(text, '\n')
		if i < 0 {
			break
		}
		x.pushLine(text[:i])
		text = text[i+1:]
	}
	if complete {
		x.pushLine(text)
	} else {
		x.partial, _ = capString(text, MaxLineBytes)
	}
	if len(x.tail) > 2*MaxExecTailLines {
		drop := len(x.tail) - MaxExecTailLines
		x.LinesDropped += drop
		kept := copy(x.tail, x.tail[drop:])
		clear(x.tail[kept:]) // let the dropped lines' text be collected
		x.tail = x.tail[:kept]
	}
}

// pushLine appends one complete line to the tail.
func (x *Exec) pushLine(l string) {
	l, _ = capString(strings.TrimSuffix(l, "\r"), MaxLineBytes)
	x.tail = append(x.tail, l)
}

// trimExecs keeps every running execution and the latest finished ones.
func (s *State) trimExecs() {
	finished := 0
	for _, x := range s.Execs {
		if !x.Running() {
			finished++
		}
	}
	if finished <= MaxFinishedExecs {
		return
	}
	kept := s.Execs[:0]
	for _, x := range s.Execs {
		if !x.Running() && finished > MaxFinishedExecs {
			finished--
			delete(s.execIndex, x.ID)
			s.ExecsDropped++
			continue
		}
		kept = append(kept, x)
	}
	s.Execs = kept
}

// SortedKernels lists kernels by id, for a stable display.
func (s *State) SortedKernels() []event.KernelEvent {
	out := make([]event.KernelEvent, 0, len(s.Kernels))
	for _, k := range s.Kernels {
		out = append(out, k)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}

// SortedSandboxes lists sandboxes by name.
func (s *State) SortedSandboxes() []event.SandboxEvent {
	out := make([]event.SandboxEvent, 0, len(s.sandboxes))
	for _, sb := range s.sandboxes {
		out = append(out, sb)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}

// Snapshot renders the state as a sequence of events that rebuilds it when
// applied to an empty state: what the feed server sends a workbench that
// attaches after things have happened.
func (s *State) Snapshot() []event.Event {
	var evs []event.Event
	if s.haveServer {
		srv := s.Server
		evs = append(evs, event.Event{Type: event.EvServerState, Server: &srv})
	}
	ids := make([]string, 0, len(s.Sessions))
	for id := range s.Sessions {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		evs = append(evs, event.Event{Type: event.EvSessionOpened, Session: &event.SessionEvent{ID: id, Client: s.Sessions[id]}})
	}
	for _, k := range s.SortedKernels() {
		k := k
		evs = append(evs, event.Event{Type: event.EvKernelStatus, Kernel: &k})
	}
	for _, sb := range s.SortedSandboxes() {
		sb := sb
		evs = append(evs, event.Event{Type: event.EvSandboxStatus, Sandbox: &sb})
	}
	for _, name := range s.NotebookOrder {
		nb := s.Notebooks[name]
		ne := &event.NotebookEvent{Name: nb.Name, Path: nb.Path, KernelID: nb.KernelID}
		for _, c := range nb.Cells {
			ne.Cells = append(ne.Cells, c.snapshot())
		}
		evs = append(evs, event.Event{Time: nb.Changed, Type: event.EvNotebookOpened, Notebook: ne})
		// Replay the last change too, so the attached workbench marks and
		// shows the cell that changed last, as a live one does.
		if at := nb.IndexOf(nb.LastCellID); at >= 0 {
			evs = append(evs, event.Event{Time: nb.Changed, Type: event.EvNotebookChanged, Notebook: &event.NotebookEvent{
				Name: nb.Name, Op: event.OpEdit, Index: at, Cells: []event.CellSnapshot{nb.Cells[at].snapshot()}}})
		}
	}
	for _, r := range s.Calls {
		c := r.CallEvent
		typ := event.EvCallStarted
		t := c.Started
		switch c.Status {
		case event.CallHeld:
			typ = event.EvCallHeld
		case event.CallRunning:
		default:
			typ = event.EvCallFinished
			t = r.Finished
		}
		evs = append(evs, event.Event{Time: t, Type: typ, Call: &c})
	}
	for _, x := range s.Execs {
		start := x.ExecEvent
		start.Output, start.Status, start.Elapsed = nil, "", 0
		evs = append(evs, event.Event{Time: x.Started, Type: event.EvExecStarted, Exec: &start})
		if lines := x.Tail(MaxExecTailLines); len(lines) > 0 {
			text := strings.Join(lines, "\n")
			if x.partial == "" {
				text += "\n"
			}
			out := event.ExecEvent{ID: x.ID, Output: &event.OutputSnapshot{Kind: "stream", Name: "stdout", Text: text}}
			evs = append(evs, event.Event{Time: x.Started, Type: event.EvExecOutput, Exec: &out})
		}
		if !x.Running() {
			fin := event.ExecEvent{ID: x.ID, Status: x.Status, Elapsed: x.Elapsed}
			evs = append(evs, event.Event{Time: x.Finished, Type: event.EvExecFinished, Exec: &fin})
		}
	}
	if s.Missed > 0 {
		evs = append(evs, event.Event{Type: event.EvMissed, Missed: s.Missed})
	}
	return evs
}
