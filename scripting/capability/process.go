package capability

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/reaper"
	"github.com/dsh-go/dsh/scripting"
)

// inheritedEnv are the variables a child inherits from dsh.
var inheritedEnv = []string{"PATH", "HOME", "LANG", "TMPDIR"}

// processModule is dsh/process.
type processModule struct {
	ws  *workspace
	cfg Config
}

func (m *processModule) module() scripting.Module {
	return scripting.Module{Name: "process", Funcs: map[string]scripting.ModuleFunc{"run": m.run}}
}

// runSpec is a validated run call.
type runSpec struct {
	argv    []string
	cwd     string // as the script wrote it
	rel     string // cwd relative to the workspace
	dir     string // absolute
	env     []string
	stdin   *string
	timeout time.Duration
}

func (m *processModule) parseRun(args []any) (*runSpec, error) {
	const op = "run"
	if err := arity(op, args, 2); err != nil {
		return nil, err
	}
	list, ok := arg(args, 0).([]any)
	if !ok || len(list) == 0 {
		return nil, invalid(op, "argv must be a non-empty array of strings")
	}
	spec := &runSpec{}
	for i, a := range list {
		s, ok := a.(string)
		if !ok {
			return nil, invalid(op, "argv[%d] must be a string", i)
		}
		if strings.IndexByte(s, 0) >= 0 {
			return nil, invalid(op, "argv[%d] must not contain a NUL byte", i)
		}
		spec.argv = append(spec.argv, s)
	}
	if spec.argv[0] == "" {
		return nil, invalid(op, "argv[0] must not be empty")
	}
	o, err := optionsArg(op, args, 1, "cwd", "env", "stdin", "timeoutMs")
	if err != nil {
		return nil, err
	}
	cwd, err := o.str("cwd", ".")
	if err != nil {
		return nil, err
	}
	rel, err := m.ws.rel(op, "options.cwd", cwd)
	if err != nil {
		return nil, err
	}
	spec.cwd, spec.rel = cwd, rel
	spec.dir = filepath.Join(m.ws.real, filepath.FromSlash(rel))
	if _, has := o.get("stdin"); has {
		s, err := o.str("stdin", "")
		if err != nil {
			return nil, err
		}
		spec.stdin = &s
	}
	ms, err := o.timeoutMs()
	if err != nil {
		return nil, err
	}
	spec.timeout = time.Duration(ms) * time.Millisecond
	env, err := o.stringMap("env", true)
	if err != nil {
		return nil, err
	}
	vars := map[string]string{}
	var order []string
	set := func(k, v string) {
		if _, ok := vars[k]; !ok {
			order = append(order, k)
		}
		vars[k] = v
	}
	for _, k := range inheritedEnv {
		if v, ok := os.LookupEnv(k); ok {
			set(k, v)
		}
	}
	for _, kv := range env {
		if kv.Key == "" || strings.ContainsAny(kv.Key, "=\x00") {
			return nil, invalid(op, "options.env has a bad variable name %q", kv.Key)
		}
		if kv.Value == nil {
			delete(vars, kv.Key)
			continue
		}
		v := kv.Value.(string)
		if strings.IndexByte(v, 0) >= 0 {
			return nil, invalid(op, "options.env[%q] must not contain a NUL byte", kv.Key)
		}
		set(kv.Key, v)
	}
	for _, k := range order {
		if v, ok := vars[k]; ok {
			spec.env = append(spec.env, k+"="+v)
		}
	}
	return spec, nil
}

// checkDir checks, relative to the workspace root, that the working
// directory is a directory inside it (not reached through a symlink that
// leaves it). The program itself may of course change directory.
func (m *processModule) checkDir(ctx context.Context, spec *runSpec) error {
	root, err := m.ws.open()
	if err != nil {
		return err
	}
	defer root.Close()
	fi, err := root.Stat(spec.rel)
	if err == nil && !fi.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		return fsError(ctx, "run", spec.cwd, err)
	}
	return nil
}

// lookPath finds argv0 as the child would: through the child's PATH (its
// absolute entries) for a bare name, relative to dir otherwise.
func lookPath(argv0, dir string, env []string) (string, error) {
	if strings.Contains(argv0, "/") {
		p := argv0
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		if err := executable(p); err != nil {
			return "", newError(ENOEXEC, "run: %s: %s", reason(err), argv0)
		}
		return p, nil
	}
	pathVar := ""
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "PATH="); ok {
			pathVar = v
		}
	}
	for _, d := range filepath.SplitList(pathVar) {
		if !filepath.IsAbs(d) {
			continue
		}
		p := filepath.Join(d, argv0)
		if executable(p) == nil {
			return p, nil
		}
	}
	return "", newError(ENOEXEC, "run: program not found in PATH: %s", argv0)
}

func reason(err error) string {
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "no such program"
	case errors.Is(err, os.ErrPermission):
		return "not executable"
	}
	return "not an executable file"
}

func executable(p string) error {
	fi, err := os.Stat(p)
	if err != nil {
		return err
	}
	if fi.IsDir() || !fi.Mode().IsRegular() {
		return errors.New("not a file")
	}
	if fi.Mode().Perm()&0o111 == 0 {
		return os.ErrPermission
	}
	return nil
}

// capBuffer keeps the first max bytes written and counts all of them.
type capBuffer struct {
	max   int64
	buf   []byte
	total int64
}

func (b *capBuffer) Write(p []byte) (int, error) {
	if room := b.max - int64(len(b.buf)); room > 0 {
		b.buf = append(b.buf, p[:min(int64(len(p)), room)]...)
	}
	b.total += int64(len(p))
	return len(p), nil
}

func (b *capBuffer) text() string { return strings.ToValidUTF8(string(b.buf), "\uFFFD") }

// stopReason is why run stopped the program.
type stopReason int

const (
	exited stopReason = iota
	timedOut
	canceled
)

func (m *processModule) run(ctx context.Context, args []any) (any, error) {
	spec, err := m.parseRun(args)
	if err != nil {
		return nil, err
	}
	name := spec.argv[0]
	if err := cancelled(ctx, "run", name); err != nil {
		return nil, err
	}
	if err := m.checkDir(ctx, spec); err != nil {
		return nil, err
	}
	prog, err := lookPath(name, spec.dir, spec.env)
	if err != nil {
		return nil, err
	}
	mark, err := reaper.NewMark()
	if err != nil {
		return nil, wrapError(err, EIO, "run: %v: %s", err, name)
	}
	defer mark.Done()
	cmd := &exec.Cmd{
		Path:        prog,
		Args:        spec.argv,
		Dir:         spec.dir,
		Env:         reaper.WithMark(spec.env, mark),
		SysProcAttr: &syscall.SysProcAttr{Setpgid: true},
	}
	setDeathSignal(cmd.SysProcAttr)
	p, err := startPiped(cmd, spec.stdin, m.cfg.MaxOutputBytes)
	if err != nil {
		if isExecErr(err) {
			return nil, wrapError(err, ENOEXEC, "run: cannot execute: %s", name)
		}
		return nil, wrapError(err, EIO, "run: %v: %s", err, name)
	}
	p.mark = mark
	reason := p.supervise(ctx, spec.timeout, m.cfg.KillGrace)
	if reason == canceled {
		return nil, canceledError(ctx, "run", name)
	}
	res := dsl.NewObject(
		dsl.Member{Key: "stdout", Value: p.stdout.text()},
		dsl.Member{Key: "stderr", Value: p.stderr.text()},
	)
	st := cmd.ProcessState
	ws, _ := st.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		res.Set("exitCode", nil)
		res.Set("signal", signalName(ws.Signal()))
	} else {
		res.Set("exitCode", float64(st.ExitCode()))
		res.Set("signal", nil)
	}
	res.Set("truncated", p.stdout.total > int64(len(p.stdout.buf)) || p.stderr.total > int64(len(p.stderr.buf)))
	res.Set("timedOut", reason == timedOut)
	res.Set("stdoutBytes", float64(p.stdout.total))
	res.Set("stderrBytes", float64(p.stderr.total))
	return res, nil
}

func isExecErr(err error) bool {
	return errors.Is(err, syscall.ENOEXEC) || errors.Is(err, syscall.EACCES) || errors.Is(err, os.ErrNotExist)
}

// piped is a started program with its pipes and their readers.
type piped struct {
	cmd            *exec.Cmd
	stdout, stderr *capBuffer
	readers        sync.WaitGroup
	outR, errR     *os.File
	inW            *os.File
	writer         sync.WaitGroup
	exited         chan struct{}
	mark           *reaper.Mark // the call's DSH_CALL_TOKEN
}

// startPiped starts cmd with its own pipes: the child gets the write ends
// (as files, so Wait waits for the process alone), dsh reads the other ends
// into capped buffers.
func startPiped(cmd *exec.Cmd, stdin *string, max int64) (*piped, error) {
	p := &piped{cmd: cmd, stdout: &capBuffer{max: max}, stderr: &capBuffer{max: max}, exited: make(chan struct{})}
	var toClose []*os.File
	closeAll := func() {
		for _, f := range toClose {
			f.Close()
		}
	}
	outR, outW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	toClose = append(toClose, outR, outW)
	errR, errW, err := os.Pipe()
	if err != nil {
		closeAll()
		return nil, err
	}
	toClose = append(toClose, errR, errW)
	cmd.Stdout, cmd.Stderr = outW, errW
	var inR, inW *os.File
	if stdin != nil {
		if inR, inW, err = os.Pipe(); err != nil {
			closeAll()
			return nil, err
		}
		toClose = append(toClose, inR, inW)
		cmd.Stdin = inR
	}
	// Start and Wait run on one goroutine locked to its OS thread for the
	// child's whole life: the parent-death signal fires when the thread
	// that created the child exits, and Go ends a thread whose goroutine
	// exits while locked to it. Locked here, the thread lives at least until
	// the child has exited.
	started := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := reaper.Start(cmd); err != nil {
			started <- err
			return
		}
		started <- nil
		_ = cmd.Wait()
		reaper.Forget(cmd.Process.Pid)
		close(p.exited)
	}()
	if err := <-started; err != nil {
		closeAll()
		return nil, err
	}
	outW.Close()
	errW.Close()
	p.outR, p.errR = outR, errR
	for _, s := range []struct {
		r *os.File
		b *capBuffer
	}{{outR, p.stdout}, {errR, p.stderr}} {
		p.readers.Add(1)
		go func() {
			defer p.readers.Done()
			_, _ = io.Copy(s.b, s.r)
		}()
	}
	if stdin != nil {
		inR.Close()
		p.inW = inW
		p.writer.Add(1)
		go func() {
			defer p.writer.Done()
			_, _ = io.WriteString(inW, *stdin)
			inW.Close()
		}()
	}
	return p, nil
}

// supervise waits for the program to exit, stopping its process group on
// cancellation or timeout (TERM, then KILL after grace); once it has exited
// it kills what is left of the group and collects the output, giving up on
// pipes still held open (by a process that left the group) after grace.
// Every goroutine of p has ended when it returns.
func (p *piped) supervise(ctx context.Context, timeout, grace time.Duration) stopReason {
	var timer <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		timer = t.C
	}
	reason := exited
	select {
	case <-p.exited:
	case <-ctx.Done():
		reason = canceled
	case <-timer:
		reason = timedOut
	}
	pgid := p.cmd.Process.Pid
	if reason != exited {
		_ = syscall.Kill(-pgid, syscall.SIGTERM)
		t := time.NewTimer(grace)
		select {
		case <-p.exited:
			t.Stop()
		case <-t.C:
			_ = syscall.Kill(-pgid, syscall.SIGKILL)
			<-p.exited
		}
	}
	// The leader is gone; nothing it left in its group may outlive the call,
	// nor anything that left the group (an orphan dsh adopted, or a process
	// carrying the call's token).
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	reaper.Kill(reaper.Leftovers{Pgid: pgid, Mark: p.mark}, grace)
	if p.inW != nil {
		p.inW.Close() // unblocks a writer whose reader is gone
	}
	done := make(chan struct{})
	go func() {
		p.readers.Wait()
		close(done)
	}()
	t := time.NewTimer(grace)
	select {
	case <-done:
		t.Stop()
	case <-t.C:
		p.outR.Close()
		p.errR.Close()
		<-done
	}
	p.outR.Close()
	p.errR.Close()
	p.writer.Wait()
	return reason
}

// signalNames names the signals a program can die of.
var signalNames = map[syscall.Signal]string{
	syscall.SIGHUP: "SIGHUP", syscall.SIGINT: "SIGINT", syscall.SIGQUIT: "SIGQUIT", syscall.SIGILL: "SIGILL",
	syscall.SIGTRAP: "SIGTRAP", syscall.SIGABRT: "SIGABRT", syscall.SIGBUS: "SIGBUS", syscall.SIGFPE: "SIGFPE",
	syscall.SIGKILL: "SIGKILL", syscall.SIGUSR1: "SIGUSR1", syscall.SIGSEGV: "SIGSEGV", syscall.SIGUSR2: "SIGUSR2",
	syscall.SIGPIPE: "SIGPIPE", syscall.SIGALRM: "SIGALRM", syscall.SIGTERM: "SIGTERM", syscall.SIGCHLD: "SIGCHLD",
	syscall.SIGCONT: "SIGCONT", syscall.SIGSTOP: "SIGSTOP", syscall.SIGTSTP: "SIGTSTP", syscall.SIGTTIN: "SIGTTIN",
	syscall.SIGTTOU: "SIGTTOU", syscall.SIGURG: "SIGURG", syscall.SIGXCPU: "SIGXCPU", syscall.SIGXFSZ: "SIGXFSZ",
	syscall.SIGVTALRM: "SIGVTALRM", syscall.SIGPROF: "SIGPROF", syscall.SIGWINCH: "SIGWINCH", syscall.SIGIO: "SIGIO",
	syscall.SIGSYS: "SIGSYS",
}

// signalName returns a signal's name, e.g. "SIGKILL".
func signalName(s syscall.Signal) string {
	if n, ok := signalNames[s]; ok {
		return n
	}
	return "SIG" + strconv.Itoa(int(s))
}
