package jsvalue

import "testing"

func TestScratchProtoOfObjectProto(t *testing.T) {
	e := newEnv(t)
	v := e.run(`var flag = 0; let r; try { const evil = Object.create(null); Object.defineProperty(evil, "value", {set(v) { flag++ }, get() { flag++ }}); Object.setPrototypeOf(Object.prototype, evil); r = "set" } catch (err) { r = String(err) } r + " " + typeof Object.prototype.__lookupGetter__`)
	t.Log(v)
	got, err := e.toGo(`({a: 1})`)
	t.Log(got, err, e.flag())
}
