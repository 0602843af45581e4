package engine

import (
	"fmt"
	"strings"

	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/event"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/jupyter"
	"github.com/jupyter-mcp-workbench/jupyter-mcp-server/engine/sandbox"
)

// Previews of the calls that decide where code runs: choosing a sandbox
// for a session's code, launching one, switching the Jupyter server. They
// run no code themselves, but the code that follows runs where they say
// (a Python process on this machine, another server), so approval of code
// holds them too, with what they would do in view.

// previewWhere fills p for the operations that decide where code runs; ok
// is false for any other.
func (e *Engine) previewWhere(session string, req PreviewRequest, p *event.CallPreview) (ok bool, err error) {
	switch req.Op {
	case PreviewUseSandbox:
		return true, e.previewUseSandbox(session, req.Sandbox.Name, p)
	case PreviewLaunchSandbox:
		return true, e.previewLaunch(req.Sandbox, p)
	case PreviewConnect:
		return true, e.previewConnect(req.URL, p)
	}
	return false, nil
}

// sandboxPlace says where a sandbox's code runs, as a fact for the person.
func sandboxPlace(variant string, si sandbox.Info) string {
	switch variant {
	case sandbox.Eval:
		return "an eval sandbox runs code in a Python process on the machine of this server, as its user: the code reaches that machine's files and network"
	case sandbox.JupyterServer:
		if si.KernelID != "" {
			return fmt.Sprintf("its code runs on kernel %s at %s", si.KernelID, si.URL)
		}
		return "its code runs on a kernel of its own Jupyter server"
	}
	return "its code runs on the " + variant + " platform"
}

func (e *Engine) previewUseSandbox(session, name string, p *event.CallPreview) error {
	name = strings.TrimSpace(name)
	r := e.sandboxes
	if name == "" {
		p.What = "run this session's later code on Jupyter kernels, not on a sandbox"
		if en := r.activeFor(session); en != nil {
			p.What += fmt.Sprintf(" (it runs on sandbox %s now)", en.name)
		}
		return nil
	}
	r.mu.Lock()
	en := r.byName[name]
	var names []string
	if en == nil {
		names = r.namesLocked()
	}
	r.mu.Unlock()
	if en == nil {
		return &UnknownSandboxError{Name: name, Names: names}
	}
	p.What = fmt.Sprintf("run this session's later code on sandbox %s (%s, %s) instead of Jupyter kernels: %s", en.name, en.variant, en.id, sandboxPlace(en.variant, en.sb.Info()))
	return nil
}

func (e *Engine) previewLaunch(spec SandboxSpec, p *event.CallPreview) error {
	variant, err := e.sandboxes.variantOf(spec)
	if err != nil {
		return err
	}
	p.What = fmt.Sprintf("launch a %s sandbox named %s", variant, strings.TrimSpace(spec.Name))
	switch variant {
	case sandbox.Eval:
		p.What += ": " + sandboxPlace(variant, sandbox.Info{})
	case sandbox.JupyterServer:
		server := strings.TrimSpace(spec.ServerURL)
		if server == "" {
			server = e.JupyterURL()
		} else if c, err := jupyter.NewClient(server, "", jupyter.Options{}); err == nil {
			server = c.BaseURL() // no token pasted into the URL
		}
		if k := strings.TrimSpace(spec.KernelID); k != "" {
			p.What += fmt.Sprintf(": its code runs on kernel %s at %s, which is left running", k, server)
		} else {
			p.What += ": its code runs on a new kernel at " + server
		}
	}
	return nil
}

func (e *Engine) previewConnect(url string, p *event.CallPreview) error {
	c, err := jupyter.NewClient(url, "", jupyter.Options{})
	if err != nil {
		return Userf("%q is not a usable Jupyter URL (%v); nothing changed", strings.TrimSpace(url), err)
	}
	p.What = fmt.Sprintf("switch to the Jupyter server at %s (now %s): notebooks and code then run on its kernels", c.BaseURL(), e.JupyterURL())
	e.mu.RLock()
	inUse := e.inUseLocked()
	e.mu.RUnlock()
	if len(inUse) > 0 {
		p.Facts = append(p.Facts, fmt.Sprintf("the notebooks in use are released for every session, and the kernels this server started shut down: %s", strings.Join(inUse, ", ")))
	}
	return nil
}
