package engine

import (
	"strconv"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/internal/textcap"
)

// MaxLogLine bounds one line a [JSONLLog] writes, its newline included: the
// longest line a reader of the log (dsh replay) must take. An event whose
// line would be longer is written cut (see [LogCutKey]), so that every line
// of a log stays readable: a 12 MiB result of control characters, escaped
// six bytes each, made a 75 MB line that replay refused, and with it the
// whole log.
const MaxLogLine = 64 << 20

// LogCutKey is the member a line cut to fit [MaxLogLine] carries: the bytes
// its event's whole line would have had (at most: numbers are counted at
// their longest). In a cut line every string longer
// than 64 KiB keeps its first 64 KiB and ends with "… (truncated)"; when that
// is still too long, only the event's identifying members are kept (ids,
// name, isError) and its content is one text block saying what was left out.
const LogCutKey = "truncated"

// maxCutString is what a string of a cut line keeps, in bytes.
const maxCutString = 64 << 10

// logIdentity are the members a line cut to its identity keeps.
var logIdentity = [...]string{"id", "type", "agent", "time", "callId", "name", "callEvent", "isError",
	"rootCallId", "parentCallId", "subCallId"}

// cutLine is the line of o, whose whole line has full bytes (newline
// included, over MaxLogLine), cut to fit MaxLogLine.
func cutLine(o *dsl.Object, full int) ([]byte, error) {
	cut, _ := cutStrings(o).(*dsl.Object)
	cut.Set(LogCutKey, full)
	if lineSize(cut, MaxLogLine)+1 <= MaxLogLine {
		line, err := dsl.Marshal(cut)
		if err != nil || len(line)+1 <= MaxLogLine {
			return line, err
		}
	}
	kept := dsl.NewObject()
	for _, k := range logIdentity {
		if v, ok := cut.Get(k); ok {
			kept.Set(k, v)
		}
	}
	if _, ok := o.Get("content"); ok {
		kept.Set("content", []any{dsl.NewObject(
			dsl.Member{Key: "type", Value: "text"},
			dsl.Member{Key: "text", Value: "(left out of the log: the event's line had " + strconv.Itoa(full) +
				" bytes, over the log's " + strconv.Itoa(MaxLogLine) + ")"},
		)})
	}
	kept.Set(LogCutKey, full)
	return dsl.Marshal(kept)
}

// cutStrings copies v with every string longer than maxCutString cut,
// marked. Containers are copied; other values are shared.
func cutStrings(v any) any {
	switch x := v.(type) {
	case string:
		return textcap.String(x, maxCutString)
	case *dsl.Object:
		out := dsl.NewObject()
		for k, mv := range x.All() {
			out.Set(textcap.String(k, maxCutString), cutStrings(mv))
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = cutStrings(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, mv := range x {
			out[textcap.String(k, maxCutString)] = cutStrings(mv)
		}
		return out
	}
	return v
}

// lineSize is the size of v's JSON text as dsl.Marshal writes it, or a
// number above limit once it passes limit (the walk stops there). Strings
// and containers are measured without being copied, so an event whose line
// would be hundreds of megabytes is measured, not made.
func lineSize(v any, limit int) int {
	n := 0
	var num []byte
	stack := []any{v}
	for len(stack) > 0 && n <= limit {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch x := v.(type) {
		case string:
			n += jsonStringSize(x)
		case *dsl.Object:
			n += containerSize(x.Len(), 2)
			for k, mv := range x.All() {
				n += jsonStringSize(k)
				stack = append(stack, mv)
			}
		case []any:
			n += containerSize(len(x), 1)
			stack = append(stack, x...)
		case nil:
			n += len("null")
		case bool:
			n += len(strconv.FormatBool(x))
		default: // a number, or another Go form dsl.Marshal converts
			var err error
			if num, err = dsl.AppendJSON(num[:0], x); err != nil {
				return limit + 1 // refused: dsl.Marshal says why
			}
			n += len(num)
		}
	}
	return n
}

// containerSize is the punctuation of a container of k elements with per
// separators each (a comma, and a colon for an object's members).
func containerSize(k, per int) int {
	if k == 0 {
		return 2
	}
	return 2 + per*k - 1
}

// jsonStringSize is the size of s quoted as dsl.Marshal quotes it.
func jsonStringSize(s string) int {
	n := len(s) + 2
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '"' || c == '\\' || c == '\b' || c == '\f' || c == '\n' || c == '\r' || c == '\t':
			n++
		case c < 0x20:
			n += 5
		}
	}
	return n
}
