package mcp

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/calls"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
)

// call is one tool call as the observer and the handler share it: who made
// it, and what the handler learned that the outcome should record.
type call struct {
	id      string // the observer's call id ("" when called without one)
	session string
	req     *sdk.CallToolRequest
	// run is the run the call executes in (a stateless client's call,
	// runs.go), nil for a call served within its request.
	run *run

	schemaOK      *bool
	schemaProblem string
	cellID        string
	notebook      string
	images        int
	cellError     string
}

type callKey struct{}

func withCall(ctx context.Context, c *call) context.Context {
	return context.WithValue(ctx, callKey{}, c)
}

func callFrom(ctx context.Context) *call {
	c, _ := ctx.Value(callKey{}).(*call)
	return c
}

// typed adapts a table handler to the SDK: the SDK has already decoded and
// validated the input against the input schema (applying defaults); this
// calls the handler and shapes its answer or its error. The SDK's own
// structured-output path is not used (Out is any and stays nil): the result
// is built and validated here so that a mismatch is observed and reported
// rather than turned into a protocol error that hides the answer.
func typed[In any](s *Server, d *toolDef, h handlerFor[In]) sdk.ToolHandlerFor[In, any] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, any, error) {
		c := callFrom(ctx)
		if c == nil {
			c = &call{session: s.sessionOf(req)}
		}
		c.req = req
		a, err := h(s, ctx, c, in)
		if err != nil {
			if !engine.IsUserError(err) {
				s.log.Warn("tool failed", "tool", d.name, "err", redact(err.Error()))
			}
			res := errorResult(d.name, err)
			s.withNotices(c, res, err)
			return res, nil, nil
		}
		res := s.toResult(d, c, a)
		s.withNotices(c, res, nil)
		s.withInheritedNote(d, c, res)
		return res, nil, nil
	}
}

// Texts for calls the person at the workbench stopped.
const (
	cancelledText = "The call was cancelled by the person supervising at the workbench. Do not retry it unless they ask you to."
)

// observe is the receiving middleware that records every tool call with the
// engine: Begin (which may hold it for approval or refuse it), the
// handler under the context CancelCall cancels, then the outcome.
func (s *Server) observe(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		ctr, ok := req.(*sdk.CallToolRequest)
		if method != "tools/call" || !ok {
			return s.safely(next, ctx, method, req)
		}
		// "arguments": null decodes to a nil map, which the SDK's default
		// filling then writes into: a panic that would take the whole
		// server down (every session) for one client's call. Null means no
		// arguments.
		if a := bytes.TrimSpace(ctr.Params.Arguments); bytes.Equal(a, []byte("null")) {
			ctr.Params.Arguments = json.RawMessage("{}")
		}
		growStack()
		d := s.tools[ctr.Params.Name]
		c := s.newCall(ctx, ctr)
		args := json.RawMessage(ctr.Params.Arguments)
		if len(args) == 0 {
			args = json.RawMessage("{}")
		}
		sent := args
		// The arguments only travel in events. Redacting them decodes
		// them and runs patterns over every string (a cell's whole
		// source), which is wasted when no one is listening.
		if s.e.Bus().HasSubscribers() {
			args = redactArgs(args)
		} else {
			args = nil
		}
		start := calls.Start{
			ID:          c.id,
			Session:     c.session,
			Tool:        ctr.Params.Name,
			Args:        args,
			Destructive: d != nil && d.destructive,
			ResendOf:    resendOf(c.session, ctr),
		}
		// Whether its client's user may be asked to approve it (trust.go).
		start.Ask, start.Unasked = s.callAsker(c, d)
		// Whether it runs code; when someone watches, what it would do
		// and how its arguments may be edited (held_calls.go).
		s.approvalStart(&start, d, sent, args)
		callCtx, finish, err := s.e.Calls().Begin(ctx, start)
		if err != nil {
			// Refused (denied, paused too long, no workbench to approve):
			// the call must not run. The engine has recorded the outcome.
			text := err.Error()
			if !engine.IsUserError(err) {
				text = "The call was not run: " + redact(text)
			}
			return &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: toolErrorText(ctr.Params.Name, text)}}}, nil
		}

		edited, wasEdited := calls.EditedArgs(callCtx)
		if wasEdited {
			ctr.Params.Arguments = edited
		}
		result, err := s.safely(next, withCall(callCtx, c), method, req)
		res, _ := result.(*sdk.CallToolResult)
		if wasEdited && res != nil {
			withEditNote(res, sent, edited)
		}

		status := event.CallOK
		switch {
		case callCtx.Err() != nil && ctx.Err() == nil:
			// Cancelled by the person (CancelCall), not by the client: the
			// client is still waiting and deserves a proper answer.
			res, err = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: toolErrorText(ctr.Params.Name, cancelledText)}}}, nil
			c.schemaOK = nil
			status = event.CallCancelled
			if c.run != nil {
				c.run.markCancelled("the person at the workbench")
			}
		case ctx.Err() != nil:
			status = event.CallCancelled
		case err != nil || (res != nil && res.IsError):
			status = event.CallError
		}
		if res != nil && res.IsError && d != nil {
			rewriteArgumentError(d, res)
		}

		outcome := calls.Outcome{
			Status:        status,
			SchemaOK:      c.schemaOK,
			SchemaProblem: c.schemaProblem,
			CellID:        c.cellID,
			Notebook:      c.notebook,
			Images:        c.images,
			CellError:     c.cellError,
		}
		if err != nil {
			outcome.Error = redact(err.Error())
		}
		if res != nil {
			outcome.IsError = res.IsError
			outcome.Text = contentText(res.Content)
			// toResult leaves the structured content encoded: the event
			// shares those bytes rather than encoding them again (that was
			// a tenth of the server's CPU on a read_cell).
			if raw, ok := res.StructuredContent.(json.RawMessage); ok {
				outcome.Structured = raw
			} else if res.StructuredContent != nil {
				outcome.Structured, _ = json.Marshal(res.StructuredContent)
			}
			if len(res.Meta) > 0 {
				outcome.Meta, _ = json.Marshal(res.Meta)
			}
			measureResult(&outcome, res)
		}
		finish(outcome)
		if res == nil {
			return result, err
		}
		return res, err
	}
}

// safely runs a method handler so that a panic in it (a bug here, in the
// SDK or in the engine) fails that one request, logged with its stack,
// instead of killing the process and every session with it.
func (s *Server) safely(next sdk.MethodHandler, ctx context.Context, method string, req sdk.Request) (res sdk.Result, err error) {
	defer func() {
		if r := recover(); r != nil {
			s.log.Error("panic in a request handler (server bug)", "method", method, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
			msg := fmt.Sprintf("internal error in this MCP server while handling %s (a bug; it has been logged): %v", method, r)
			if method == "tools/call" {
				text := "Server error (Jupyter or this MCP server failed, not your arguments): " + msg
				if p, ok := req.GetParams().(*sdk.CallToolParamsRaw); ok && p != nil {
					text = toolErrorText(p.Name, text)
				}
				res, err = &sdk.CallToolResult{IsError: true, Content: []sdk.Content{&sdk.TextContent{Text: text}}}, nil
				return
			}
			res, err = nil, &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: msg}
		}
	}()
	return next(ctx, method, req)
}

// rewriteArgumentError makes the SDK's input-validation error say what the
// tool accepts, so an agent can fix its call in one go.
func rewriteArgumentError(d *toolDef, res *sdk.CallToolResult) {
	if len(res.Content) != 1 {
		return
	}
	tc, ok := res.Content[0].(*sdk.TextContent)
	if !ok {
		return
	}
	const prefix = `validating "arguments": `
	switch {
	case strings.HasPrefix(tc.Text, prefix):
		detail := strings.TrimPrefix(tc.Text, prefix)
		detail = strings.ReplaceAll(detail, "validating root: ", "")
		// The validator prints numbers as rationals and floats ("-2/1 is
		// less than -1.000000"); an agent reads integers.
		detail = rationalNumber.ReplaceAllString(detail, "$1")
		detail = floatNumber.ReplaceAllString(detail, "$1")
		// A number below a minimum (a negative index) or above a maximum
		// is out of range, as the reference says it.
		detail = belowMinimum.ReplaceAllString(detail, "$1 $2 is out of range: the least it takes is $3")
		detail = aboveMaximum.ReplaceAllString(detail, "$1 $2 is out of range: the most it takes is $3")
		tc.Text = toolErrorText(d.name, "invalid arguments: "+detail+". Expected "+usage(d.input)+".")
	case strings.HasPrefix(tc.Text, "json: cannot unmarshal"), strings.HasPrefix(tc.Text, "unmarshaling arguments"):
		tc.Text = toolErrorText(d.name, "invalid arguments: "+tc.Text+". Expected "+usage(d.input)+".")
	}
}

var (
	rationalNumber = regexp.MustCompile(`(-?\d+)/1\b`)
	floatNumber    = regexp.MustCompile(`(-?\d+)\.0+\b`)
	belowMinimum   = regexp.MustCompile(`validating /properties/(\w+): minimum: (-?\d+) is less than (-?\d+)`)
	aboveMaximum   = regexp.MustCompile(`validating /properties/(\w+): maximum: (-?\d+) is greater than (-?\d+)`)
)

// contentText joins the text content of a result (images are counted, not
// copied, in the outcome).
func contentText(content []sdk.Content) string {
	var parts []string
	for _, c := range content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func newCallID() string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return "c-" + hex.EncodeToString(b[:])
}

// stackReserve is how much stack a tool call is given up front. The SDK
// runs every request on a fresh goroutine, whose stack starts small; input
// and output schema validation (jsonschema's validator has large, recursive
// frames) then grew it several times per call, each growth copying a stack
// that is already deep by then. Growing it once, while it is still shallow,
// costs one copy of a few frames.
const stackReserve = 16 << 10

// stackIndex keeps growStack's frame from being optimised away.
var stackIndex = 0

//go:noinline
func growStack() byte {
	var buf [stackReserve]byte
	buf[stackIndex] = 1
	return buf[stackIndex]
}
