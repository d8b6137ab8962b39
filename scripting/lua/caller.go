package lua

import (
	glua "github.com/yuin/gopher-lua"

	"github.com/dsh-go/dsh/engine"
)

// callerObject is exec.caller for c: a read-only userdata (the metatable
// "dsh.caller") whose subject and clientId are strings and whose scopes is
// a fresh array table at each read, so that a script changing it changes
// nothing, not even what it reads next. The same userdata stands for the
// same caller while it comes again (the calls of one served request share
// one engine.Caller, which never changes).
func (i *instance) callerObject(L *glua.LState, c *engine.Caller) *glua.LUserData {
	if i.lastCaller == c && i.lastCallerUD != nil {
		return i.lastCallerUD
	}
	ud := L.NewUserData()
	ud.Value = c
	ud.Metatable = i.mts.caller
	i.lastCaller, i.lastCallerUD = c, ud
	return ud
}

// callerIndex is the caller object's __index.
func (i *instance) callerIndex(L *glua.LState) int {
	ud, _ := L.Get(1).(*glua.LUserData)
	var c *engine.Caller
	if ud != nil && ud.Metatable == glua.LValue(i.mts.caller) {
		c, _ = ud.Value.(*engine.Caller)
	}
	key, _ := L.Get(2).(glua.LString)
	if c == nil {
		L.Push(glua.LNil)
		return 1
	}
	switch key {
	case "subject":
		L.Push(glua.LString(c.Subject))
	case "clientId":
		L.Push(glua.LString(c.ClientID))
	case "scopes":
		t := L.CreateTable(len(c.Scopes), 0)
		for _, s := range c.Scopes {
			t.Append(glua.LString(s))
		}
		L.Push(t)
	default:
		L.Push(glua.LNil)
	}
	return 1
}
