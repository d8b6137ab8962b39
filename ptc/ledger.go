package ptc

import (
	"math"
	"slices"
	"sync"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
)

// JSONStringSize is the size of s written as a JSON string by
// JSON.stringify (§3.3): 2 for the quotes; `"` and `\` 2; \b \t \n \f \r 2;
// other U+0000–U+001F 6; an astral code point 4; anything else its UTF-8
// length (U+2028 and U+2029 are not escaped: 3).
//
// Go strings are bytes, so s may not be UTF-8. A lone surrogate written as
// WTF-8 (ED A0–BF 80–BF, what a UTF-16 string with a lone surrogate becomes)
// costs 6 like the spec's lone surrogate (JSON.stringify writes \udxxx).
// Any other byte that does not start a valid UTF-8 sequence costs 6 on its
// own: what \ufffd costs, the most any rendering of it can take.
func JSONStringSize(s string) int {
	n, _ := jsonStringSizeUpTo(s, math.MaxInt64)
	return int(n)
}

// asciiCost is the JSON-string cost of each ASCII byte.
var asciiCost = func() (t [utf8.RuneSelf]uint8) {
	for c := range t {
		t[c] = 1
		if c < 0x20 {
			t[c] = 6
		}
	}
	for _, c := range []byte{'"', '\\', '\b', '\t', '\n', '\f', '\r'} {
		t[c] = 2
	}
	return t
}()

// jsonUnit measures the character at s[i]: its width in s and its cost in a
// JSON string. Every cost is at least the width.
func jsonUnit(s string, i int) (width, cost int) {
	c := s[i]
	if c < utf8.RuneSelf {
		return 1, int(asciiCost[c])
	}
	if c == 0xED && i+2 < len(s) && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
		return 3, 6 // a surrogate in WTF-8
	}
	r, w := utf8.DecodeRuneInString(s[i:])
	if r == utf8.RuneError && w == 1 {
		return 1, 6
	}
	return w, w // 2 and 3 bytes cost their length, astral (4 bytes) 4
}

// jsonStringSizeUpTo is JSONStringSize(s) when it is at most limit; else ok
// is false, found without reading more of s than needed.
func jsonStringSizeUpTo(s string, limit int64) (n int64, ok bool) {
	if limit < 2 || int64(len(s)) > limit-2 { // a character costs at least its width
		return 0, false
	}
	n = 2
	if int64(len(s))*6 <= limit-2 { // fits whatever s holds: no need to check as we go
		for i := 0; i < len(s); {
			w, c := jsonUnit(s, i)
			n += int64(c)
			i += w
		}
		return n, true
	}
	for i := 0; i < len(s); {
		w, c := jsonUnit(s, i)
		n += int64(c)
		if n > limit {
			return 0, false
		}
		i += w
	}
	return n, true
}

// truncateJSONString is the longest prefix of s, cut between characters,
// whose JSON string size is at most limit; "" when limit < 2.
func truncateJSONString(s string, limit int64) string {
	if limit < 2 {
		return ""
	}
	n := int64(2)
	for i := 0; i < len(s); {
		w, c := jsonUnit(s, i)
		if n+int64(c) > limit {
			return s[:i]
		}
		n += int64(c)
		i += w
	}
	return s
}

// JSONValueSize is the size of v written as compact JSON (§3.3): strings as
// JSONStringSize says, numbers as JavaScript's String(n), true 4, false 5,
// null 4, containers with their brackets, commas and colons. v is in dsl's
// form (nil, bool, float64, string, []any, *dsl.Object); other Go values are
// measured as their dsl.Snapshot. It is -1 when v is not lossless JSON: a
// NaN, infinite or -0 number, a nil []any or *dsl.Object, a value
// dsl.Snapshot refuses, or one nested deeper than dsl.DefaultMaxDepth (so a
// cycle ends too).
func JSONValueSize(v any) int {
	n, st := jsonValueSizeUpTo(v, math.MaxInt64)
	if st != sizeFits {
		return -1
	}
	return int(n)
}

// sizeStatus is the outcome of measuring a value against a limit.
type sizeStatus uint8

const (
	sizeFits    sizeStatus = iota
	sizeOver               // larger than the limit
	sizeInvalid            // not lossless JSON
)

// sizeFrame is an open container while measuring.
type sizeFrame struct {
	list []any
	obj  *dsl.Object
	i, n int
}

// jsonValueSizeUpTo measures v without recursion, stopping as soon as the
// size passes limit.
func jsonValueSizeUpTo(v any, limit int64) (int64, sizeStatus) {
	var n int64
	var stack []sizeFrame
	add := func(c int64) bool {
		n += c
		return n <= limit
	}
	addString := func(s string) bool {
		c, ok := jsonStringSizeUpTo(s, limit-n)
		n += c
		return ok
	}
	var num [32]byte
	snapshotted := false
	for {
		switch x := v.(type) {
		case nil:
			if !add(4) {
				return n, sizeOver
			}
		case bool:
			c := int64(5)
			if x {
				c = 4
			}
			if !add(c) {
				return n, sizeOver
			}
		case float64:
			if !isFinite(x) || (x == 0 && math.Signbit(x)) {
				return n, sizeInvalid
			}
			if !add(int64(len(appendJSNumber(num[:0], x)))) {
				return n, sizeOver
			}
		case string:
			if !addString(x) {
				return n, sizeOver
			}
		case []any:
			if x == nil {
				return n, sizeInvalid
			}
			if len(x) == 0 {
				if !add(2) {
					return n, sizeOver
				}
				break
			}
			if len(stack) >= dsl.DefaultMaxDepth {
				return n, sizeInvalid
			}
			if !add(1) {
				return n, sizeOver
			}
			stack = append(stack, sizeFrame{list: x, n: len(x)})
			v = x[0]
			snapshotted = false
			continue
		case *dsl.Object:
			if x == nil {
				return n, sizeInvalid
			}
			if x.Len() == 0 {
				if !add(2) {
					return n, sizeOver
				}
				break
			}
			if len(stack) >= dsl.DefaultMaxDepth {
				return n, sizeInvalid
			}
			k, first := x.At(0)
			if !add(1) || !addString(k) || !add(1) {
				return n, sizeOver
			}
			stack = append(stack, sizeFrame{obj: x, n: x.Len()})
			v = first
			snapshotted = false
			continue
		default:
			if snapshotted { // unreachable: a snapshot is in dsl's form
				return n, sizeInvalid
			}
			s, err := dsl.Snapshot(x)
			if err != nil {
				return n, sizeInvalid
			}
			v, snapshotted = s, true
			continue
		}
		snapshotted = false

		// v is measured: on to the next item, closing finished containers.
		for {
			if len(stack) == 0 {
				return n, sizeFits
			}
			f := &stack[len(stack)-1]
			f.i++
			if f.i < f.n {
				if !add(1) { // the comma
					return n, sizeOver
				}
				if f.obj != nil {
					var k string
					k, v = f.obj.At(f.i)
					if !addString(k) || !add(1) {
						return n, sizeOver
					}
				} else {
					v = f.list[f.i]
				}
				break
			}
			if !add(1) { // the closing bracket
				return n, sizeOver
			}
			stack = stack[:len(stack)-1]
		}
	}
}

// Ledger is one run's output budget (§3.3): the JSON size of the logs array
// plus the completion value's compact JSON size or the failure message's
// JSON string size must stay within the cap. Log entries stream through
// [Ledger.Log]; [Ledger.Finish] accounts the end of the run. A Ledger is safe
// for concurrent use.
type Ledger struct {
	mu      sync.Mutex
	limit   int64
	used    int64    // the logs array's JSON size so far
	logs    []string // the admitted entries
	over    bool     // an entry was refused
	refused string   // the refused entry, whose prefix the result may keep
}

// NewLedger returns an empty ledger whose cap is limit bytes (a validated
// MaxOutputBytes: at least 4).
func NewLedger(limit int64) *Ledger {
	return &Ledger{limit: limit, used: 2}
}

// Cap is the ledger's cap in bytes.
func (l *Ledger) Cap() int64 { return l.limit }

// Log charges one log entry and keeps it, or refuses it when the logs array
// would no longer fit the cap; after a refusal the run is over its budget,
// every later entry is refused, and Finish reports the output limit.
func (l *Ledger) Log(entry string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.admit(entry)
}

func (l *Ledger) admit(entry string) bool {
	if l.over {
		return false
	}
	sep := int64(0)
	if len(l.logs) > 0 {
		sep = 1
	}
	c, ok := jsonStringSizeUpTo(entry, l.limit-l.used-sep)
	if !ok {
		l.over, l.refused = true, entry
		return false
	}
	l.used += c + sep
	l.logs = append(l.logs, entry)
	return true
}

// Remaining is what the cap leaves for the completion value or the failure
// message after the logs so far; negative once an entry was refused.
func (l *Ledger) Remaining() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.over {
		return -1
	}
	return l.limit - l.used
}

// Exceeded reports whether an entry was refused.
func (l *Ledger) Exceeded() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.over
}

// Finish accounts the run's result r and returns what the run reports.
// r.Logs are entries not yet charged: they are charged after those Log kept
// (a runtime that streamed every entry passes none; a host revalidating a
// whole result from elsewhere passes them all to a fresh ledger). Then r.Err
// (which wins over a value) is charged by its message, or else the value by
// its compact JSON, a value that is not lossless JSON becoming the
// invalid-output failure. Over the cap, the result is the output limit:
// the longest prefix of the logs that fits beside its message (whole
// entries, then a prefix, cut between characters, of the first entry that
// does not fit, if that prefix is not empty), no value, and the failure
// {output-limit, "outer output exceeded <cap> bytes"}. That message is
// never cut: it is not charged against the cap, the logs give way to it, so
// at a cap too small for the message the result has no logs. The Logs of the
// returned result are never nil.
func (l *Ledger) Finish(r Result) Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range r.Logs {
		if !l.admit(e) {
			break
		}
	}
	if l.over {
		return l.limitResult()
	}
	logs := slices.Clip(slices.Clone(l.logs))
	if logs == nil {
		logs = []string{}
	}
	fail := r.Err
	if fail == nil && r.HasValue {
		switch _, st := jsonValueSizeUpTo(r.Value, l.limit-l.used); st {
		case sizeFits:
			return Result{Value: r.Value, HasValue: true, Logs: logs}
		case sizeOver:
			return l.limitResult()
		default:
			fail = InvalidOutputFailure()
		}
	}
	if fail == nil {
		return Result{Logs: logs}
	}
	if _, ok := jsonStringSizeUpTo(fail.Message, l.limit-l.used); !ok {
		return l.limitResult()
	}
	f := *fail
	return Result{Logs: logs, Err: &f}
}

// Limit returns the output-limit result for the logs so far, as Finish does
// over the cap: for a runtime that learns by other means that the run's
// output cannot fit (a completion or thrown value measured in the program's
// side against [Ledger.Remaining]). It is a final result: its Logs are the
// ledger's own, so it is not to be given to Finish, which would charge them
// again (give Finish the failure [OutputLimitFailure] instead).
func (l *Ledger) Limit() Result {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.limitResult()
}

// limitResult is the output-limit result, l.mu held. Its message is whole
// at every cap: it is not charged against the cap, the logs give way to it
// (they keep what cap − bytes(message) leaves, nothing when that is less
// than the 2 bytes of an empty array).
func (l *Ledger) limitResult() Result {
	msg := outputLimitMessage(l.limit)
	logBudget := l.limit - int64(len(msg)+2) // the message is ASCII
	kept := []string{}
	used := int64(2)
	entries := l.logs
	if l.over {
		entries = append(slices.Clip(entries), l.refused)
	}
	for _, e := range entries {
		sep := int64(0)
		if len(kept) > 0 {
			sep = 1
		}
		avail := logBudget - used - sep
		if c, ok := jsonStringSizeUpTo(e, avail); ok {
			kept = append(kept, e)
			used += c + sep
			continue
		}
		if p := truncateJSONString(e, avail); p != "" {
			kept = append(kept, p)
		}
		break
	}
	return Result{Logs: kept, Err: &Failure{Kind: KindOutputLimit, Message: msg}}
}
