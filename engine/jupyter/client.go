// Package jupyter talks to a Jupyter server: the REST API (contents,
// kernels, sessions, kernelspecs), the kernel websocket channel, and a
// managed local jupyter-server process.
package jupyter

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

// Client is a Jupyter REST client for one server. The base URL may carry a
// path (a JupyterHub single-user server lives under /user/NAME/). The token
// goes in the Authorization header, never in URLs that are logged.
type Client struct {
	base    *url.URL // always ends in "/"
	token   string
	http    *http.Client
	timeout time.Duration
	// forceLegacy makes ConnectKernel skip the v1 subprotocol.
	forceLegacy bool
	// roots are the server's root directories learned from its error
	// messages, removed from every later one (errtext.go).
	roots roots
	// state is what the supervisor of a managed server last said about it
	// (nil: nothing known, or an external server). While it is not up,
	// requests fail at once instead of dialing: a restarting server has
	// nothing to answer, and a stranger that took its port must not be
	// sent our token.
	state atomic.Pointer[ServerState]
	// supervised is set once a supervisor has reported: the server is
	// ours, and comes back by itself.
	supervised atomic.Bool
	// stateCh is closed (and forgotten) at every SetServerState: requests
	// waiting for a server to start wait on it.
	stateMu sync.Mutex
	stateCh chan struct{}
}

// Options tune a Client. Zero values mean defaults.
type Options struct {
	HTTPClient *http.Client  // default: one with sane timeouts
	Timeout    time.Duration // per REST request, default 30s
	// ForceLegacy makes kernel channels speak the legacy JSON websocket
	// protocol even when the server offers v1 (tests use it to exercise the
	// fallback that older servers need).
	ForceLegacy bool
}

// ErrUnreachable wraps errors where no HTTP answer came back at all
// (connection refused, DNS failure, timeout before any response).
// errors.As with *UnreachableError gives the facts.
var ErrUnreachable = errors.New("jupyter server not reachable")

const defaultTimeout = 30 * time.Second

// NewClient returns a client for the server at baseURL with token (may be
// empty). It does not contact the server; use Status for that.
func NewClient(baseURL, token string, opts Options) (*Client, error) {
	u, err := url.Parse(strings.TrimSpace(baseURL))
	if err != nil {
		return nil, fmt.Errorf("invalid Jupyter URL %q: %w", baseURL, err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("invalid Jupyter URL %q: want http:// or https://", baseURL)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("invalid Jupyter URL %q: no host", baseURL)
	}
	// A token pasted as ?token=... is moved to the header so that it never
	// shows up in error messages that print the base URL.
	q := u.Query()
	if t := q.Get("token"); t != "" {
		if token == "" {
			token = t
		}
		q.Del("token")
	}
	u.RawQuery = q.Encode()
	u.Fragment = ""
	u.User = nil
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	c := &Client{base: u, token: token, http: opts.HTTPClient, timeout: opts.Timeout, forceLegacy: opts.ForceLegacy}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	if c.http == nil {
		c.http = &http.Client{Transport: &http.Transport{
			Proxy:                 http.ProxyFromEnvironment,
			DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
			MaxIdleConnsPerHost:   8,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: 0, // the per-request context bounds it
		}}
	}
	return c, nil
}

// CloseIdleConnections closes the keep-alive connections the client holds
// (Engine.Close and a switch of server call it, so that no connection to a
// server we are done with lingers).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// SameServer reports whether o speaks to the same server URL with the same
// token.
func (c *Client) SameServer(o *Client) bool {
	return c != nil && o != nil && c.base.String() == o.base.String() && c.token == o.token
}

// BaseURL is the server's base URL, always ending in "/".
func (c *Client) BaseURL() string { return c.base.String() }

// Status checks that the server answers GET api/ and that the token is
// accepted; the error says which server and what it answered.
func (c *Client) Status(ctx context.Context) (*ServerInfo, error) {
	var info ServerInfo
	if err := c.do(ctx, http.MethodGet, "api/", nil, nil, &info); err != nil {
		return nil, err
	}
	// api/ answers without authentication; api/status needs the token, so it
	// is what tells a wrong token apart from a working one.
	if err := c.status(ctx); err != nil {
		return nil, err
	}
	return &info, nil
}

// answers checks that the server answers api/status with the token: one
// request (api/ answers with a redirect first on jupyter-server 1.x), for
// polling a server that is starting.
func (c *Client) answers(ctx context.Context) error {
	return c.status(ctx)
}

// status is GET api/status. jupyter_server answers it 500 when a kernel
// shuts down while it lists them (a KeyError in list_kernels): a server
// error there is asked again, twice, a moment later.
func (c *Client) status(ctx context.Context) error {
	for attempt := 1; ; attempt++ {
		err := c.do(ctx, http.MethodGet, "api/status", nil, nil, nil)
		var ae *APIError
		if err == nil || attempt == 3 || !errors.As(err, &ae) || ae.Status < 500 {
			return err
		}
		select {
		case <-time.After(time.Duration(attempt) * 50 * time.Millisecond):
		case <-ctx.Done():
			return err
		}
	}
}

// ServerInfo is what GET api/ answers.
type ServerInfo struct {
	Version string `json:"version"`
}

// APIError is a non-2xx answer from the server.
type APIError struct {
	Server  string // base URL (no token)
	Method  string
	Path    string // API path relative to the base URL
	Status  int
	Message string // the server's message or reason, without its root path
}

// NameTooLong reports whether the server's file system refused the path as
// too long (Jupyter answers 500 "[Errno 36] File name too long").
func (e *APIError) NameTooLong() bool {
	return strings.Contains(e.Message, "File name too long")
}

// NoDirectory reports whether a file could not be written because its
// directory does not exist or is a file (Jupyter answers a PUT with 500
// "[Errno 2] No such file or directory" or "[Errno 20] Not a directory").
func (e *APIError) NoDirectory() bool {
	return e.Method == http.MethodPut &&
		(strings.Contains(e.Message, "No such file or directory") || strings.Contains(e.Message, "Not a directory"))
}

// CallerCanFix marks the refusals that are about the path asked for, not a
// failure of the server.
func (e *APIError) CallerCanFix() bool { return e.NameTooLong() || e.NoDirectory() }

func (e *APIError) Error() string {
	var b strings.Builder
	switch e.Status {
	case http.StatusUnauthorized, http.StatusForbidden:
		fmt.Fprintf(&b, "the Jupyter server at %s refused the token (%d) on %s %s", e.Server, e.Status, e.Method, e.Path)
		if e.Message != "" {
			fmt.Fprintf(&b, ": %s", e.Message)
		}
		b.WriteString("; check that the token matches the server's (the one in the URL it printed when it started)")
	default:
		fmt.Fprintf(&b, "the Jupyter server at %s answered %s %s with %d %s", e.Server, e.Method, e.Path, e.Status, http.StatusText(e.Status))
		if e.Message != "" {
			fmt.Fprintf(&b, ": %s", e.Message)
		}
	}
	return b.String()
}

// IsNotFound reports whether err is an APIError with status 404.
func IsNotFound(err error) bool {
	var ae *APIError
	return errors.As(err, &ae) && ae.Status == http.StatusNotFound
}

// Model is a contents API model. Content is the raw JSON of the content
// field (the notebook JSON for notebooks, an array of Models for
// directories, a string for files); it is nil when not requested.
type Model struct {
	Name         string          `json:"name"`
	Path         string          `json:"path"`
	Type         string          `json:"type"` // notebook, file, directory
	Format       string          `json:"format,omitempty"`
	Mimetype     string          `json:"mimetype,omitempty"`
	Writable     bool            `json:"writable"`
	Created      time.Time       `json:"created"`
	LastModified time.Time       `json:"last_modified"`
	Size         *int64          `json:"size,omitempty"`
	Content      json.RawMessage `json:"content,omitempty"`
	// Served is when the server answered, by its own clock (the Date
	// header, to the second); zero when it sent none.
	Served time.Time `json:"-"`
}

// escapePath URL-escapes each segment of a contents path so that names with
// spaces, '#', '?' or '%' reach the server intact.
func escapePath(p string) string {
	p = strings.Trim(p, "/")
	if p == "" {
		return ""
	}
	segs := strings.Split(p, "/")
	for i, s := range segs {
		segs[i] = url.PathEscape(s)
	}
	return strings.Join(segs, "/")
}

func contentsPath(p string) string {
	if e := escapePath(p); e != "" {
		return "api/contents/" + e
	}
	return "api/contents"
}

// Get fetches the model at path; with content false only the metadata
// (cheap: used to check last_modified before a save).
func (c *Client) Get(ctx context.Context, path string, content bool) (*Model, error) {
	q := url.Values{}
	if content {
		q.Set("content", "1")
		if strings.HasSuffix(strings.ToLower(path), ".ipynb") {
			q.Set("type", "notebook")
		}
	} else {
		q.Set("content", "0")
	}
	var m Model
	if err := c.do(ctx, http.MethodGet, contentsPath(path), q, nil, &m); err != nil {
		return nil, err
	}
	m.normalize()
	return &m, nil
}

// GetText reads the file at path as the text on disk: the server neither
// parses nor converts it, and the model's Content is that text (not JSON
// quoted). A notebook read this way is safe from jupyter_server's recovery
// of an unreadable notebook: on its asynchronous contents manager (the
// default from jupyter_server 2) a notebook read runs beside a save of the
// same file, can meet it half-written, and then moves the file aside and
// puts the save's backup in its place, so that the save, already answered
// as a success, is lost (jupyter-server/jupyter_server#1416).
func (c *Client) GetText(ctx context.Context, path string) (*Model, error) {
	q := url.Values{"content": {"1"}, "type": {"file"}, "format": {"text"}}
	var m Model
	if err := c.do(ctx, http.MethodGet, contentsPath(path), q, nil, &m); err != nil {
		return nil, err
	}
	var text string
	if err := json.Unmarshal(m.Content, &text); err != nil || m.Format != "text" {
		return nil, fmt.Errorf("reading %q as text from %s: the server answered format %q", path, c.BaseURL(), m.Format)
	}
	m.Content = []byte(text)
	return &m, nil
}

// normalize turns a JSON null content into nil so that callers can test
// len(Content) == 0.
func (m *Model) normalize() {
	if bytes.Equal(bytes.TrimSpace(m.Content), []byte("null")) {
		m.Content = nil
	}
}

// List returns the entries of the directory at path ("" is the root).
func (c *Client) List(ctx context.Context, path string) ([]Model, error) {
	q := url.Values{"content": {"1"}, "type": {"directory"}}
	var m Model
	if err := c.do(ctx, http.MethodGet, contentsPath(path), q, nil, &m); err != nil {
		return nil, err
	}
	if m.Type != "directory" {
		return nil, fmt.Errorf("%s is a %s, not a directory", path, m.Type)
	}
	var entries []Model
	if len(m.Content) > 0 {
		if err := json.Unmarshal(m.Content, &entries); err != nil {
			return nil, fmt.Errorf("decoding the listing of %q from %s: %w", path, c.BaseURL(), err)
		}
	}
	for i := range entries {
		entries[i].normalize()
	}
	return entries, nil
}

// SaveNotebook writes notebook JSON (as produced by notebook.Marshal) to
// path, creating or replacing it, and returns the new model (without
// content) carrying the new last_modified.
func (c *Client) SaveNotebook(ctx context.Context, path string, nbJSON []byte) (*Model, error) {
	// NaN and the infinities, which Python's json writes (and nbformat
	// keeps), are what Jupyter reads too.
	if !json.Valid(notebook.StrictJSON(nbJSON)) {
		return nil, fmt.Errorf("saving %s: the notebook is not valid JSON", path)
	}
	// The notebook is spliced in as raw bytes: re-encoding a multi-megabyte
	// notebook through a map would cost time and could reorder its keys.
	body := make([]byte, 0, len(nbJSON)+64)
	body = append(body, `{"type":"notebook","format":"json","content":`...)
	body = append(body, nbJSON...)
	body = append(body, '}')
	return c.put(ctx, path, body)
}

// SaveText writes a text file.
func (c *Client) SaveText(ctx context.Context, path, text string) (*Model, error) {
	body, err := json.Marshal(map[string]string{"type": "file", "format": "text", "content": text})
	if err != nil {
		return nil, err
	}
	return c.put(ctx, path, body)
}

// CreateDirectory creates a directory at path.
func (c *Client) CreateDirectory(ctx context.Context, path string) (*Model, error) {
	return c.put(ctx, path, []byte(`{"type":"directory"}`))
}

func (c *Client) put(ctx context.Context, path string, body []byte) (*Model, error) {
	var m Model
	if err := c.do(ctx, http.MethodPut, contentsPath(path), nil, body, &m); err != nil {
		return nil, err
	}
	m.normalize()
	return &m, nil
}

// Rename moves the file at oldPath to newPath.
func (c *Client) Rename(ctx context.Context, oldPath, newPath string) (*Model, error) {
	body, err := json.Marshal(map[string]string{"path": strings.Trim(newPath, "/")})
	if err != nil {
		return nil, err
	}
	var m Model
	if err := c.do(ctx, http.MethodPatch, contentsPath(oldPath), nil, body, &m); err != nil {
		return nil, err
	}
	m.normalize()
	return &m, nil
}

// Delete removes the file or empty directory at path.
func (c *Client) Delete(ctx context.Context, path string) error {
	return c.do(ctx, http.MethodDelete, contentsPath(path), nil, nil, nil)
}

// Kernel is a running kernel.
type Kernel struct {
	ID             string    `json:"id"`
	Name           string    `json:"name"`
	LastActivity   time.Time `json:"last_activity"`
	ExecutionState string    `json:"execution_state"`
	Connections    int       `json:"connections"`
}

// ListKernels lists running kernels.
func (c *Client) ListKernels(ctx context.Context) ([]Kernel, error) {
	var ks []Kernel
	if err := c.do(ctx, http.MethodGet, "api/kernels", nil, nil, &ks); err != nil {
		return nil, err
	}
	return ks, nil
}

// GetKernel returns one kernel; an unknown id is an *APIError with Status 404.
func (c *Client) GetKernel(ctx context.Context, id string) (*Kernel, error) {
	var k Kernel
	if err := c.do(ctx, http.MethodGet, "api/kernels/"+url.PathEscape(id), nil, nil, &k); err != nil {
		return nil, err
	}
	return &k, nil
}

// StartKernel starts a kernel of the given spec name ("" = server default).
func (c *Client) StartKernel(ctx context.Context, name string) (*Kernel, error) {
	body := []byte(`{}`)
	if name != "" {
		var err error
		if body, err = json.Marshal(map[string]string{"name": name}); err != nil {
			return nil, err
		}
	}
	var k Kernel
	if err := c.do(ctx, http.MethodPost, "api/kernels", nil, body, &k); err != nil {
		return nil, err
	}
	return &k, nil
}

// InterruptKernel sends an interrupt to the kernel.
func (c *Client) InterruptKernel(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodPost, "api/kernels/"+url.PathEscape(id)+"/interrupt", nil, []byte(`{}`), nil)
}

// RestartKernel restarts the kernel (state is lost) and waits for the server
// to answer.
func (c *Client) RestartKernel(ctx context.Context, id string) (*Kernel, error) {
	var k Kernel
	if err := c.do(ctx, http.MethodPost, "api/kernels/"+url.PathEscape(id)+"/restart", nil, []byte(`{}`), &k); err != nil {
		return nil, err
	}
	return &k, nil
}

// ShutdownKernel stops the kernel.
func (c *Client) ShutdownKernel(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "api/kernels/"+url.PathEscape(id), nil, nil, nil)
}

// Session is a Jupyter session: a notebook path bound to a kernel.
type Session struct {
	ID     string `json:"id"`
	Path   string `json:"path"`
	Name   string `json:"name"`
	Type   string `json:"type"`
	Kernel Kernel `json:"kernel"`
}

// ListSessions lists sessions.
func (c *Client) ListSessions(ctx context.Context) ([]Session, error) {
	var ss []Session
	if err := c.do(ctx, http.MethodGet, "api/sessions", nil, nil, &ss); err != nil {
		return nil, err
	}
	return ss, nil
}

// CreateSession binds path to a kernel: an existing one when kernelID is
// set, otherwise a new kernel of kernelName ("" = default).
func (c *Client) CreateSession(ctx context.Context, path, kernelName, kernelID string) (*Session, error) {
	type kernelRef struct {
		ID   string `json:"id,omitempty"`
		Name string `json:"name,omitempty"`
	}
	req := struct {
		Path   string    `json:"path"`
		Name   string    `json:"name"`
		Type   string    `json:"type"`
		Kernel kernelRef `json:"kernel"`
	}{Path: strings.Trim(path, "/"), Name: baseName(path), Type: "notebook"}
	if kernelID != "" {
		req.Kernel.ID = kernelID
	} else {
		req.Kernel.Name = kernelName
	}
	body, err := json.Marshal(req)
	if err != nil {
		return nil, err
	}
	var s Session
	if err := c.do(ctx, http.MethodPost, "api/sessions", nil, body, &s); err != nil {
		return nil, err
	}
	return &s, nil
}

func baseName(p string) string {
	p = strings.Trim(p, "/")
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// DeleteSession deletes a session (and shuts its kernel down).
func (c *Client) DeleteSession(ctx context.Context, id string) error {
	return c.do(ctx, http.MethodDelete, "api/sessions/"+url.PathEscape(id), nil, nil, nil)
}

// KernelSpecs is what GET api/kernelspecs answers.
type KernelSpecs struct {
	Default     string                    `json:"default"`
	Kernelspecs map[string]KernelSpecInfo `json:"kernelspecs"`
}

// KernelSpecInfo is one kernel spec.
type KernelSpecInfo struct {
	Name string `json:"name"`
	Spec struct {
		DisplayName string `json:"display_name"`
		Language    string `json:"language"`
	} `json:"spec"`
}

// KernelSpecs lists the kernel specs.
func (c *Client) KernelSpecs(ctx context.Context) (*KernelSpecs, error) {
	var ks KernelSpecs
	if err := c.do(ctx, http.MethodGet, "api/kernelspecs", nil, nil, &ks); err != nil {
		return nil, err
	}
	return &ks, nil
}

// resolve joins an already-escaped API path onto the base URL, keeping the
// base's own path (JupyterHub's /user/NAME/).
func (c *Client) resolve(apiPath string, q url.Values) *url.URL {
	u := *c.base
	rel := &url.URL{Opaque: ""}
	// Parse the escaped path as a relative reference so that escaped
	// segments stay escaped.
	if r, err := url.Parse(apiPath); err == nil {
		rel = r
	} else {
		rel.Path = apiPath
	}
	out := u.ResolveReference(rel)
	if q != nil {
		out.RawQuery = q.Encode()
	}
	return out
}

// do sends one request and decodes a JSON answer into out (when non-nil).
func (c *Client) do(ctx context.Context, method, apiPath string, q url.Values, body []byte, out any) error {
	if p, err := url.PathUnescape(apiPath); err == nil && HasControl(p) {
		return &ControlCharacterError{Value: strings.TrimPrefix(p, "api/")}
	}
	// A server still starting is waited for before the request's own
	// timeout starts: the start has its own bound.
	if err := c.down(ctx, method, apiPath); err != nil {
		return err
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	u := c.resolve(apiPath, q)
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, u.String(), rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.token != "" {
		req.Header.Set("Authorization", "token "+c.token)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return c.transportError(method, apiPath, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		data, _ := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
		msg := c.roots.hideServerPaths(errorMessage(data), apiPath)
		return &APIError{Server: c.BaseURL(), Method: method, Path: apiPath, Status: resp.StatusCode, Message: msg}
	}
	if out == nil {
		_, _ = io.Copy(io.Discard, resp.Body)
		return nil
	}
	if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
		return fmt.Errorf("the Jupyter server at %s answered %s %s with a body that is not the expected JSON: %w", c.BaseURL(), method, apiPath, err)
	}
	if m, ok := out.(*Model); ok {
		m.Served, _ = http.ParseTime(resp.Header.Get("Date"))
	}
	return nil
}

// transportError explains a request that got no HTTP answer.
func (c *Client) transportError(method, apiPath string, err error) error {
	if errors.Is(err, context.Canceled) {
		return err
	}
	e := &UnreachableError{Server: c.BaseURL(), Method: method, Path: apiPath, Err: err}
	var op *net.OpError
	var ne net.Error
	switch {
	case isConnRefused(err):
		e.Reason = "connection refused"
	case isConnReset(err), errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		e.Reason = "the connection was dropped"
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &ne) && ne.Timeout():
		e.Reason = "no answer in time"
	case errors.As(err, &op) && op.Op == "dial":
		e.Reason = op.Err.Error()
	default:
		e.Reason = err.Error()
	}
	if st := c.state.Load(); st != nil && st.Phase != PhaseUp {
		e.State = st
	}
	e.Managed = c.supervised.Load()
	return e
}

// SetServerState records what the supervisor of a managed server knows of
// it. While the phase is not PhaseUp, every request fails at once with an
// *UnreachableError carrying the state.
//
// While the phase is PhaseStarting, requests wait for the next state
// instead (or for their context to end).
func (c *Client) SetServerState(st ServerState) {
	c.supervised.Store(true)
	if st.Phase == PhaseUp {
		c.state.Store(nil)
	} else {
		c.state.Store(&st)
	}
	c.stateMu.Lock()
	if c.stateCh != nil {
		close(c.stateCh)
		c.stateCh = nil
	}
	c.stateMu.Unlock()
}

// stateChanged is closed by the next SetServerState.
func (c *Client) stateChanged() <-chan struct{} {
	c.stateMu.Lock()
	defer c.stateMu.Unlock()
	if c.stateCh == nil {
		c.stateCh = make(chan struct{})
	}
	return c.stateCh
}

// down is the error of a request made while the server is known not to be
// up, or nil. A server that is starting is waited for: nil once it is up,
// the failure if it cannot start, or, when ctx ends first, an error saying
// it is still starting.
func (c *Client) down(ctx context.Context, method, apiPath string) error {
	for {
		changed := c.stateChanged()
		st := c.state.Load()
		if st == nil || st.Phase == PhaseUp {
			return nil
		}
		if st.Phase == PhaseStarting {
			select {
			case <-changed:
				continue
			case <-ctx.Done():
				if errors.Is(ctx.Err(), context.Canceled) {
					return ctx.Err()
				}
			}
		}
		return &UnreachableError{Server: c.BaseURL(), Method: method, Path: apiPath, Reason: string(st.Phase), State: st, Managed: true, Err: ErrUnreachable}
	}
}

// UnreachableError is a request that got no HTTP answer: the server is not
// running, not at that address, or stopped answering. It is ErrUnreachable
// for errors.Is.
type UnreachableError struct {
	Server string // base URL, no token
	Method string
	Path   string // API path relative to the base URL
	// Reason is what the network said: "connection refused", "no answer in
	// time", "the connection was dropped", ...
	Reason string
	// State is set when the supervisor of a managed server knows it is
	// down: restarting, and why the last attempt failed.
	State *ServerState
	// Managed says the server is one this program supervises: it is
	// restarted by itself, even before State says so (the request may
	// have failed before the supervisor noticed the death).
	Managed bool
	Err     error // the network error underneath
}

func (e *UnreachableError) Error() string {
	if st := e.State; st != nil && st.Phase == PhaseFailed {
		return "the managed Jupyter server failed to start: " + st.Problem
	}
	if st := e.State; st != nil && st.Phase == PhaseStarting {
		return fmt.Sprintf("Jupyter at %s is not answering yet: the managed server is still starting", e.Server)
	}
	if st := e.State; st != nil {
		msg := fmt.Sprintf("Jupyter at %s is not answering: the managed server went down (%s) and is being restarted (attempt %d)", e.Server, st.Cause, st.Attempt)
		if st.Problem != "" {
			msg += "; the last attempt failed: " + st.Problem
		}
		return msg
	}
	return fmt.Sprintf("Jupyter at %s is not answering (%s)", e.Server, e.Reason)
}

func (e *UnreachableError) Unwrap() error        { return e.Err }
func (e *UnreachableError) Is(target error) bool { return target == ErrUnreachable }

// errorMessage pulls the message (or reason) out of a Jupyter JSON error
// body, falling back to the start of the body when it is not JSON (a proxy
// in front of JupyterHub answers in HTML).
func errorMessage(data []byte) string {
	var e struct {
		Message string `json:"message"`
		Reason  string `json:"reason"`
	}
	if json.Unmarshal(data, &e) == nil {
		switch {
		case e.Message != "" && e.Reason != "" && !strings.Contains(e.Message, e.Reason):
			return e.Message + " (" + e.Reason + ")"
		case e.Message != "":
			return e.Message
		case e.Reason != "":
			return e.Reason
		}
	}
	s := strings.TrimSpace(string(data))
	if strings.HasPrefix(s, "<") {
		return "" // an HTML page says nothing a status code does not
	}
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
