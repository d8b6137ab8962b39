package lua

import (
	"errors"
	"math"

	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/scripting/internal/hostapi"
)

// metatables are the instance's protected metatables of the host objects
// scripts receive: execution objects, signals, tokens, callers and errors.
type metatables struct {
	exec, signal, token, caller, err *glua.LTable
}

// newMetatables makes them: each has a __metatable field, so getmetatable
// returns its name and setmetatable fails, and __newindex refuses writes.
func (i *instance) newMetatables(L *glua.LState) {
	readOnly := L.NewFunction(func(L *glua.LState) int {
		L.RaiseError("%s objects are read-only", objectName(L.Get(1)))
		return 0
	})
	mk := func(name string) *glua.LTable {
		t := L.CreateTable(0, 4)
		t.RawSetString("__metatable", glua.LString(name))
		return t
	}
	i.mts.exec = mk("dsh.execution")
	i.mts.exec.RawSetString("__index", L.NewFunction(i.execIndex))
	i.mts.exec.RawSetString("__newindex", readOnly)
	i.mts.exec.RawSetString("__tostring", L.NewFunction(func(L *glua.LState) int {
		if l := i.liveExec(L.Get(1)); l != nil {
			L.Push(glua.LString("execution " + l.exec.CallID()))
			return 1
		}
		L.Push(glua.LString("execution"))
		return 1
	}))
	i.mts.signal = mk("dsh.signal")
	i.mts.signal.RawSetString("__index", L.NewFunction(i.signalIndex))
	i.mts.signal.RawSetString("__newindex", readOnly)
	i.mts.token = mk("dsh.token")
	i.mts.token.RawSetString("__newindex", readOnly)
	i.mts.token.RawSetString("__tostring", L.NewFunction(func(L *glua.LState) int {
		L.Push(glua.LString("token"))
		return 1
	}))
	i.mts.caller = mk("dsh.caller")
	i.mts.caller.RawSetString("__index", L.NewFunction(i.callerIndex))
	i.mts.caller.RawSetString("__newindex", readOnly)
	i.mts.caller.RawSetString("__tostring", L.NewFunction(func(L *glua.LState) int {
		L.Push(glua.LString("caller"))
		return 1
	}))
	i.mts.err = mk("dsh.error")
	tostring := func(v glua.LValue) string {
		if t, ok := v.(*glua.LTable); ok && t.Metatable == glua.LValue(i.mts.err) {
			if m, ok := t.RawGetString("message").(glua.LString); ok {
				return string(m)
			}
		}
		switch v.(type) {
		case glua.LString, glua.LNumber:
			return v.String()
		}
		return v.Type().String()
	}
	i.mts.err.RawSetString("__tostring", L.NewFunction(func(L *glua.LState) int {
		L.Push(glua.LString(tostring(L.Get(1))))
		return 1
	}))
	i.mts.err.RawSetString("__concat", L.NewFunction(func(L *glua.LState) int {
		L.Push(glua.LString(tostring(L.Get(1)) + tostring(L.Get(2))))
		return 1
	}))
}

func objectName(v glua.LValue) string {
	if ud, ok := v.(*glua.LUserData); ok {
		switch ud.Value.(type) {
		case *liveExec:
			return "execution"
		case *signal:
			return "signal"
		case tokenValue:
			return "token"
		case *engine.Caller:
			return "caller"
		}
	}
	return "host"
}

// liveExec is an execution object a script holds: the call's execution,
// the frame of the call it was made for, and what was converted so far.
type liveExec struct {
	exec    *engine.Execution
	frame   *frame
	run     *engine.Run // bodies only
	nested  int         // tools.call counter
	ud      *glua.LUserData
	args    glua.LValue // exec.arguments, once read
	agent   glua.LValue
	sig     *glua.LUserData
	deferFn *glua.LFunction
	conclFn *glua.LFunction
	progFn  *glua.LFunction
	elicFn  *glua.LFunction
}

// execObject builds the execution object a script sees: callId, rootCallId,
// name, arguments, agent, parent (a token, the same userdata for the same
// token), caller (see callerObject; nil without one), signal, and, for
// bodies, defer_context, conclude_turn, progress and elicit. Fields are read
// lazily through __index; the object is read-only.
func (i *instance) execObject(L *glua.LState, f *frame, exec *engine.Execution, run *engine.Run) *liveExec {
	l := &liveExec{exec: exec, frame: f, run: run}
	l.ud = L.NewUserData()
	l.ud.Value = l
	l.ud.Metatable = i.mts.exec
	return l
}

func (i *instance) liveExec(v glua.LValue) *liveExec {
	ud, ok := v.(*glua.LUserData)
	if !ok || ud.Metatable != glua.LValue(i.mts.exec) {
		return nil
	}
	l, _ := ud.Value.(*liveExec)
	return l
}

// arguments returns exec.arguments: a fresh table (the call's own copy), or
// nil when the arguments were not lossless.
func (i *instance) arguments(l *liveExec) glua.LValue {
	if l.args == nil {
		l.args = i.toLua(l.exec.Arguments())
	}
	return l.args
}

// execIndex is the execution object's __index.
func (i *instance) execIndex(L *glua.LState) int {
	l := i.liveExec(L.Get(1))
	key, _ := L.Get(2).(glua.LString)
	if l == nil {
		L.Push(glua.LNil)
		return 1
	}
	switch key {
	case "callId":
		L.Push(glua.LString(l.exec.CallID()))
	case "rootCallId":
		L.Push(glua.LString(l.exec.RootCallID()))
	case "name":
		L.Push(glua.LString(l.exec.Name()))
	case "arguments":
		L.Push(i.arguments(l))
	case "agent":
		if l.agent == nil {
			l.agent = glua.LNil
			if a := l.exec.Agent(); a != nil {
				l.agent = i.toLua(agentJSON(a))
			}
		}
		L.Push(l.agent)
	case "parent":
		if t := l.exec.Parent(); t != nil {
			L.Push(i.tokenObject(L, t))
		} else {
			L.Push(glua.LNil)
		}
	case "caller":
		// The verified identity the call runs for, nil without one.
		if c := engine.CallerFrom(l.frame.caller); c != nil {
			L.Push(i.callerObject(L, c))
		} else {
			L.Push(glua.LNil)
		}
	case "signal":
		if l.sig == nil {
			l.sig = L.NewUserData()
			l.sig.Value = &signal{l: l}
			l.sig.Metatable = i.mts.signal
		}
		L.Push(l.sig)
	case "defer_context":
		if l.run == nil {
			L.Push(glua.LNil)
			return 1
		}
		if l.deferFn == nil {
			l.deferFn = L.NewFunction(func(L *glua.LState) int {
				arg := i.selfArg(L, l.ud)
				if l.settled() {
					i.throw(L, errNotLive)
				}
				m, err := i.messageFrom(L.Get(arg))
				if err != nil {
					i.throw(L, err)
				}
				if err := l.run.DeferContext(m); err != nil {
					i.throw(L, err)
				}
				return 0
			})
		}
		L.Push(l.deferFn)
	case "conclude_turn":
		if l.run == nil {
			L.Push(glua.LNil)
			return 1
		}
		if l.conclFn == nil {
			l.conclFn = L.NewFunction(func(L *glua.LState) int {
				if l.settled() {
					i.throw(L, errNotLive)
				}
				l.run.ConcludeTurn()
				return 0
			})
		}
		L.Push(l.conclFn)
	case "progress":
		if l.run == nil {
			L.Push(glua.LNil)
			return 1
		}
		if l.progFn == nil {
			l.progFn = L.NewFunction(func(L *glua.LState) int {
				arg := i.selfArg(L, l.ud)
				p, err := progressArgs(L.Get(arg), L.Get(arg+1), L.Get(arg+2))
				if err != nil {
					i.throw(L, err)
				}
				if !l.settled() { // a settled call reports nothing
					engine.ReportProgress(l.frame.caller, p)
				}
				return 0
			})
		}
		L.Push(l.progFn)
	case "elicit":
		if l.run == nil {
			L.Push(glua.LNil)
			return 1
		}
		if l.elicFn == nil {
			l.elicFn = L.NewFunction(func(L *glua.LState) int { return i.elicit(L, l) })
		}
		L.Push(l.elicFn)
	default:
		L.Push(glua.LNil)
	}
	return 1
}

// settled reports whether the object's call returned: its functions then
// refuse to act. (The frame's finished flag is written by the owner
// goroutine, which is the one reading it here.)
func (l *liveExec) settled() bool { return l.frame.finished }

var errNotLive = errors.New("this execution object is no longer live (its call has settled)")

// The errors of exec.progress's arguments.
var (
	errProgress        = errors.New("exec.progress(progress, total, message): progress must be a finite number")
	errProgressTotal   = errors.New("exec.progress(progress, total, message): total must be a finite number >= 0")
	errProgressMessage = errors.New("exec.progress(progress, total, message): message must be a string")
)

// progressArgs reads exec.progress(progress, total, message): progress a
// finite number, total a finite number >= 0 (0, the default, is unknown)
// and message a string, both nil when absent.
func progressArgs(progress, total, message glua.LValue) (engine.Progress, error) {
	var p engine.Progress
	var ok bool
	if p.Progress, ok = finiteNumber(progress); !ok {
		return p, errProgress
	}
	if total != glua.LNil {
		if p.Total, ok = finiteNumber(total); !ok || p.Total < 0 {
			return p, errProgressTotal
		}
	}
	if message != glua.LNil {
		s, isStr := message.(glua.LString)
		if !isStr {
			return p, errProgressMessage
		}
		p.Message = string(s)
	}
	return p, nil
}

// finiteNumber is v as a float64 when it is a finite number (not a numeric
// string).
func finiteNumber(v glua.LValue) (float64, bool) {
	n, ok := v.(glua.LNumber)
	f := float64(n)
	return f, ok && !math.IsNaN(f) && !math.IsInf(f, 0)
}

// selfArg returns the index of a bound method's first argument: 2 when it
// was called with a colon (exec:defer_context(m)), 1 otherwise.
func (i *instance) selfArg(L *glua.LState, self *glua.LUserData) int {
	if L.Get(1) == glua.LValue(self) {
		return 2
	}
	return 1
}

// signal is exec.signal: aborted() and reason() read the call's state.
type signal struct {
	l        *liveExec
	aborted  *glua.LFunction
	reasonFn *glua.LFunction
}

// signalIndex is the signal's __index.
func (i *instance) signalIndex(L *glua.LState) int {
	ud, _ := L.Get(1).(*glua.LUserData)
	s, _ := ud.Value.(*signal)
	key, _ := L.Get(2).(glua.LString)
	if s == nil {
		L.Push(glua.LNil)
		return 1
	}
	switch key {
	case "aborted":
		if s.aborted == nil {
			s.aborted = L.NewFunction(func(L *glua.LState) int {
				a, _ := s.l.frame.aborted()
				L.Push(glua.LBool(a))
				return 1
			})
		}
		L.Push(s.aborted)
	case "reason":
		if s.reasonFn == nil {
			s.reasonFn = L.NewFunction(func(L *glua.LState) int {
				if a, why := s.l.frame.aborted(); a {
					L.Push(glua.LString(why))
				} else {
					L.Push(glua.LNil)
				}
				return 1
			})
		}
		L.Push(s.reasonFn)
	default:
		L.Push(glua.LNil)
	}
	return 1
}

func agentJSON(a *engine.Agent) any { return hostapi.AgentJSON(a) }

// tokenValue is the Go value of a token userdata.
type tokenValue struct{}

// tokenObject is the opaque userdata standing for an execution token: the
// same userdata every time the same token reaches the instance, so scripts
// can compare them with ==.
// The userdata are forgotten with their tokens (see hostapi.Tokens).
func (i *instance) tokenObject(L *glua.LState, t *engine.Token) *glua.LUserData {
	return i.tokens.Get(t, func() *glua.LUserData {
		ud := L.NewUserData()
		ud.Value = tokenValue{}
		ud.Metatable = i.mts.token
		return ud
	})
}

// messageSchema makes an empty content table an array.
var messageSchema = dsl.NewObject(dsl.Member{Key: "type", Value: "object"}, dsl.Member{Key: "properties", Value: dsl.NewObject(
	dsl.Member{Key: "content", Value: arraySchema})})

// messageFrom reads a context message a script defers: {content, source?}
// or a whole message {id, role = "user", content, source}.
func (i *instance) messageFrom(v glua.LValue) (engine.Message, error) {
	g, err := i.conv.ToGo(v, "message", messageSchema)
	if err != nil {
		return engine.Message{}, err
	}
	o, ok := g.(*dsl.Object)
	if !ok {
		return engine.Message{}, errors.New("defer_context(message) needs a message table")
	}
	return hostapi.DeferredMessage(o, i.pool.src.Rel)
}

// resultLua converts a result for a script, remembering which engine result
// the table stands for, so a wrapper returning it hands back the same result.
func (i *instance) resultLua(f *frame, r *engine.Result) glua.LValue {
	v := i.toLua(r.JSON())
	if t, ok := v.(*glua.LTable); ok {
		if i.results == nil {
			i.results = map[*glua.LTable]*engine.Result{}
		}
		i.results[t] = r
		f.release = append(f.release, func() { delete(i.results, t) })
	}
	return v
}
