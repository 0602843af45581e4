package sandbox

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/notebook"
)

func launchEval(t *testing.T) *EvalSandbox {
	t.Helper()
	if evalUnsupported != nil {
		t.Skip(evalUnsupported) // Windows: the sentence says why
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	s, err := LaunchEval(ctx, EvalOptions{})
	if err != nil {
		t.Fatalf("LaunchEval: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := s.Terminate(ctx); err != nil {
			t.Errorf("Terminate: %v", err)
		}
	})
	return s
}

func execEval(t *testing.T, s Sandbox, code string, timeout time.Duration, onOutput func(notebook.Output)) Result {
	t.Helper()
	res, err := s.Execute(context.Background(), Request{Code: code, Timeout: timeout, OnOutput: onOutput})
	if err != nil {
		t.Fatalf("Execute(%q): %v", code, err)
	}
	return res
}

// outputText renders outputs as one string for assertions: streams as their
// text, results as their text/plain, errors as "ename: evalue".
func outputText(outs []notebook.Output) string {
	var b strings.Builder
	for _, o := range outs {
		switch o.OutputType {
		case notebook.Stream:
			b.WriteString(o.Text)
		case notebook.ExecuteResult, notebook.DisplayData:
			if v, ok := o.Data["text/plain"]; ok {
				b.WriteString(jsonString(v))
				b.WriteString("\n")
			}
		case notebook.Error:
			b.WriteString(o.EName + ": " + o.EValue + "\n")
		}
	}
	return b.String()
}

func jsonString(v json.RawMessage) string {
	var s string
	if err := json.Unmarshal(v, &s); err != nil {
		return string(v)
	}
	return s
}
