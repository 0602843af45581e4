package procgroup

import (
	"errors"
	"fmt"
	"os"
	"sync"
	"syscall"
	"unsafe"

	"golang.org/x/sys/windows"
)

// ErrNoInterrupt says why a running child cannot be interrupted here.
var ErrNoInterrupt = errors.New("interrupting a running child is not possible on Windows: there is no SIGINT to send to another process (only a kill)")

// Attr starts the child in a new process group, so that a Ctrl-C in our
// console does not reach it (as Setpgid does on Unix); Adopt then puts it
// in a Job Object.
func Attr(onParentDeath syscall.Signal) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP}
}

// WatchParent returns nothing on Windows: the Job Object does the work.
func WatchParent(sig syscall.Signal) string { return "" }

// Group is a started child and, through its Job Object, every process it
// started.
type Group struct {
	p   *os.Process
	mu  sync.Mutex
	job windows.Handle // 0 once closed, or when Adopt could not make one
}

// Adopt puts p in a new Job Object that kills all its processes when its
// last handle closes; this process holds the only handle (not inheritable),
// so the job dies with us. Children p starts later join the job. p runs
// for the moment between its start and this call outside the job: a
// Python interpreter starts nothing that early.
//
// When no job can be made, the group still works (Kill kills p alone) and
// the error says what is lost.
func Adopt(p *os.Process) (*Group, error) {
	g := &Group{p: p}
	job, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return g, fmt.Errorf("no Job Object (%w): processes started by pid %d may outlive this one", err, p.Pid)
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(job, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(job)
		return g, fmt.Errorf("cannot set up the Job Object (%w): processes started by pid %d may outlive this one", err, p.Pid)
	}
	h, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(p.Pid))
	if err == nil {
		err = windows.AssignProcessToJobObject(job, h)
		windows.CloseHandle(h)
	}
	if err != nil {
		windows.CloseHandle(job)
		return g, fmt.Errorf("cannot put pid %d in a Job Object (%w): processes it starts may outlive this one", p.Pid, err)
	}
	g.job = job
	return g, nil
}

// Interrupt cannot work on Windows: see ErrNoInterrupt.
func (g *Group) Interrupt() error { return ErrNoInterrupt }

// Terminate has no gentle form on Windows (no SIGTERM to deliver to
// another process): it sends nothing and reports false, so the caller
// goes straight to Kill.
func (g *Group) Terminate() bool { return false }

// Kill ends every process of the job (the child and what it started), or
// the child alone when it has no job.
func (g *Group) Kill() {
	g.mu.Lock()
	job := g.job
	g.job = 0
	g.mu.Unlock()
	if job != 0 {
		_ = windows.TerminateJobObject(job, 1)
		_ = windows.CloseHandle(job)
	}
	_ = g.p.Kill()
}
