package sandbox

import (
	"strconv"

	lua "github.com/yuin/gopher-lua"
)

// Lua patterns, matched the way Lua 5.1's lstrlib.c does: this is a port of
// its matcher (Copyright © 1994–2012 Lua.org, PUC-Rio; MIT license), with
// three additions that make a match bounded: the
// recursion of the matcher is capped at maxMatchDepth (as in Lua 5.2: its
// depth follows the pattern, never the subject), every call counts its steps
// against Options.MaxPatternSteps, and every so many steps it checks the
// state's context, so a catastrophic pattern is interrupted like any other
// script code. gopher-lua's own pattern package recurses once per repeated
// character (a 1 MB subject is a million Go frames), collects every match of
// gmatch and gsub before the first is used, and rebuilds the whole result
// string for each gsub replacement; none of it can be interrupted.

const (
	maxCaptures   = 32 // LUA_MAXCAPTURES
	capUnfinished = -1
	capPosition   = -2
	maxMatchDepth = 200 // MAXCCALLS of Lua 5.2's matcher
	checkEvery    = 1 << 14
	specials      = "^$*+?.([%-"
)

// matchState is the state of matching one pattern against one subject.
type matchState struct {
	L       *lua.LState
	src     string
	pat     string
	level   int // captures, finished or not
	capture [maxCaptures]struct{ init, len int }
	depth   int

	steps, nextCheck, maxSteps int
}

func newMatchState(L *lua.LState, src, pat string, maxSteps int) *matchState {
	return &matchState{L: L, src: src, pat: pat, maxSteps: maxSteps, nextCheck: checkEvery}
}

// step counts n steps of work, checking the budget and the context now and
// then.
func (ms *matchState) step(n int) {
	ms.steps += n
	if ms.steps < ms.nextCheck {
		return
	}
	ms.nextCheck = ms.steps + checkEvery
	if ms.steps > ms.maxSteps {
		ms.L.RaiseError("pattern too complex (more than %d steps)", ms.maxSteps)
	}
	reraise(ms.L)
}

// match returns the end of the match of pattern position p at subject
// position s, or -1.
func (ms *matchState) match(s, p int) int {
	ms.depth++
	if ms.depth > maxMatchDepth {
		ms.L.RaiseError("pattern too complex")
	}
	r := ms.doMatch(s, p)
	ms.depth--
	return r
}

func (ms *matchState) doMatch(s, p int) int {
	src, pat := ms.src, ms.pat
	for {
		ms.step(1)
		if p == len(pat) {
			return s
		}
		switch pat[p] {
		case '(':
			if p+1 < len(pat) && pat[p+1] == ')' {
				return ms.startCapture(s, p+2, capPosition)
			}
			return ms.startCapture(s, p+1, capUnfinished)
		case ')':
			return ms.endCapture(s, p+1)
		case '%':
			if p+1 < len(pat) {
				switch c := pat[p+1]; {
				case c == 'b':
					s = ms.matchBalance(s, p+2)
					if s == -1 {
						return -1
					}
					p += 4
					continue
				case c == 'f':
					p += 2
					if p >= len(pat) || pat[p] != '[' {
						ms.L.RaiseError("%s", "missing '[' after '%f' in pattern")
					}
					ep := ms.classEnd(p)
					var prev, cur byte
					if s > 0 {
						prev = src[s-1]
					}
					if s < len(src) {
						cur = src[s]
					}
					if ms.matchBracketClass(prev, p, ep-1) || !ms.matchBracketClass(cur, p, ep-1) {
						return -1
					}
					p = ep
					continue
				case c >= '0' && c <= '9':
					s = ms.matchCapture(s, c)
					if s == -1 {
						return -1
					}
					p += 2
					continue
				}
			}
		case '$':
			if p+1 == len(pat) {
				if s == len(src) {
					return s
				}
				return -1
			}
		}
		// A single-character class, maybe repeated.
		ep := ms.classEnd(p)
		m := s < len(src) && ms.singleMatch(src[s], p, ep)
		if ep < len(pat) {
			switch pat[ep] {
			case '?':
				if m {
					if res := ms.match(s+1, ep+1); res != -1 {
						return res
					}
				}
				p = ep + 1
				continue
			case '*':
				return ms.maxExpand(s, p, ep)
			case '+':
				if !m {
					return -1
				}
				return ms.maxExpand(s+1, p, ep)
			case '-':
				return ms.minExpand(s, p, ep)
			}
		}
		if !m {
			return -1
		}
		s++
		p = ep
	}
}

// classEnd returns the position after the class starting at p.
func (ms *matchState) classEnd(p int) int {
	pat := ms.pat
	c := pat[p]
	p++
	switch c {
	case '%':
		if p >= len(pat) {
			ms.L.RaiseError("%s", "malformed pattern (ends with '%')")
		}
		return p + 1
	case '[':
		if p < len(pat) && pat[p] == '^' {
			p++
		}
		for { // look for a ']'; the first character is never it
			if p >= len(pat) {
				ms.L.RaiseError("malformed pattern (missing ']')")
			}
			c := pat[p]
			p++
			if c == '%' && p < len(pat) {
				p++ // skip escapes such as %]
			}
			if p < len(pat) && pat[p] == ']' {
				return p + 1
			}
		}
	}
	return p
}

// singleMatch reports whether c matches the class at p (ending before ep).
func (ms *matchState) singleMatch(c byte, p, ep int) bool {
	switch ms.pat[p] {
	case '.':
		return true
	case '%':
		return matchClass(c, ms.pat[p+1])
	case '[':
		return ms.matchBracketClass(c, p, ep-1)
	}
	return ms.pat[p] == c
}

// matchBracketClass matches c against the set from '[' at p to ']' at ec.
func (ms *matchState) matchBracketClass(c byte, p, ec int) bool {
	pat := ms.pat
	sig := true
	if pat[p+1] == '^' {
		sig = false
		p++
	}
	for p++; p < ec; p++ {
		switch {
		case pat[p] == '%':
			p++
			if matchClass(c, pat[p]) {
				return sig
			}
		case pat[p+1] == '-' && p+2 < ec:
			p += 2
			if pat[p-2] <= c && c <= pat[p] {
				return sig
			}
		case pat[p] == c:
			return sig
		}
	}
	return !sig
}

// matchClass matches c against %cl, in the C locale.
func matchClass(c, cl byte) bool {
	var res bool
	switch cl | 0x20 {
	case 'a':
		res = isAlpha(c)
	case 'c':
		res = c < 0x20 || c == 0x7f
	case 'd':
		res = c >= '0' && c <= '9'
	case 'l':
		res = c >= 'a' && c <= 'z'
	case 'p':
		res = c >= 0x21 && c <= 0x7e && !isAlpha(c) && !(c >= '0' && c <= '9')
	case 's':
		res = c == ' ' || c >= '\t' && c <= '\r'
	case 'u':
		res = c >= 'A' && c <= 'Z'
	case 'w':
		res = isAlpha(c) || c >= '0' && c <= '9'
	case 'x':
		res = c >= '0' && c <= '9' || c|0x20 >= 'a' && c|0x20 <= 'f'
	case 'z':
		res = c == 0
	default:
		return cl == c
	}
	if cl >= 'a' { // only letters reach here
		return res
	}
	return !res
}

func isAlpha(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// matchBalance matches %bxy at pattern position p.
func (ms *matchState) matchBalance(s, p int) int {
	if p+1 >= len(ms.pat) {
		ms.L.RaiseError("unbalanced pattern")
	}
	src := ms.src
	if s >= len(src) || src[s] != ms.pat[p] {
		return -1
	}
	b, e := ms.pat[p], ms.pat[p+1]
	cont := 1
	start := s
	for s++; s < len(src); s++ {
		if src[s] == e {
			cont--
			if cont == 0 {
				ms.step(s - start)
				return s + 1
			}
		} else if src[s] == b {
			cont++
		}
	}
	ms.step(s - start)
	return -1
}

// maxExpand matches the class at p repeated greedily.
func (ms *matchState) maxExpand(s, p, ep int) int {
	i := 0
	for s+i < len(ms.src) && ms.singleMatch(ms.src[s+i], p, ep) {
		i++
	}
	ms.step(i)
	for ; i >= 0; i-- {
		if res := ms.match(s+i, ep+1); res != -1 {
			return res
		}
	}
	return -1
}

// minExpand matches the class at p repeated lazily.
func (ms *matchState) minExpand(s, p, ep int) int {
	for {
		if res := ms.match(s, ep+1); res != -1 {
			return res
		}
		if s < len(ms.src) && ms.singleMatch(ms.src[s], p, ep) {
			s++
		} else {
			return -1
		}
	}
}

func (ms *matchState) startCapture(s, p, what int) int {
	level := ms.level
	if level >= maxCaptures {
		ms.L.RaiseError("too many captures")
	}
	ms.capture[level].init = s
	ms.capture[level].len = what
	ms.level = level + 1
	res := ms.match(s, p)
	if res == -1 {
		ms.level--
	}
	return res
}

func (ms *matchState) endCapture(s, p int) int {
	l := ms.captureToClose()
	ms.capture[l].len = s - ms.capture[l].init
	res := ms.match(s, p)
	if res == -1 {
		ms.capture[l].len = capUnfinished
	}
	return res
}

func (ms *matchState) captureToClose() int {
	for level := ms.level - 1; level >= 0; level-- {
		if ms.capture[level].len == capUnfinished {
			return level
		}
	}
	ms.L.RaiseError("invalid pattern capture")
	return 0
}

// matchCapture matches a back reference %1-%9.
func (ms *matchState) matchCapture(s int, c byte) int {
	l := int(c) - '1'
	if l < 0 || l >= ms.level || ms.capture[l].len == capUnfinished {
		ms.L.RaiseError("invalid capture index")
	}
	n := ms.capture[l].len
	if n < 0 || len(ms.src)-s < n {
		return -1
	}
	ms.step(n)
	init := ms.capture[l].init
	if ms.src[init:init+n] == ms.src[s:s+n] {
		return s + n
	}
	return -1
}

// pushCapture pushes capture i of the match from s to e (the whole match
// when there are no captures and i is 0).
func (ms *matchState) pushCapture(i, s, e int) {
	L := ms.L
	if i >= ms.level {
		if i != 0 {
			L.RaiseError("invalid capture index")
		}
		L.Push(lua.LString(ms.src[s:e]))
		return
	}
	c := ms.capture[i]
	switch c.len {
	case capUnfinished:
		L.RaiseError("unfinished capture")
	case capPosition:
		L.Push(lua.LNumber(c.init + 1))
	default:
		L.Push(lua.LString(ms.src[c.init : c.init+c.len]))
	}
}

// pushCaptures pushes every capture, or the whole match when there are none
// and whole is set, and returns how many values it pushed.
func (ms *matchState) pushCaptures(s, e int, whole bool) int {
	n := ms.level
	if n == 0 && whole {
		n = 1
	}
	for i := range n {
		ms.pushCapture(i, s, e)
	}
	return n
}

// captureString returns capture i as a string, as gsub's %1-%9 insert it.
func (ms *matchState) captureString(i, s, e int) string {
	if i >= ms.level {
		if i != 0 {
			ms.L.RaiseError("invalid capture index")
		}
		return ms.src[s:e]
	}
	c := ms.capture[i]
	switch c.len {
	case capUnfinished:
		ms.L.RaiseError("unfinished capture")
	case capPosition:
		return strconv.Itoa(c.init + 1)
	}
	return ms.src[c.init : c.init+c.len]
}
