package jsguard

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsregexp"
)

// Regular expressions: see the package documentation. In short, goja runs
// some matches on regexp2, which gives up past RegexpMatchTimeout, and
// reports a match that gave up as no match. jsguard sees the calls that can
// run regexp2 and, when one reports no match, finds out whether it gave up
// by running the match again on its own regexp2 (jsregexp.Matcher), which
// does report the timeout; a match that gave up throws a RangeError.

// maxRegexpInfos bounds the per-runtime table of what jsguard knows about a
// pattern; past it, the table starts afresh.
const maxRegexpInfos = 1024

// regexpFlags are the flag getters jsguard reads, in the order of the
// flags string: each is goja's own, captured before any script ran, so
// reading flags runs no script code.
var regexpFlags = [...]struct {
	flag byte
	prop string
}{{'g', "global"}, {'i', "ignoreCase"}, {'m', "multiline"}, {'s', "dotAll"}, {'u', "unicode"}, {'y', "sticky"}}

// regexpKey identifies a pattern: its source and a bit per regexpFlags.
type regexpKey struct {
	source string
	flags  uint8
}

// regexpInfo is what jsguard knows about a pattern.
type regexpInfo struct {
	source, flags           string
	global, sticky, unicode bool
	// backtracking: goja runs every match of it on regexp2.
	backtracking bool
	// unsupported is jsregexp.Check's refusal, or nil.
	unsupported error

	matcherOnce sync.Once
	matcher     *jsregexp.Matcher
	matcherErr  error

	// splitter is the clone of the pattern that split runs on to take
	// goja's fast path (see splitClone), made on first need.
	splitter *goja.Object
}

// regexpState is the per-runtime part of jsguard's regular expressions.
type regexpState struct {
	proto      *goja.Object                       // RegExp.prototype
	ctor       goja.Constructor                   // goja's own RegExp, for clones
	intrinsic  *goja.Object                       // goja's own RegExp (jsguard's proxy is g.proxied[intrinsic])
	nativeExec func(goja.FunctionCall) goja.Value // RegExp.prototype.exec
	source     func(goja.FunctionCall) goja.Value // get RegExp.prototype.source
	flagGets   [len(regexpFlags)]func(goja.FunctionCall) goja.Value
	asciiType  reflect.Type // goja's type for strings of ASCII only
	probe      goja.Callable

	// exec is the watched exec: the own exec of the regular expressions
	// jsguard marks, and what bind, call, apply and Proxy forward to in
	// place of RegExp.prototype.exec.
	exec  *goja.Object
	infos map[regexpKey]*regexpInfo

	// markFor is the regular expression whose split or matchAll is running
	// (goja makes its splitter or matcher through RegExp, from it): the
	// next RegExp made from it is marked when markForIt, and left alone
	// otherwise.
	markFor   *goja.Object
	markForIt bool

	// budget is the match budget of the call running match by match, or
	// nil; probed is when the watched exec or an iterator step last looked
	// for an interrupt, steps the iterator steps since (see
	// regexp_budget.go and iterate.go).
	budget *matchBudget
	probed time.Time
	steps  uint32
}

// probeSrc is a function that does nothing: calling it from Go ends in
// goja's InterruptedError when the runtime has a pending interrupt.
const probeSrc = `(function () {})`

var probeProgram = sync.OnceValues(func() (*goja.Program, error) {
	return goja.Compile("<jsguard>", probeSrc, true)
})

// captureRegExp takes what the watched regular expressions need, before
// any script runs.
func (g *guard) captureRegExp() error {
	r := &g.re
	var ok bool
	global := g.vm.GlobalObject()
	reCtor, _ := global.Get("RegExp").(*goja.Object)
	if reCtor == nil {
		return fmt.Errorf("intrinsic RegExp not found")
	}
	r.intrinsic = reCtor
	if r.ctor, ok = goja.AssertConstructor(reCtor); !ok {
		return fmt.Errorf("intrinsic RegExp is not a constructor")
	}
	if r.proto, ok = reCtor.Get("prototype").(*goja.Object); !ok {
		return fmt.Errorf("intrinsic RegExp.prototype not found")
	}
	if r.nativeExec, ok = g.origExec.Export().(func(goja.FunctionCall) goja.Value); !ok {
		return fmt.Errorf("intrinsic RegExp.prototype.exec is not native")
	}
	getter := func(prop string) (func(goja.FunctionCall) goja.Value, error) {
		d, _ := g.gopd(goja.FunctionCall{This: goja.Undefined(), Arguments: []goja.Value{r.proto, g.vm.ToValue(prop)}}).(*goja.Object)
		if d == nil {
			return nil, fmt.Errorf("intrinsic RegExp.prototype.%s not found", prop)
		}
		get, _ := d.Get("get").(*goja.Object)
		if get == nil {
			return nil, fmt.Errorf("intrinsic RegExp.prototype.%s is not a getter", prop)
		}
		f, ok := get.Export().(func(goja.FunctionCall) goja.Value)
		if !ok {
			return nil, fmt.Errorf("intrinsic get RegExp.prototype.%s is not native", prop)
		}
		return f, nil
	}
	var err error
	if r.source, err = getter("source"); err != nil {
		return err
	}
	for i, f := range regexpFlags {
		if r.flagGets[i], err = getter(f.prop); err != nil {
			return err
		}
	}
	r.asciiType = reflect.TypeOf(g.vm.ToValue("a"))
	prog, err := probeProgram()
	if err != nil {
		return err
	}
	pv, err := g.vm.RunProgram(prog)
	if err != nil {
		return err
	}
	if r.probe, ok = goja.AssertFunction(pv); !ok {
		return fmt.Errorf("the interrupt probe is not a function")
	}
	r.exec = g.vm.ToValue(g.watchedExec).(*goja.Object)
	for prop, v := range map[string]any{"name": "exec", "length": 1} {
		if err := r.exec.DefineDataProperty(prop, g.vm.ToValue(v), goja.FLAG_FALSE, goja.FLAG_TRUE, goja.FLAG_FALSE); err != nil {
			return err
		}
	}
	r.infos = make(map[regexpKey]*regexpInfo)
	return nil
}

// regexpOf returns v as a regular expression object and what jsguard knows
// of its pattern, or nil when v is not one.
func (g *guard) regexpOf(v goja.Value) (*goja.Object, *regexpInfo) {
	o, ok := v.(*goja.Object)
	if !ok || o.ClassName() != "RegExp" {
		return nil, nil
	}
	this := goja.FunctionCall{This: o}
	var key regexpKey
	for i, get := range g.re.flagGets {
		if get(this).ToBoolean() {
			key.flags |= 1 << i
		}
	}
	src, _ := g.re.source(this).(goja.String)
	if src == nil {
		return nil, nil
	}
	if reflect.TypeOf(src) == g.re.asciiType {
		key.source = src.String()
	} else {
		key.source = jsregexp.PatternFromUTF16(jsregexp.StringUnits(src))
	}
	if info, ok := g.re.infos[key]; ok {
		return o, info
	}
	info := &regexpInfo{source: key.source}
	var flags []byte
	for i, f := range regexpFlags {
		if key.flags&(1<<i) != 0 {
			flags = append(flags, f.flag)
		}
	}
	info.flags = string(flags)
	info.global, info.unicode, info.sticky = key.flags&1 != 0, key.flags&(1<<4) != 0, key.flags&(1<<5) != 0
	info.unsupported = jsregexp.Check(info.source, info.flags)
	info.backtracking = jsregexp.Backtracking(info.source, info.flags)
	if len(g.re.infos) >= maxRegexpInfos {
		clear(g.re.infos)
	}
	g.re.infos[key] = info
	return o, info
}

// matcherOf returns the Matcher that reruns the pattern's matches.
func (info *regexpInfo) matcherOf() (*jsregexp.Matcher, error) {
	info.matcherOnce.Do(func() {
		info.matcher, info.matcherErr = jsregexp.Compile(info.source, info.flags, RegexpMatchTimeout)
	})
	return info.matcher, info.matcherErr
}

func (g *guard) refuseUnsupported(info *regexpInfo) {
	if info.unsupported != nil {
		panic(g.syntaxErr(info.unsupported.Error()))
	}
}

// timeoutErr is the error of a match that ran out of time.
func (g *guard) timeoutErr(info *regexpInfo) any {
	return g.rangeErr(fmt.Sprintf("regular expression %s exceeded its match time limit (%v)",
		jsregexp.Show(info.source, info.flags), RegexpMatchTimeout))
}

// marked reports whether re's exec is the watched one.
func (g *guard) marked(re *goja.Object) bool {
	exec, _ := re.Get("exec").(*goja.Object)
	return exec == g.re.exec
}

// firstObject returns args[0] when it is an object.
func firstObject(args []goja.Value) (*goja.Object, bool) {
	if len(args) == 0 {
		return nil, false
	}
	o, ok := args[0].(*goja.Object)
	return o, ok && o != nil
}

// errOwnExec is mark's refusal to hide an exec that is not goja's.
var errOwnExec = errors.New("the regular expression has an exec of its own")

// mark gives re the watched exec as an own property. goja then treats re
// as a regular expression with an exec of its own: split, replace and
// match call that exec for each match instead of their fast paths, so each
// match is watched. It fails on an object that is not extensible, and
// leaves alone one whose exec is not goja's (a subclass that overrides
// exec, a script's own exec), which keeps its meaning.
func (g *guard) mark(re *goja.Object) error {
	if exec, _ := re.Get("exec").(*goja.Object); exec != g.origExec {
		return errOwnExec
	}
	return re.DefineDataProperty("exec", g.re.exec, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE)
}

// plainMarked reports whether a marked re has no own properties but
// lastIndex and exec: then a clone of it behaves as it does.
func (g *guard) plainMarked(re *goja.Object) bool {
	names := re.GetOwnPropertyNames()
	return len(names) == 2 && (names[0] == "exec" || names[1] == "exec") && len(re.Symbols()) == 0
}

// afterRegExp is what RegExp (called or constructed) does to the object it
// made: refuse syntax goja runs wrong, and mark the regular expressions
// whose exec may run regexp2 (those that always do, and those with the g
// or y flag, whose exec from a lastIndex past 0 does) unless the object is
// a splitter or matcher made from markFor.
func (g *guard) afterRegExp(o *goja.Object, args []goja.Value) {
	re, info := g.regexpOf(o)
	if re == nil {
		return
	}
	g.refuseUnsupported(info)
	mark := info.backtracking || info.global || info.sticky
	if from, ok := firstObject(args); ok && from == g.re.markFor {
		mark = g.re.markForIt
		g.re.markFor = nil
	}
	if mark && !g.marked(re) {
		_ = g.mark(re) // a subclass may have made it non-extensible
	}
}

// lastIndexOf returns where a match of re starts: 0 without the g and y
// flags, else lastIndex as a length. A lastIndex that is an object is
// converted here, once, and written back as a number, so that goja's
// conversion calls no script code again.
func (g *guard) lastIndexOf(re *goja.Object, info *regexpInfo) int64 {
	if !info.global && !info.sticky {
		return 0
	}
	v := re.Get("lastIndex")
	n := toLength(v)
	if _, isObj := v.(*goja.Object); isObj {
		_ = re.Set("lastIndex", n)
	}
	return n
}

// findAllBacktracks reports whether goja's search for every match of a
// pattern RE2 accepts runs on regexp2 for s: it does unless s is ASCII, or
// the pattern has the u flag and s is well-formed UTF-16.
func (g *guard) findAllBacktracks(s goja.String, unicode bool) bool {
	if reflect.TypeOf(s) == g.re.asciiType {
		return false
	}
	if !unicode {
		return true
	}
	n := s.Length()
	for i := 0; i < n; i++ {
		c := s.CharAt(i)
		switch {
		case c >= 0xD800 && c <= 0xDBFF:
			if i+1 >= n || s.CharAt(i+1) < 0xDC00 || s.CharAt(i+1) > 0xDFFF {
				return true
			}
			i++
		case c >= 0xDC00 && c <= 0xDFFF:
			return true
		}
	}
	return false
}

// checkInterrupt rethrows the runtime's pending interrupt, if any: a call
// whose deadline has passed ends with its own timeout, not with a regular
// expression error that a catch block could take.
func (g *guard) checkInterrupt() {
	if _, err := g.re.probe(goja.Undefined()); err != nil {
		panic(err)
	}
}

// confirmNoMatch is called when a match goja ran on regexp2 (of re's
// pattern, on s from start) reported no match after elapsed. It returns
// noMatch when there is none, the result of retry when goja's match was cut
// short but a second run finds it, and throws a RangeError when the match
// runs out of time.
func (g *guard) confirmNoMatch(re *goja.Object, info *regexpInfo, s goja.String, start int64, elapsed time.Duration,
	retry func() goja.Value, noMatch goja.Value) goja.Value {
	g.checkInterrupt()
	// A search (not sticky) that took the whole timeout gave up: regexp2's
	// clock ends it only after the timeout, and a run that long without a
	// timeout is the rerun's to find. A sticky match is goja's search from
	// start, which may give up past start; the rerun only tries start.
	if !info.sticky && elapsed >= RegexpMatchTimeout {
		panic(g.timeoutErr(info))
	}
	m, err := info.matcherOf()
	if err != nil {
		panic(g.rangeErr(fmt.Sprintf("regular expression %s: cannot tell no match from a timed-out match: %v",
			jsregexp.Show(info.source, info.flags), err)))
	}
	found, err := m.MatchAt(s, int(start))
	if err != nil {
		panic(g.timeoutErr(info))
	}
	if !found {
		return noMatch
	}
	// There is a match goja did not report: regexp2 ended its run early
	// (its clock jumps after an idle second). Once more, from the same
	// lastIndex.
	if info.global || info.sticky {
		if err := re.Set("lastIndex", start); err != nil {
			panic(err)
		}
	}
	if v := retry(); v.ToBoolean() {
		return v
	}
	panic(g.timeoutErr(info))
}

// watchedExec is RegExp.prototype.exec for the regular expressions jsguard
// marks (their own exec) and for bind, call, apply, Reflect.apply and
// Proxy when they are given RegExp.prototype.exec: goja's exec, counted as
// one level of native re-entry, with a reported no match confirmed when
// goja ran the match on regexp2.
func (g *guard) watchedExec(c goja.FunctionCall) goja.Value {
	g.enter("RegExp.prototype.exec")
	defer g.leave()
	re, info := g.regexpOf(c.This)
	if re == nil {
		return g.re.nativeExec(c)
	}
	g.refuseUnsupported(info)
	call, s := g.stringCall(re, c)
	start := g.lastIndexOf(re, info)
	began := time.Now()
	v := g.re.nativeExec(call)
	g.afterMatch(!goja.IsNull(v))
	if !goja.IsNull(v) || !(info.backtracking || start != 0) || start > int64(s.Length()) {
		return v
	}
	return g.confirmNoMatch(re, info, s, start, time.Since(began), func() goja.Value { return g.re.nativeExec(call) }, v)
}

// stringCall is c with re as this and its first argument converted to a
// string once (the method then converts nothing that runs script code).
func (g *guard) stringCall(re *goja.Object, c goja.FunctionCall) (goja.FunctionCall, goja.String) {
	if s, ok := c.Argument(0).(goja.String); ok {
		return goja.FunctionCall{This: re, Arguments: c.Arguments}, s
	}
	s := g.toStr(c.Argument(0))
	args := make([]goja.Value, max(len(c.Arguments), 1))
	copy(args, c.Arguments)
	args[0] = s
	return goja.FunctionCall{This: re, Arguments: args}, s
}

// regexpTest is RegExp.prototype.test with a reported no match confirmed
// when goja ran the match on regexp2.
func (g *guard) regexpTest(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		re, info := g.regexpOf(c.This)
		if re == nil {
			return orig(c)
		}
		g.refuseUnsupported(info)
		call, s := g.stringCall(re, c)
		start := g.lastIndexOf(re, info)
		began := time.Now()
		v := orig(call)
		if v.ToBoolean() || !(info.backtracking || start != 0) || start > int64(s.Length()) {
			return v
		}
		return g.confirmNoMatch(re, info, s, start, time.Since(began), func() goja.Value { return orig(call) }, v)
	}
}

// regexpCompile is RegExp.prototype.compile refusing a pattern goja runs
// wrong before it replaces the old one, and marking the result as RegExp
// does. It converts the arguments once and passes the strings on.
func (g *guard) regexpCompile(orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		re, _ := g.regexpOf(c.This)
		if re == nil {
			return orig(c)
		}
		pattern, flags := c.Argument(0), c.Argument(1)
		if p, info := g.regexpOf(pattern); p != nil {
			if goja.IsUndefined(flags) {
				g.refuseUnsupported(info)
			}
		} else {
			var src, fl string
			if !goja.IsUndefined(pattern) {
				ps := g.toStr(pattern)
				pattern, src = ps, jsregexp.PatternFromUTF16(jsregexp.StringUnits(ps))
			}
			if !goja.IsUndefined(flags) {
				fs := g.toStr(flags)
				flags, fl = fs, fs.String()
			}
			if err := jsregexp.Check(src, fl); err != nil {
				panic(g.syntaxErr(err.Error()))
			}
		}
		v := orig(goja.FunctionCall{This: c.This, Arguments: []goja.Value{pattern, flags}})
		g.afterRegExp(re, nil)
		return v
	}
}

// regexpMethod is RegExp.prototype[Symbol.match], [Symbol.matchAll],
// [Symbol.replace], [Symbol.search] or [Symbol.split] (name is the key's
// description) with no timed-out match passing for no match.
//
// goja's fast paths for these (on a regular expression with nothing of its
// own but lastIndex) run every match of the call at once, and on regexp2 a
// timeout anywhere makes the whole call read as finding nothing. So when the
// call runs on regexp2 and finds nothing, jsguard searches from where the
// call started with its own Matcher (confirmFound). Elsewhere goja runs its
// generic algorithm, which calls exec for every match: a regular expression
// that does not carry the watched exec gets it first, and matchAll always
// gives it to the matcher its iterator uses. A marked regular expression
// whose call can use a fast path goes through an unmarked clone.
func (g *guard) regexpMethod(name string, orig func(goja.FunctionCall) goja.Value) func(goja.FunctionCall) goja.Value {
	return func(c goja.FunctionCall) goja.Value {
		re, info := g.regexpOf(c.This)
		if re == nil {
			return orig(c)
		}
		g.refuseUnsupported(info)
		call, s := g.stringCall(re, c)
		exec0, _ := re.Get("exec").(*goja.Object)
		if exec0 != g.origExec && exec0 != g.re.exec {
			// An exec of the script's own (a subclass's): goja's generic
			// algorithm calls it, and its answers are the script's.
			return orig(call)
		}
		switch name {
		case "Symbol.matchAll":
			// The matcher's iterator calls its exec for every match.
			return g.withMarkFor(re, true, orig, call)
		case "Symbol.split":
			// Unmarked, goja's fast path on a clone of re (splitClone), or
			// a sticky splitter goja makes from re through RegExp, left
			// unmarked; marked, that splitter carries the watched exec.
			run := func(mark bool) (goja.Value, bool) {
				var v goja.Value
				if cl := g.splitClone(re, info, mark); cl != nil {
					fast := call
					fast.This = cl
					v = orig(fast)
				} else {
					v = g.withMarkFor(re, mark, orig, call)
				}
				return v, !splitFoundNothing(v, s)
			}
			if !info.backtracking && !g.findAllBacktracks(s, info.unicode) {
				g.countMatches(name, info, s)
				v, _ := run(false)
				return v
			}
			return g.confirmFound(info, s, 0, false, run)
		}
		marked := exec0 == g.re.exec
		if marked && !g.plainMarked(re) {
			// goja's generic algorithm, through the watched exec.
			return g.stepwise(name, func() goja.Value { return orig(call) })
		}
		// A fast path: on re itself, or on an unmarked clone of it; with
		// mark, the generic algorithm on re, marked now if it was not, or
		// on a marked clone if re cannot take the watched exec.
		exec := func(mark bool, call goja.FunctionCall) goja.Value {
			if mark && !marked && g.mark(re) == nil {
				marked = true
			}
			if mark == marked {
				return orig(call)
			}
			return g.viaClone(re, info, mark, orig, call)
		}
		var start int64
		onRegexp2 := info.backtracking
		switch {
		case name == "Symbol.search":
		case info.global:
			onRegexp2 = onRegexp2 || g.findAllBacktracks(s, info.unicode)
		default:
			start = g.lastIndexOf(re, info)
			onRegexp2 = onRegexp2 || start != 0
		}
		if g.goesStepwise(name, info, onRegexp2) {
			return g.stepwise(name, func() goja.Value { return exec(true, call) })
		}
		if !onRegexp2 {
			if info.global {
				g.countMatches(name, info, s)
			}
			return exec(false, call)
		}
		search := info.global || name == "Symbol.search"
		return g.confirmFound(info, s, start, !search, func(mark bool) (goja.Value, bool) {
			if mark {
				if !search && (info.global || info.sticky) {
					rethrow(re.Set("lastIndex", start))
				}
				return exec(true, call), true
			}
			switch name {
			case "Symbol.match":
				v := exec(false, call)
				return v, !goja.IsNull(v)
			case "Symbol.search":
				v := exec(false, call)
				return v, v.ToInteger() != -1
			}
			return g.replaceReporting(call, s, func(call goja.FunctionCall) goja.Value { return exec(false, call) })
		})
	}
}

// replaceReporting runs a replace and reports whether it found a match: a
// replacement function that was called, or a result other than the string
// itself (a replacement that changes nothing is taken for no match, and
// confirmFound then finds the match). The function goja calls is one that
// records the call and calls the script's.
func (g *guard) replaceReporting(call goja.FunctionCall, s goja.String, run func(goja.FunctionCall) goja.Value) (goja.Value, bool) {
	var fn goja.Callable
	if len(call.Arguments) > 1 {
		fn, _ = goja.AssertFunction(call.Arguments[1])
	}
	if fn == nil {
		v := run(call)
		return v, !v.SameAs(s)
	}
	called := false
	args := append([]goja.Value(nil), call.Arguments...)
	args[1] = g.vm.ToValue(func(c goja.FunctionCall) goja.Value {
		called = true
		v, err := fn(c.This, c.Arguments...)
		rethrow(err)
		return v
	})
	call.Arguments = args
	v := run(call)
	return v, called
}

// splitFoundNothing reports whether a split's result is the string alone,
// as when its splitter matched nothing (or goja's search timed out).
func splitFoundNothing(v goja.Value, s goja.String) bool {
	a, ok := v.(*goja.Object)
	if !ok || a.Get("length").ToInteger() != 1 {
		return false
	}
	first, ok := a.Get("0").(goja.String)
	return ok && first.SameAs(s)
}

// confirmFound runs a call goja runs on regexp2 (run(false), which reports
// whether the call found a match) and, when it found nothing, searches s
// from start with the Matcher (exec's match when exec is set, else a
// search): nothing found is the call's answer, a timeout the RangeError, and
// a match means goja's run ended early: the call runs again with the
// watched exec (run(true)), match by match.
func (g *guard) confirmFound(info *regexpInfo, s goja.String, start int64, exec bool, run func(mark bool) (goja.Value, bool)) goja.Value {
	began := time.Now()
	v, found := run(false)
	if found {
		return v
	}
	elapsed := time.Since(began)
	g.checkInterrupt()
	m, err := info.matcherOf()
	if err != nil {
		panic(g.rangeErr(fmt.Sprintf("regular expression %s: cannot tell no match from a timed-out match: %v",
			jsregexp.Show(info.source, info.flags), err)))
	}
	// A pattern goja also has for RE2 is looked for there, from 0 in linear
	// time, as goja's exec from 0 does: nothing there is nothing, and a
	// match means the call runs match by match, its first match RE2's too.
	if !exec && start == 0 {
		if found, ok := m.SearchRE2(s); ok {
			if found {
				v, _ = run(true)
			}
			return v
		}
	}
	// A search that took the whole timeout and found nothing gave up (see
	// confirmNoMatch), unless it is sticky; a global replace whose result is
	// its string may have found matches that it replaced with themselves,
	// in as long as they took.
	if _, isStr := v.(goja.String); !(exec && info.sticky) && !(isStr && info.global) && elapsed >= RegexpMatchTimeout {
		panic(g.timeoutErr(info))
	}
	if exec {
		found, err = m.MatchAt(s, int(start))
	} else {
		found, err = m.SearchFrom(s, int(start))
	}
	if err != nil {
		panic(g.timeoutErr(info))
	}
	if !found {
		return v
	}
	v, _ = run(true)
	return v
}

// withMarkFor runs a split or matchAll of re, which makes its splitter or
// matcher through RegExp from re: marked when mark is set, else not.
// splitClone returns the regular expression goja's split of re runs on so
// that it takes its fast path (all the matches at once on re's compiled
// pattern), or nil when the split must make its splitter as the
// specification says. goja takes the fast path only when re's species
// constructor is goja's own RegExp, and jsguard's RegExp is a proxy: each
// split then compiled its sticky splitter anew and ran an exec per position
// (about 15 µs for a short line). A split that would make its splitter
// through jsguard's RegExp, from a plain re, makes one that behaves as re
// does (split ignores re's lastIndex and its sticky and global flags), so
// it runs instead on a clone of re whose own constructor is undefined: the
// fast path, which calls no script code. re's constructor, species and
// flags are read here, once each and in that order, as the specification's
// split reads them; when they are not jsguard's RegExp and the pattern's
// own flags (a subclass, a script's own species or flags getter), the
// split goes the specification's way and reads them again. Not taken: a marked
// split (it must run match by match), a sticky re (goja's fast path would
// match it stickily), and an re with own properties (a clone has none).
// The clone is kept with the pattern's info: the fast path changes nothing
// on it, and no script code sees it.
func (g *guard) splitClone(re *goja.Object, info *regexpInfo, mark bool) *goja.Object {
	if mark || info.sticky || re.Prototype() != g.re.proto {
		return nil
	}
	px := g.proxied[g.re.intrinsic]
	if px == nil {
		return nil
	}
	names := re.GetOwnPropertyNames()
	plain := len(names) == 1 && names[0] == "lastIndex" ||
		len(names) == 2 && (names[0] == "exec" || names[1] == "exec") && g.marked(re)
	if !plain || len(re.Symbols()) != 0 {
		return nil
	}
	if c, _ := re.Get("constructor").(*goja.Object); c != px {
		return nil
	}
	if sp, _ := px.GetSymbol(goja.SymSpecies).(*goja.Object); sp != px {
		return nil
	}
	// The splitter's flags are re's flags as read through re.flags, which
	// a script may have redefined; they must be the pattern's own.
	if f, ok := re.Get("flags").(goja.String); !ok || f.String() != info.flags {
		return nil
	}
	if info.splitter == nil {
		cl, err := g.re.ctor(nil, re)
		rethrow(err)
		rethrow(cl.Set("constructor", goja.Undefined()))
		info.splitter = cl
	}
	return info.splitter
}

func (g *guard) withMarkFor(re *goja.Object, mark bool, orig func(goja.FunctionCall) goja.Value, call goja.FunctionCall) goja.Value {
	prev, prevIt := g.re.markFor, g.re.markForIt
	g.re.markFor, g.re.markForIt = re, mark
	defer g.setMarkFor(prev, prevIt)
	return orig(call)
}

func (g *guard) setMarkFor(re *goja.Object, mark bool) { g.re.markFor, g.re.markForIt = re, mark }

// viaClone runs a method on a clone of re (goja's own, sharing its
// compiled pattern), marked or not, and copies lastIndex back: a plain
// regular expression and its clone behave alike.
func (g *guard) viaClone(re *goja.Object, info *regexpInfo, mark bool, orig func(goja.FunctionCall) goja.Value, call goja.FunctionCall) goja.Value {
	cl, err := g.re.ctor(nil, re)
	rethrow(err)
	if mark {
		rethrow(cl.DefineDataProperty("exec", g.re.exec, goja.FLAG_TRUE, goja.FLAG_TRUE, goja.FLAG_FALSE))
	}
	keep := info.global || info.sticky
	if keep {
		rethrow(cl.Set("lastIndex", re.Get("lastIndex")))
	}
	call.This = cl
	v := orig(call)
	if keep {
		rethrow(re.Set("lastIndex", cl.Get("lastIndex")))
	}
	return v
}
