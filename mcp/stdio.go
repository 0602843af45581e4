package mcp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxStdioLine bounds one inbound line on stdio, as the SDK's own
// transport does.
const maxStdioLine = sdk.DefaultMaxLineLength

// RunStdio serves one session on stdin/stdout until the client goes away or
// ctx is done. Nothing but protocol is written to stdout.
func (s *Server) RunStdio(ctx context.Context) error {
	return s.RunIO(ctx, os.Stdin, os.Stdout)
}

// RunIO serves one session of newline-delimited JSON-RPC on r and w. A line
// that is not JSON gets a parse error (-32700, id null) and one that is not
// a JSON-RPC message an invalid request (-32600), as JSON-RPC 2.0 says; the
// session goes on. The SDK's own transport ends the whole session on such a
// line, so one stray write by a client cost it every later call.
func (s *Server) RunIO(ctx context.Context, r io.Reader, w io.Writer) error {
	lw := &lockedWriter{w: w}
	lines := &checkedLines{in: bufio.NewReaderSize(r, 64<<10), src: r, out: lw, log: s.log.Warn}
	ss, err := s.srv.Connect(ctx, &sdk.IOTransport{Reader: lines, Writer: lw, MaxLineLength: -1}, nil)
	if err != nil {
		return err
	}
	// The session on our stdin is the host that spawned us: the person
	// using it is the one this server asks (trust.go).
	s.mu.Lock()
	s.host = ss
	s.mu.Unlock()
	ended := make(chan error, 1)
	go func() { ended <- ss.Wait() }()
	select {
	case <-ctx.Done():
		ss.Close()
		<-ended
		return ctx.Err()
	case err := <-ended:
		return err
	}
}

// lockedWriter serializes whole writes: the SDK writes each message (with
// its newline) in one call, and so do our error answers, so the two never
// interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

func (l *lockedWriter) Close() error { return nil }

// checkedLines hands the SDK only lines that are JSON-RPC messages and
// answers the others itself.
type checkedLines struct {
	in  *bufio.Reader
	src io.Reader // what in reads, closed with the session
	out io.Writer
	log func(msg string, args ...any)
	buf []byte // the rest of the current good line
}

func (c *checkedLines) Read(p []byte) (int, error) {
	for len(c.buf) == 0 {
		line, err := c.readLine()
		if len(line) > 0 {
			if ids, ok := batchRequests(line); ok {
				c.log("answering a JSON-RPC batch on stdio", "requests", len(ids))
				if werr := c.answerBatch(ids); werr != nil {
					return 0, werr
				}
			} else if msg, code := checkLine(line); code != 0 {
				c.log("answering a malformed JSON-RPC line on stdio", "code", code, "error", msg)
				if werr := c.answer(code, msg); werr != nil {
					return 0, werr
				}
			} else {
				c.buf = append(line, '\n')
			}
		}
		if err != nil && len(c.buf) == 0 {
			return 0, err
		}
		if err != nil {
			break
		}
	}
	n := copy(p, c.buf)
	c.buf = c.buf[n:]
	return n, nil
}

// Close closes the input when it can be closed (stdin), which ends the
// SDK's reading goroutine.
func (c *checkedLines) Close() error {
	if cl, ok := c.src.(io.Closer); ok {
		return cl.Close()
	}
	return nil
}

// readLine returns the next line without its end, trimmed of blanks. A line
// longer than maxStdioLine is skipped and reported as a parse error.
func (c *checkedLines) readLine() ([]byte, error) {
	var line []byte
	for {
		chunk, err := c.in.ReadSlice('\n')
		if len(line)+len(chunk) > maxStdioLine {
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = c.in.ReadSlice('\n')
			}
			if aerr := c.answer(jsonrpc.CodeParseError, fmt.Sprintf("Parse error: a line is longer than %d bytes", maxStdioLine)); aerr != nil {
				return nil, aerr
			}
			if err != nil {
				return nil, err
			}
			line = line[:0]
			continue
		}
		line = append(line, chunk...)
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		return bytes.TrimSpace(line), err
	}
}

// checkLine says what is wrong with a line: a parse error when it is not
// JSON, an invalid request when it is JSON but not a JSON-RPC message (or
// a batch of them). code is 0 for a good line.
func checkLine(line []byte) (msg string, code int64) {
	if !json.Valid(line) {
		var v any
		err := json.Unmarshal(line, &v)
		return "Parse error: " + err.Error(), jsonrpc.CodeParseError
	}
	if line[0] == '[' {
		return errBatch, jsonrpc.CodeInvalidRequest
	}
	if _, err := jsonrpc.DecodeMessage(line); err != nil {
		return "Invalid Request: " + err.Error(), jsonrpc.CodeInvalidRequest
	}
	return "", 0
}

// errBatch is what a batch is answered: MCP took JSON-RPC batching out in
// 2025-06-18, and the SDK ends the whole session (with this process and its
// kernels) on one.
const errBatch = "Invalid Request: JSON-RPC batches are not supported (MCP removed them in protocol 2025-06-18); send each message on its own line"

// batchRequests returns the ids of the requests in a batch line (ok false
// when the line is no non-empty array).
func batchRequests(line []byte) (ids []json.RawMessage, ok bool) {
	if line[0] != '[' {
		return nil, false
	}
	var batch []json.RawMessage
	if json.Unmarshal(line, &batch) != nil || len(batch) == 0 {
		return nil, false
	}
	for _, m := range batch {
		var msg struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
		}
		if json.Unmarshal(m, &msg) == nil && msg.Method != "" && len(msg.ID) > 0 && string(msg.ID) != "null" {
			ids = append(ids, msg.ID)
		}
	}
	return ids, true
}

// answerBatch refuses a batch as JSON-RPC 2.0 answers one: an array with
// an error for each request in it, so that a client waiting on those ids
// hears back. A batch of notifications and responses only has no one
// waiting, but is not silently dropped: one error with a null id says it
// was not read.
func (c *checkedLines) answerBatch(ids []json.RawMessage) error {
	if len(ids) == 0 {
		return c.answer(jsonrpc.CodeInvalidRequest, errBatch)
	}
	type errorBody struct {
		Code    int64  `json:"code"`
		Message string `json:"message"`
	}
	type response struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   errorBody       `json:"error"`
	}
	out := make([]response, len(ids))
	for i, id := range ids {
		out[i] = response{"2.0", id, errorBody{jsonrpc.CodeInvalidRequest, errBatch}}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = c.out.Write(append(b, '\n'))
	return err
}

// answer writes a JSON-RPC error response with a null id: the id of a line
// that could not be read cannot be known.
func (c *checkedLines) answer(code int64, msg string) error {
	b, err := json.Marshal(map[string]any{
		"jsonrpc": "2.0",
		"id":      nil,
		"error":   map[string]any{"code": code, "message": msg},
	})
	if err != nil {
		return err
	}
	_, err = c.out.Write(append(b, '\n'))
	return err
}
