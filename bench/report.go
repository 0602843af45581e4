package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

// goal is how a figure is judged.
type goal int

const (
	info     goal = iota // reported, no target
	ratioMax             // ours/baseline <= limit
	atMost               // ours <= limit
	atLeast              // ours >= limit
	ratioMin             // ours/baseline >= limit (throughput against a baseline)
)

// figure is one row of the table and one object of the JSON.
type figure struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Unit         string   `json:"unit"`
	Ours         float64  `json:"ours"`
	Baseline     *float64 `json:"baseline,omitempty"`
	BaselineName string   `json:"baseline_name,omitempty"`
	Ratio        *float64 `json:"ratio,omitempty"`
	Target       string   `json:"target"`
	Result       string   `json:"result"` // pass, FAIL, info or error
	Samples      int      `json:"samples,omitempty"`
	Notes        string   `json:"notes,omitempty"`
	Error        string   `json:"error,omitempty"`
	// Extra holds the finer numbers behind a row (per-kind p50s, CPU).
	Extra map[string]float64 `json:"extra,omitempty"`

	goal  goal
	limit float64
}

// judge fills Ratio, Target and Result from the goal.
func (f *figure) judge() {
	if f.Error != "" {
		f.Result = "error"
		if f.Target == "" {
			f.Target = "-"
		}
		return
	}
	if f.Baseline != nil && *f.Baseline > 0 {
		r := f.Ours / *f.Baseline
		f.Ratio = &r
	}
	pass := true
	switch f.goal {
	case info:
		f.Target, f.Result = "-", "info"
		return
	case ratioMax:
		f.Target = fmt.Sprintf("<= %.2fx", f.limit)
		pass = f.Ratio != nil && *f.Ratio <= f.limit
	case ratioMin:
		f.Target = fmt.Sprintf(">= %.2fx", f.limit)
		pass = f.Ratio != nil && *f.Ratio >= f.limit
	case atMost:
		f.Target = fmt.Sprintf("<= %s %s", num(f.limit), f.Unit)
		pass = f.Ours <= f.limit
	case atLeast:
		f.Target = fmt.Sprintf(">= %s %s", num(f.limit), f.Unit)
		pass = f.Ours >= f.limit
	}
	f.Result = "pass"
	if !pass {
		f.Result = "FAIL"
	}
}

func num(v float64) string {
	switch {
	case v >= 1000:
		return fmt.Sprintf("%.0f", v)
	case v >= 100:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

// report is the whole run, as written to -out.
type report struct {
	Started  time.Time `json:"started"`
	Seconds  float64   `json:"seconds"`
	Binary   string    `json:"binary"`
	Machine  machine   `json:"machine"`
	Rounds   int       `json:"rounds"`
	Figures  []*figure `json:"figures"`
	Failures int       `json:"failures"`
}

type machine struct {
	CPUs      int    `json:"cpus"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	GoVersion string `json:"go_version"`
	Load      string `json:"load_at_start,omitempty"`
}

func newMachine() machine {
	load, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(load))
	if len(f) > 3 {
		f = f[:3]
	}
	return machine{CPUs: runtime.NumCPU(), GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		GoVersion: runtime.Version(), Load: strings.Join(f, " ")}
}

// printTable writes the table people read.
func (r *report) printTable(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "figure\tours\tbaseline\tratio\ttarget\tresult\tnotes")
	for _, f := range r.Figures {
		ours := num(f.Ours) + " " + f.Unit
		base, ratio := "-", "-"
		if f.Baseline != nil {
			base = num(*f.Baseline) + " " + f.Unit
			if f.BaselineName != "" {
				base += " (" + f.BaselineName + ")"
			}
		}
		if f.Ratio != nil {
			ratio = fmt.Sprintf("%.2fx", *f.Ratio)
		}
		notes := f.Notes
		if f.Error != "" {
			ours, notes = "-", firstLine(f.Error)
		}
		fmt.Fprintf(tw, "%s %s\t%s\t%s\t%s\t%s\t%s\t%s\n", f.ID, f.Name, ours, base, ratio, f.Target, f.Result, notes)
	}
	tw.Flush()
	fmt.Fprintf(w, "\n%d figures, %d failed or errored; %d CPUs, load at start %s; %.0f s.\n",
		len(r.Figures), r.Failures, r.Machine.CPUs, r.Machine.Load, r.Seconds)
}

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if len(s) > 160 {
		s = s[:160] + "..."
	}
	return s
}

func (r *report) write(path string) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // targets read "<= 1.25x", not "\u003c= 1.25x"
	enc.SetIndent("", "  ")
	if err := enc.Encode(r); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}
