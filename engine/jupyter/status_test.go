package jupyter_test

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter/jupytertest"
)

// statusFaults answers the first fail requests for api/status with the 500
// jupyter_server gives when a kernel shuts down while it lists kernels, and
// the later ones with a 200 of its own: the shared server can give that
// very 500 for real while the package's other tests shut kernels down,
// which would be counted as one more try. Everything else goes to the real
// server.
type statusFaults struct {
	fail, seen atomic.Int32
}

func (f *statusFaults) RoundTrip(r *http.Request) (*http.Response, error) {
	if strings.HasSuffix(r.URL.Path, "/api/status") {
		f.seen.Add(1)
		if f.fail.Add(-1) >= 0 {
			return &http.Response{StatusCode: http.StatusInternalServerError, Status: "500 Internal Server Error",
				Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
				Body: io.NopCloser(strings.NewReader(`{"message": "Unhandled error"}`))}, nil
		}
		return &http.Response{StatusCode: http.StatusOK, Status: "200 OK",
			Header: http.Header{"Content-Type": {"application/json"}}, Request: r,
			Body: io.NopCloser(strings.NewReader(`{"connections": 0, "kernels": 0, "started": "2026-01-01T00:00:00Z"}`))}, nil
	}
	return http.DefaultTransport.RoundTrip(r)
}

// A server error from api/status is asked again, twice; a third is the
// answer.
func TestStatusAsksAgainAfterServerError(t *testing.T) {
	t.Parallel()
	srv := jupytertest.Shared(t)
	for _, tc := range []struct {
		fail int32
		ok   bool
	}{{0, true}, {1, true}, {2, true}, {3, false}} {
		f := &statusFaults{}
		f.fail.Store(tc.fail)
		c := srv.ClientWith(jupyter.Options{HTTPClient: &http.Client{Transport: f}})
		_, err := c.Status(testCtx(t))
		var ae *jupyter.APIError
		switch {
		case tc.ok && err != nil:
			t.Errorf("%d failures: %v", tc.fail, err)
		case !tc.ok && (!errors.As(err, &ae) || ae.Status != http.StatusInternalServerError):
			t.Errorf("%d failures: %v, want the 500", tc.fail, err)
		}
		if want := min(tc.fail+1, 3); f.seen.Load() != want {
			t.Errorf("%d failures: api/status asked %d times, want %d", tc.fail, f.seen.Load(), want)
		}
	}
}
