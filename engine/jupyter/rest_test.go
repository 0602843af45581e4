package jupyter_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestWrongTokenIsExplained(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	const bad = "not-the-token-7f3a9"
	c, err := jupyter.NewClient(srv.URL, bad, jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Status(testCtx(t))
	var ae *jupyter.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("error %v (%T), want *APIError", err, err)
	}
	if ae.Status != http.StatusForbidden && ae.Status != http.StatusUnauthorized {
		t.Fatalf("status %d", ae.Status)
	}
	msg := err.Error()
	t.Log(msg)
	for _, want := range []string{"the Jupyter server at " + srv.URL + " refused the token (" + strconv.Itoa(ae.Status) + ")", "GET api/status"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, bad) || strings.Contains(msg, srv.Token) {
		t.Errorf("message %q leaks a token", msg)
	}
	// The kernel websocket refuses the token the same way.
	_, err = c.ConnectKernel(testCtx(t), "00000000-0000-0000-0000-000000000000")
	if !errors.As(err, &ae) || (ae.Status != 403 && ae.Status != 401) {
		t.Fatalf("ConnectKernel with a wrong token: %v", err)
	}
}

func TestUnreachableServer(t *testing.T) {
	t.Parallel()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close() // nothing listens there now
	c, err := jupyter.NewClient("http://"+addr+"/user/bob", "tok", jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.Status(testCtx(t))
	if !errors.Is(err, jupyter.ErrUnreachable) {
		t.Fatalf("error %v, want ErrUnreachable", err)
	}
	t.Log(err)
	if want := "Jupyter at http://" + addr + "/user/bob/ is not answering (connection refused)"; !strings.Contains(err.Error(), want) {
		t.Fatalf("message %q does not say %q", err, want)
	}
}

func TestNotFoundMessages(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	c := srv.Client()
	ctx := testCtx(t)

	_, err := c.Get(ctx, "no such dir/missing.ipynb", false)
	var ae *jupyter.APIError
	if !errors.As(err, &ae) || ae.Status != 404 || !jupyter.IsNotFound(err) {
		t.Fatalf("Get of a missing file: %v", err)
	}
	if ae.Server != srv.URL || ae.Method != "GET" || ae.Path != "api/contents/no%20such%20dir/missing.ipynb" {
		t.Errorf("APIError fields %+v", ae)
	}
	msg := err.Error()
	for _, want := range []string{srv.URL, "GET api/contents/no%20such%20dir/missing.ipynb", "404", "does not exist"} {
		if !strings.Contains(msg, want) {
			t.Errorf("message %q does not say %q", msg, want)
		}
	}

	_, err = c.GetKernel(ctx, "00000000-0000-0000-0000-000000000000")
	if !jupyter.IsNotFound(err) {
		t.Fatalf("GetKernel of an unknown id: %v", err)
	}
	_, err = c.ConnectKernel(ctx, "00000000-0000-0000-0000-000000000000")
	if !jupyter.IsNotFound(err) {
		t.Fatalf("ConnectKernel to an unknown id: %v", err)
	}
}

// A notebook uploaded as raw bytes, read back and saved again must be the
// exact file Jupyter itself writes: no key reordering, no lost metadata.
func TestNotebookRoundTripIsByteIdentical(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	c := srv.Client()
	ctx := testCtx(t)
	orig, err := os.ReadFile("testdata/rich.ipynb")
	if err != nil {
		t.Fatal(err)
	}
	// Spaces, '#' and '?' in the name exercise path escaping.
	path := srv.Subdir(t) + "/rich copy #1?.ipynb"

	saved, err := c.SaveNotebook(ctx, path, orig)
	if err != nil {
		t.Fatal(err)
	}
	if saved.Type != "notebook" || saved.Path != path || saved.LastModified.IsZero() || saved.Content != nil {
		t.Fatalf("save answered %+v", saved)
	}
	assertFile(t, srv.Path(path), orig)

	got, err := c.Get(ctx, path, true)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != "notebook" || got.Format != "json" || !json.Valid(got.Content) {
		t.Fatalf("get answered type %q format %q, %d bytes", got.Type, got.Format, len(got.Content))
	}
	var nb struct {
		Metadata map[string]json.RawMessage `json:"metadata"`
		Cells    []struct {
			ID       string                     `json:"id"`
			Metadata map[string]json.RawMessage `json:"metadata"`
		} `json:"cells"`
	}
	if err := json.Unmarshal(got.Content, &nb); err != nil {
		t.Fatal(err)
	}
	if _, ok := nb.Metadata["x_custom_tool"]; !ok || len(nb.Cells) != 7 || nb.Cells[1].Metadata["x_unknown_cell_key"] == nil {
		t.Fatalf("content lost unknown metadata: %s", got.Content[:min(300, len(got.Content))])
	}

	if _, err := c.SaveNotebook(ctx, path, got.Content); err != nil {
		t.Fatal(err)
	}
	assertFile(t, srv.Path(path), orig)

	meta, err := c.Get(ctx, path, false)
	if err != nil {
		t.Fatal(err)
	}
	if meta.Content != nil || meta.LastModified.IsZero() {
		t.Fatalf("metadata-only get: %+v", meta)
	}
}

func assertFile(t *testing.T, path string, want []byte) {
	t.Helper()
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		i := 0
		for i < len(got) && i < len(want) && got[i] == want[i] {
			i++
		}
		t.Fatalf("%s differs from the original at byte %d: got %q, want %q", path, i,
			got[i:min(i+60, len(got))], want[i:min(i+60, len(want))])
	}
}

func TestSaveNotebookRejectsInvalidJSON(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	_, err := srv.Client().SaveNotebook(testCtx(t), srv.Subdir(t)+"/bad.ipynb", []byte(`{"cells": [`))
	if err == nil || !strings.Contains(err.Error(), "not valid JSON") {
		t.Fatalf("error %v", err)
	}
}

func TestFileOperations(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	c := srv.Client()
	ctx := testCtx(t)
	dir := srv.Subdir(t)

	sub := dir + "/sub dir"
	m, err := c.CreateDirectory(ctx, sub)
	if err != nil || m.Type != "directory" {
		t.Fatalf("CreateDirectory: %+v %v", m, err)
	}
	if st, err := os.Stat(srv.Path(sub)); err != nil || !st.IsDir() {
		t.Fatalf("directory not on disk: %v", err)
	}

	text := "héllo ✓\nsecond line\n"
	file := sub + "/notes 100%.txt"
	if _, err := c.SaveText(ctx, file, text); err != nil {
		t.Fatal(err)
	}
	assertFile(t, srv.Path(file), []byte(text))
	got, err := c.Get(ctx, file, true)
	if err != nil {
		t.Fatal(err)
	}
	var s string
	if err := json.Unmarshal(got.Content, &s); err != nil || s != text || got.Type != "file" || got.Format != "text" {
		t.Fatalf("Get text: %+v %q %v", got, s, err)
	}

	if _, err := c.SaveNotebook(ctx, sub+"/a.ipynb", mustRead(t, "testdata/rich.ipynb")); err != nil {
		t.Fatal(err)
	}
	entries, err := c.List(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range entries {
		names = append(names, e.Name+":"+e.Type)
		if e.Content != nil {
			t.Errorf("listing entry %s carries content", e.Name)
		}
	}
	slices.Sort(names)
	if want := []string{"a.ipynb:notebook", "notes 100%.txt:file"}; !slices.Equal(names, want) {
		t.Fatalf("List: %v, want %v", names, want)
	}
	if _, err := c.List(ctx, file); err == nil {
		t.Fatal("List of a file succeeded")
	}

	renamed := sub + "/b c.ipynb"
	m, err = c.Rename(ctx, sub+"/a.ipynb", renamed)
	if err != nil || m.Path != renamed {
		t.Fatalf("Rename: %+v %v", m, err)
	}
	if _, err := os.Stat(srv.Path(renamed)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(srv.Path(sub + "/a.ipynb")); !os.IsNotExist(err) {
		t.Fatalf("old name still there: %v", err)
	}

	for _, p := range []string{renamed, file, sub} {
		if err := c.Delete(ctx, p); err != nil {
			t.Fatalf("Delete %s: %v", p, err)
		}
	}
	if _, err := os.Stat(srv.Path(sub)); !os.IsNotExist(err) {
		t.Fatalf("directory still there: %v", err)
	}
	if err := c.Delete(ctx, sub); !jupyter.IsNotFound(err) {
		t.Fatalf("second Delete: %v", err)
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestKernelsSessionsAndSpecs(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	c := srv.Client()
	ctx := testCtx(t)

	specs, err := c.KernelSpecs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	py, ok := specs.Kernelspecs[specs.Default]
	if specs.Default != "python3" || !ok || py.Spec.Language != "python" || py.Spec.DisplayName == "" {
		t.Fatalf("kernelspecs %+v", specs)
	}

	path := srv.Subdir(t) + "/session nb.ipynb"
	s, err := c.CreateSession(ctx, path, "", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.ShutdownKernel(context.Background(), s.Kernel.ID) })
	if s.ID == "" || s.Path != path || s.Type != "notebook" || s.Kernel.ID == "" || s.Kernel.Name != "python3" {
		t.Fatalf("session %+v", s)
	}
	sessions, err := c.ListSessions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(sessions, func(x jupyter.Session) bool { return x.ID == s.ID }) {
		t.Fatalf("session %s not listed in %+v", s.ID, sessions)
	}
	kernels, err := c.ListKernels(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.ContainsFunc(kernels, func(k jupyter.Kernel) bool { return k.ID == s.Kernel.ID }) {
		t.Fatalf("kernel %s not listed", s.Kernel.ID)
	}

	// A second session bound to the existing kernel shares it.
	k := srv.StartKernel(t)
	s2, err := c.CreateSession(ctx, srv.Subdir(t)+"/other.ipynb", "", k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if s2.Kernel.ID != k.ID {
		t.Fatalf("session kernel %s, want %s", s2.Kernel.ID, k.ID)
	}

	got, err := c.GetKernel(ctx, k.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.ID != k.ID || got.ExecutionState == "" {
		t.Fatalf("GetKernel %+v", got)
	}

	// Deleting a session shuts its kernel down.
	for _, x := range []*jupyter.Session{s, s2} {
		if err := c.DeleteSession(ctx, x.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := c.GetKernel(ctx, x.Kernel.ID); !jupyter.IsNotFound(err) {
			t.Fatalf("kernel of a deleted session: %v", err)
		}
	}

	k3, err := c.StartKernel(ctx, "python3")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.ShutdownKernel(ctx, k3.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := c.GetKernel(ctx, k3.ID); !jupyter.IsNotFound(err) {
		t.Fatalf("kernel after shutdown: %v", err)
	}
}

// A JupyterHub single-user server lives under /user/NAME/: REST and the
// kernel websocket must both keep that prefix.
func TestBasePath(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Start(t, jupytertest.WithArgs("--ServerApp.base_url=/user/alice/"))
	if !strings.HasSuffix(srv.URL, "/user/alice/") {
		t.Fatalf("URL %s lacks the base path", srv.URL)
	}
	ctx := testCtx(t)
	// Given without the trailing slash, as people paste it.
	c, err := jupyter.NewClient(strings.TrimSuffix(srv.URL, "/"), srv.Token, jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != srv.URL {
		t.Fatalf("BaseURL %s, want %s", c.BaseURL(), srv.URL)
	}
	if _, err := c.Status(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.SaveText(ctx, "x y.txt", "hub"); err != nil {
		t.Fatal(err)
	}
	assertFile(t, filepath.Join(srv.RootDir, "x y.txt"), []byte("hub"))

	// Without the prefix the same server has nothing.
	root, _ := strings.CutSuffix(srv.URL, "user/alice/")
	bare, _ := jupyter.NewClient(root, srv.Token, jupyter.Options{})
	if _, err := bare.Get(ctx, "x y.txt", false); !jupyter.IsNotFound(err) {
		t.Fatalf("Get without the base path: %v, want 404", err)
	}

	k, err := c.StartKernel(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	kc := jupytertest.Connect(t, c, k.ID)
	res := execute(t, kc, "print('under alice')", 30*time.Second)
	if res.err != nil || res.stdout() != "under alice\n" {
		t.Fatalf("%+v %v %q", res.reply, res.err, res.stdout())
	}
}

func TestNewClient(t *testing.T) {
	t.Parallel()
	c, err := jupyter.NewClient("http://127.0.0.1:8888/user/x?token=abc", "", jupyter.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if c.BaseURL() != "http://127.0.0.1:8888/user/x/" {
		t.Fatalf("BaseURL %q: the token must leave the URL", c.BaseURL())
	}
	for _, bad := range []string{"", "127.0.0.1:8888", "ftp://h/", "http://"} {
		if _, err := jupyter.NewClient(bad, "", jupyter.Options{}); err == nil {
			t.Errorf("NewClient(%q) accepted", bad)
		}
	}
}
