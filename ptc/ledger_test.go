package ptc

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
)

func TestJSONStringSize(t *testing.T) {
	tests := []struct {
		name string
		s    string
		want int
	}{
		{"the empty string is its quotes", "", 2},
		{"ASCII costs a byte a character", "abc", 5},
		{"the euro sign costs its three UTF-8 bytes", "€", 5},
		{"a quote is escaped", `"`, 4},
		{"a backslash is escaped", `\`, 4},
		{"backspace tab newline formfeed and return have short escapes", "\b\t\n\f\r", 12},
		{"NUL is a unicode escape", "\x00", 8},
		{"U+001F is a unicode escape", "\x1f", 8},
		{"DEL is not escaped", "\x7f", 3},
		{"U+2028 and U+2029 are not escaped", "\u2028\u2029", 8},
		{"a two-byte character costs two", "é", 4},
		{"an astral code point costs four", "😀", 6},
		{"a lone surrogate in WTF-8 costs six", "\xed\xa0\x80", 8},
		{"a low lone surrogate in WTF-8 costs six", "a\xed\xbf\xbfb", 10},
		{"an invalid byte costs six", "\xff", 8},
		{"a cut sequence costs six per byte", "\xe2\x82", 14},
		{"an overlong encoding costs six per byte", "\xc0\xaf", 14},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := JSONStringSize(tt.s); got != tt.want {
				t.Fatalf("JSONStringSize(%q) = %d, want %d", tt.s, got, tt.want)
			}
		})
	}
}

func TestJSONValueSize(t *testing.T) {
	cyclic := make([]any, 1)
	cyclic[0] = cyclic
	deep := any(1.0)
	for range 5000 {
		deep = []any{dsl.NewObject(dsl.Member{Key: "k", Value: deep})}
	}
	tests := []struct {
		name string
		v    any
		want int
	}{
		{"null costs four", nil, 4},
		{"true costs four", true, 4},
		{"false costs five", false, 5},
		{"zero costs one", 0.0, 1},
		{"a negative fraction costs its String(n)", -1.5, 4},
		{"1e21 is written with an exponent", 1e21, 5},
		{"1e20 is written in full", 1e20, 21},
		{"a small fraction is written in full", 0.000001, 8},
		{"a string costs its JSON string size", "€", 5},
		{"an empty array is its brackets", []any{}, 2},
		{"array items are separated by commas", []any{1.0, 2.0}, 5},
		{"an empty object is its braces", dsl.NewObject(), 2},
		{"an object is compact", dsl.NewObject(dsl.Member{Key: "a", Value: 1.0}, dsl.Member{Key: "b", Value: []any{true}}), 18},
		{"object keys are JSON strings", dsl.NewObject(dsl.Member{Key: "\n", Value: nil}), 11},
		{"a Go map is measured as its snapshot", map[string]any{"k": "v", "n": 12}, 16},
		{"a Go int is measured as its snapshot", 42, 2},
		{"a 5,000-deep value is measured without recursion", deep, 5000*8 + 1},
		{"NaN is not lossless", math.NaN(), -1},
		{"infinity is not lossless", math.Inf(-1), -1},
		{"negative zero is not lossless", math.Copysign(0, -1), -1},
		{"NaN inside an array is not lossless", []any{1.0, math.NaN()}, -1},
		{"a nil []any is not lossless", []any(nil), -1},
		{"a nil *dsl.Object is not lossless", (*dsl.Object)(nil), -1},
		{"a function is not lossless", func() {}, -1},
		{"a cyclic value is not lossless", cyclic, -1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := JSONValueSize(tt.v)
			if got != tt.want {
				t.Fatalf("JSONValueSize = %d, want %d", got, tt.want)
			}
			if got >= 0 {
				b, err := dsl.Marshal(tt.v)
				if err != nil || len(b) != got {
					t.Fatalf("dsl.Marshal gives %d bytes (%v), JSONValueSize %d", len(b), err, got)
				}
			}
		})
	}
}

// serialized is the counted size of a result: its logs array and its value
// or failure message.
func serialized(r Result) int {
	n := JSONValueSize(toAny(r.Logs))
	switch {
	case r.Err != nil:
		n += JSONStringSize(r.Err.Message)
	case r.HasValue:
		n += JSONValueSize(r.Value)
	}
	return n
}

func toAny(logs []string) []any {
	out := make([]any, len(logs))
	for i, s := range logs {
		out[i] = s
	}
	return out
}

func value(v any) Result { return Result{Value: v, HasValue: true} }

func limitResult(message string, logs ...string) Result {
	if logs == nil {
		logs = []string{}
	}
	return Result{Logs: logs, Err: &Failure{Kind: KindOutputLimit, Message: message}}
}

func TestLedgerExactness(t *testing.T) {
	emoji := "😀\"\\\n"
	tests := []struct {
		name string
		cap  int64
		logs []string // streamed through Log
		in   Result   // given to Finish
		want Result
	}{
		{`return "€" fits at cap 7`, 7, nil, value("€"), Result{Logs: []string{}, Value: "€", HasValue: true}},
		{`return "€" fails at cap 6 with the whole message`, 6, nil, value("€"), limitResult("outer output exceeded 6 bytes")},
		{`console.log("abc"); return "xy" fits at cap 11`, 11, []string{"abc"}, value("xy"),
			Result{Logs: []string{"abc"}, Value: "xy", HasValue: true}},
		{`console.log("abc"); return "xy" fails at cap 10`, 10, []string{"abc"}, value("xy"), limitResult("outer output exceeded 10 bytes")},
		{`console.log("abc"); throw "xy" fits at cap 11`, 11, []string{"abc"}, Result{Err: ExceptionFailure("xy")},
			Result{Logs: []string{"abc"}, Err: ExceptionFailure("xy")}},
		{`console.log("abc"); throw "xy" fails at cap 10`, 10, []string{"abc"}, Result{Err: ExceptionFailure("xy")}, limitResult("outer output exceeded 10 bytes")},
		{"a 1,000-character abort reason at cap 64 is the output limit with empty logs", 64, nil,
			Result{Err: AbortFailure(strings.Repeat("A", 1000))}, limitResult("outer output exceeded 64 bytes")},
		{`return "y".repeat(10_000) at cap 64 is the output limit without a value`, 64, nil,
			value(strings.Repeat("y", 10_000)), limitResult("outer output exceeded 64 bytes")},
		{"a failure at the minimum cap keeps the whole message", 4, nil, Result{Err: ExceptionFailure("x")}, limitResult("outer output exceeded 4 bytes")},
		{"an empty failure message fits the minimum cap", 4, nil, Result{Err: ExceptionFailure("")},
			Result{Logs: []string{}, Err: ExceptionFailure("")}},
		{"an explicit null is a value that costs four", 6, nil, value(nil), Result{Logs: []string{}, Value: nil, HasValue: true}},
		{"an explicit null over the cap is the output limit", 5, nil, value(nil), limitResult("outer output exceeded 5 bytes")},
		{"no completion costs nothing", 4, nil, Result{}, Result{Logs: []string{}}},
		{"a value beside a failure is dropped", 64, nil, Result{Value: "v", HasValue: true, Err: DisposedFailure()},
			Result{Logs: []string{}, Err: DisposedFailure()}},
		{"a lossy completion becomes invalid output", 64, []string{"kept"}, value(math.NaN()),
			Result{Logs: []string{"kept"}, Err: InvalidOutputFailure()}},
		{"invalid output over the cap is the output limit", 4, nil, value(math.NaN()), limitResult("outer output exceeded 4 bytes")},
		{"an oversized first log keeps a code-point-aligned prefix", 96, []string{"start-" + strings.Repeat(emoji, 100)}, value(nil),
			limitResult("outer output exceeded 96 bytes", "start-"+strings.Repeat(emoji, 5)+"😀")},
		{"a log of quotes keeps as many escaped quotes as fit", 96, []string{strings.Repeat(`"`, 1_000_000)}, Result{},
			limitResult("outer output exceeded 96 bytes", strings.Repeat(`"`, 30))},
		{"whole entries then a prefix of the first that does not fit are kept", 80,
			[]string{strings.Repeat("a", 20), strings.Repeat("b", 100)}, Result{},
			limitResult("outer output exceeded 80 bytes", strings.Repeat("a", 20), strings.Repeat("b", 21))},
		{"an entry that fits whole is kept whole even when the value does not fit", 80,
			[]string{strings.Repeat("a", 20)}, value(strings.Repeat("v", 100)),
			limitResult("outer output exceeded 80 bytes", strings.Repeat("a", 20))},
		{"no empty prefix is kept", 37, []string{"a", "bb"}, value(strings.Repeat("z", 30)),
			limitResult("outer output exceeded 37 bytes", "a")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger(tt.cap)
			for _, e := range tt.logs {
				l.Log(e)
			}
			got := l.Finish(tt.in)
			if !reflect.DeepEqual(got, tt.want) {
				t.Fatalf("Finish =\n  %s\nwant\n  %s", show(got), show(tt.want))
			}
			checkWithinCap(t, got, tt.cap)
		})
	}
}

// checkWithinCap fails t unless r counts at most cap bytes, the
// output-limit message aside: that message is whole at every cap, and its
// logs keep at most what the cap leaves beside it (an empty array when
// nothing is left).
func checkWithinCap(t *testing.T, r Result, cap int64) {
	t.Helper()
	if r.Err == nil || r.Err.Kind != KindOutputLimit {
		if n := serialized(r); int64(n) > cap {
			t.Fatalf("the result counts %d bytes, over the cap %d: %s", n, cap, show(r))
		}
		return
	}
	if want := outputLimitMessage(cap); r.Err.Message != want {
		t.Fatalf("the output-limit message is %q, want the whole %q", r.Err.Message, want)
	}
	logs := int64(JSONValueSize(toAny(r.Logs)))
	if left := cap - int64(JSONStringSize(r.Err.Message)); logs > max(left, 2) {
		t.Fatalf("the logs count %d bytes, over the %d the cap %d leaves beside the message: %s", logs, left, cap, show(r))
	}
}

func show(r Result) string {
	s := fmt.Sprintf("logs %q", r.Logs)
	if r.HasValue {
		s += fmt.Sprintf(" value %#v", r.Value)
	}
	if r.Err != nil {
		s += fmt.Sprintf(" err %+v", *r.Err)
	}
	return s
}

func TestLedgerOutputLimitMessageIsWholeAtEveryCap(t *testing.T) {
	logs := []string{"abc", "€€€", "😀x"}
	never := value(strings.Repeat("€", 1000)) // fits none of these caps
	tests := []struct {
		name string
		cap  int64
		want []string // the logs kept beside the message
	}{
		{"at the minimum cap 4 the message is whole and no log is kept", 4, nil},
		{"at cap 6 the message is whole and no log is kept", 6, nil},
		{"at cap 10 the message is whole and no log is kept", 10, nil},
		{"at cap 33 the message takes all but 1 byte and no log is kept", 33, nil},
		{"at cap 36 the 4 bytes left would hold only an empty prefix, which is not kept", 36, nil},
		{"at cap 37 the 5 bytes left keep a one-character prefix", 37, []string{"a"}},
		{"at cap 39 the 7 bytes left keep the first entry", 39, []string{"abc"}},
		{"at cap 44 no part of a multibyte character is kept", 44, []string{"abc"}},
		{"at cap 45 a whole euro sign is kept", 45, []string{"abc", "€"}},
		{"at cap 50 the second entry keeps two of its euro signs", 50, []string{"abc", "€€"}},
		{"at cap 300 every entry is kept", 300, logs},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := NewLedger(tt.cap)
			for _, e := range logs {
				l.Log(e)
			}
			got := l.Finish(never)
			if want := limitResult(outputLimitMessage(tt.cap), tt.want...); !reflect.DeepEqual(got, want) {
				t.Fatalf("Finish =\n  %s\nwant\n  %s", show(got), show(want))
			}
			if got.Err.Message != fmt.Sprintf("outer output exceeded %d bytes", tt.cap) {
				t.Fatalf("message %q", got.Err.Message)
			}
		})
	}

	t.Run("at every cap from 4 to 400 the message is whole and the logs are the longest prefix that fits beside it", func(t *testing.T) {
		for c := int64(MinOutputBytes); c <= 400; c++ {
			for _, stream := range []bool{true, false} {
				var got Result
				if stream {
					l := NewLedger(c)
					for _, e := range logs {
						l.Log(e)
					}
					got = l.Finish(never)
				} else { // a host revalidating a whole result
					got = NewLedger(c).Finish(Result{Logs: logs, Value: never.Value, HasValue: true})
				}
				checkWithinCap(t, got, c)
				for i, e := range got.Logs {
					if i < len(got.Logs)-1 && e != logs[i] || !strings.HasPrefix(logs[i], e) || e == "" {
						t.Fatalf("cap %d: logs %q are not a prefix of %q", c, got.Logs, logs)
					}
				}
				// One more character would not fit beside the message.
				if more, ok := oneMoreCharacter(got.Logs, logs); ok {
					if size := int64(JSONValueSize(toAny(more)) + JSONStringSize(got.Err.Message)); size <= c {
						t.Fatalf("cap %d: logs %q stop short of %q, which fits (%d bytes)", c, got.Logs, more, size)
					}
				}
			}
		}
	})
}

// oneMoreCharacter is kept, a prefix of logs, with the next character of
// logs added; false when kept is all of logs.
func oneMoreCharacter(kept, logs []string) ([]string, bool) {
	n := len(kept)
	switch {
	case n > 0 && kept[n-1] != logs[n-1]:
		rest := logs[n-1][len(kept[n-1]):]
		_, w := utf8.DecodeRuneInString(rest)
		return append(slices.Clone(kept[:n-1]), kept[n-1]+rest[:w]), true
	case n < len(logs):
		_, w := utf8.DecodeRuneInString(logs[n])
		return append(slices.Clone(kept), logs[n][:w]), true
	}
	return nil, false
}

func TestLedgerDefaultCapBoundary(t *testing.T) {
	for _, tt := range []struct {
		name string
		n    int
		fits bool
	}{
		{`"x".repeat(67_108_860) fits the default cap`, 67_108_860, true},
		{`"x".repeat(67_108_861) is over the default cap`, 67_108_861, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := NewLedger(DefaultMaxOutputBytes).Finish(value(strings.Repeat("x", tt.n)))
			if tt.fits {
				if got.Err != nil || !got.HasValue {
					t.Fatalf("got %+v", got.Err)
				}
				return
			}
			want := limitResult("outer output exceeded 67108864 bytes")
			if got.HasValue || !reflect.DeepEqual(got, want) {
				t.Fatalf("got %s", show(got))
			}
		})
	}
}

func TestLedgerRunawayLogs(t *testing.T) {
	l := NewLedger(300)
	refused := 0
	for i := range 1000 {
		if !l.Log(fmt.Sprintf("line %d", i)) {
			refused++
		}
	}
	if !l.Exceeded() || refused == 0 || l.Remaining() >= 0 {
		t.Fatalf("exceeded %v, refused %d, remaining %d", l.Exceeded(), refused, l.Remaining())
	}
	got := l.Finish(value("never"))
	if got.HasValue || got.Err == nil || *got.Err != (Failure{KindOutputLimit, "outer output exceeded 300 bytes"}) {
		t.Fatalf("got %s", show(got))
	}
	if len(got.Logs) == 0 || got.Logs[0] != "line 0" {
		t.Fatalf("no retained log: %q", got.Logs)
	}
	if n := JSONValueSize(toAny(got.Logs)); n >= 300 {
		t.Fatalf("the retained logs count %d bytes", n)
	}
	if n := serialized(got); n > 300 {
		t.Fatalf("the result counts %d bytes", n)
	}
}

func TestLedgerChargesGivenLogsAfterStreamedOnes(t *testing.T) {
	// A host revalidating a whole result from a child: forged logs are
	// charged to a fresh ledger like streamed ones.
	forged := make([]string, 50)
	for i := range forged {
		forged[i] = strings.Repeat("F", 100)
	}
	got := NewLedger(200).Finish(Result{Logs: forged, Value: []any{strings.Repeat("V", 100_000)}, HasValue: true})
	want := limitResult("outer output exceeded 200 bytes", strings.Repeat("F", 100), strings.Repeat("F", 60))
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %s", show(got))
	}

	l := NewLedger(64)
	l.Log("streamed")
	got = l.Finish(Result{Logs: []string{"given"}, Value: 1.0, HasValue: true})
	want = Result{Logs: []string{"streamed", "given"}, Value: 1.0, HasValue: true}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %s", show(got))
	}
}

func TestLedgerLimitAndRemaining(t *testing.T) {
	l := NewLedger(64)
	if l.Cap() != 64 || l.Remaining() != 62 {
		t.Fatalf("cap %d remaining %d", l.Cap(), l.Remaining())
	}
	l.Log("ab")
	l.Log("c")
	if l.Remaining() != 64-2-4-1-3 {
		t.Fatalf("remaining %d", l.Remaining())
	}
	got := l.Limit()
	if !reflect.DeepEqual(got, limitResult("outer output exceeded 64 bytes", "ab", "c")) {
		t.Fatalf("got %s", show(got))
	}
	if l.Log(strings.Repeat("z", 100)) || !l.Exceeded() || l.Log("") {
		t.Fatal("an entry after the cap was admitted")
	}
}

func TestLedgerIsSafeForConcurrentLogs(t *testing.T) {
	l := NewLedger(DefaultMaxOutputBytes)
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 250 {
				l.Log(fmt.Sprintf("%d-%d", g, i))
			}
		})
	}
	wg.Wait()
	got := l.Finish(Result{})
	if len(got.Logs) != 1000 || got.Err != nil {
		t.Fatalf("%d logs, err %v", len(got.Logs), got.Err)
	}
}

func TestTruncateJSONStringCutsBetweenCharacters(t *testing.T) {
	tests := []struct {
		s     string
		limit int64
		want  string
	}{
		{"abc", 1, ""}, {"abc", 2, ""}, {"abc", 3, "a"}, {"abc", 5, "abc"}, {"abc", 100, "abc"},
		{"€x", 4, ""}, {"€x", 5, "€"}, {"😀", 5, ""}, {"😀", 6, "😀"},
		{"\xed\xa0\x80z", 7, ""}, {"\xed\xa0\x80z", 8, "\xed\xa0\x80"}, {"\n\n", 5, "\n"},
	}
	for _, tt := range tests {
		if got := truncateJSONString(tt.s, tt.limit); got != tt.want {
			t.Errorf("truncateJSONString(%q, %d) = %q, want %q", tt.s, tt.limit, got, tt.want)
		}
	}
}
