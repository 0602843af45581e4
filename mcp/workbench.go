package mcp

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The workbench's own session: when the person resends a call, it runs as
// a call of an MCP client session in this process, connected to this
// server over in-memory transports. The call then takes the path every
// agent's call takes (the observer, the SDK's input validation, the
// handler, result shaping and its schema check), so the timeline shows it
// like any other, under the session calls.WorkbenchSession.

// resendOfKey is the _meta key of a workbench call that names the call it
// resends. It is honoured on the workbench's session only.
const resendOfKey = "io.jupyter-mcp/resend_of"

// workbenchProtocol is the protocol version the workbench's client speaks:
// the one real hosts speak, which every test client pins too.
const workbenchProtocol = "2025-11-25"

// WorkbenchCaller is what the engine makes the workbench's calls with
// (engine.Engine.SetWorkbenchCaller; main wires it). Its session opens on
// the first call; Close ends it.
type WorkbenchCaller struct {
	s *Server

	mu     sync.Mutex
	cs     *sdk.ClientSession
	closed bool
}

var _ calls.WorkbenchCaller = (*WorkbenchCaller)(nil)

// WorkbenchCaller returns the caller of the workbench's own session.
func (s *Server) WorkbenchCaller() *WorkbenchCaller { return &WorkbenchCaller{s: s} }

// Checker returns the checker a held call's edit goes through (checkEdit),
// for arguments the person wrote whole: nothing of them was redacted from
// what they were shown, so nothing is put back.
func (w *WorkbenchCaller) Checker(tool string) func(json.RawMessage) (json.RawMessage, error) {
	d := w.s.tools[tool]
	if d == nil {
		return nil
	}
	return func(edited json.RawMessage) (json.RawMessage, error) {
		return checkEdit(d, nil, nil, edited)
	}
}

// Call makes one call on the workbench's session.
func (w *WorkbenchCaller) Call(ctx context.Context, tool string, args json.RawMessage, of string) error {
	cs, err := w.session(ctx)
	if err != nil {
		return err
	}
	params := &sdk.CallToolParams{Name: tool, Arguments: args}
	if of != "" {
		params.Meta = sdk.Meta{resendOfKey: of}
	}
	_, err = cs.CallTool(ctx, params)
	return err
}

// session opens the workbench's session on first use.
func (w *WorkbenchCaller) session(ctx context.Context) (*sdk.ClientSession, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	switch {
	case w.closed:
		return nil, fmt.Errorf("the workbench's MCP session is closed")
	case w.cs != nil:
		return w.cs, nil
	}
	st, ct := sdk.NewInMemoryTransports()
	ss, err := w.s.srv.Connect(ctx, st, nil)
	if err != nil {
		return nil, err
	}
	// Named before the client initializes, which is when the server
	// first sees the session.
	w.s.mu.Lock()
	w.s.named[ss] = calls.WorkbenchSession
	w.s.mu.Unlock()
	client := sdk.NewClient(&sdk.Implementation{Name: "workbench", Title: "the person at the workbench", Version: w.s.opts.Version}, nil)
	cs, err := client.Connect(ctx, ct, &sdk.ClientSessionOptions{ProtocolVersion: workbenchProtocol})
	if err != nil {
		w.s.mu.Lock()
		delete(w.s.named, ss)
		w.s.mu.Unlock()
		ss.Close()
		return nil, err
	}
	w.cs = cs
	return cs, nil
}

// Close ends the workbench's session, if it was opened.
func (w *WorkbenchCaller) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	if w.cs == nil {
		return nil
	}
	return w.cs.Close()
}

// resendOf is the call a workbench call resends, from its _meta.
func resendOf(session string, req *sdk.CallToolRequest) string {
	if session != calls.WorkbenchSession || req.Params == nil {
		return ""
	}
	of, _ := req.Params.Meta[resendOfKey].(string)
	return of
}
