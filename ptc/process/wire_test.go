package process

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
)

// Texts that are not valid UTF-8: a JavaScript string with a lone surrogate
// arrives as WTF-8, and a stray byte stands for anything else.
const (
	loneSurrogate = "\xed\xa0\x80" // U+D800 as WTF-8
	strayByte     = "\xff"
)

// nestedArrays returns leaf inside depth arrays.
func nestedArrays(depth int, leaf any) any {
	v := leaf
	for range depth {
		v = []any{v}
	}
	return v
}

// nestedObjects returns leaf inside depth objects, each with one member "a".
func nestedObjects(depth int, leaf any) any {
	v := leaf
	for range depth {
		v = dsl.NewObject(dsl.Member{Key: "a", Value: v})
	}
	return v
}

// messageDiff says how got differs from want, or returns "" when they are
// the same message. Values (Args, Value) are compared as JSON texts, so that
// the order of object members counts too.
func messageDiff(want, got *message) string {
	for _, v := range []struct {
		name      string
		want, got any
	}{{"Args", want.Args, got.Args}, {"Value", want.Value, got.Value}} {
		wj, werr := dsl.Marshal(v.want)
		gj, gerr := dsl.Marshal(v.got)
		if werr != nil || gerr != nil {
			return fmt.Sprintf("%s does not encode: want error %v, got error %v", v.name, werr, gerr)
		}
		if !bytes.Equal(wj, gj) || !dsl.Equal(v.want, v.got) {
			return fmt.Sprintf("%s is %.200s, want %.200s", v.name, gj, wj)
		}
	}
	w, g := *want, *got
	w.Args, w.Value, g.Args, g.Value = nil, nil, nil, nil
	if !reflect.DeepEqual(w, g) {
		return fmt.Sprintf("got %+.300v, want %+.300v", g, w)
	}
	return ""
}

// crossTheWire sends m through a frame and decodes it as a message from the
// child (fromChild) or from the parent, returning the frame's body too.
func crossTheWire(t *testing.T, m *message, fromChild bool) (*message, []byte) {
	t.Helper()
	body, err := m.encode()
	if err != nil {
		t.Fatalf("encode: %v", err)
	}
	var buf bytes.Buffer
	if err := writeFrame(&buf, body); err != nil {
		t.Fatalf("writeFrame: %v", err)
	}
	if got, want := buf.Len(), frameHeader+len(body); got != want {
		t.Fatalf("the frame has %d bytes, want %d", got, want)
	}
	rd := bufio.NewReader(&buf)
	read, err := readFrame(rd, int64(len(body)))
	if err != nil {
		t.Fatalf("readFrame: %v", err)
	}
	if !bytes.Equal(read, body) {
		t.Fatalf("readFrame returned another body")
	}
	if _, err := readFrame(rd, int64(len(body))); err != io.EOF {
		t.Fatalf("after the frame, readFrame: %v, want io.EOF", err)
	}
	got, err := decode(read, fromChild)
	if err != nil {
		t.Fatalf("decode: %v", err)
	}
	return got, body
}

// childMessages are messages of every type a child sends, with their
// encodings where they are short enough to spell out.
var childMessages = []struct {
	name string
	m    *message
	json string // "" for not checked
}{
	{"a ready message crosses", &message{T: msgReady}, `{"t":"ready"}`},
	{"a call crosses", &message{T: msgCall, ID: 1, NS: 0, Name: "echo", Args: dsl.NewObject(dsl.Member{Key: "x", Value: 1.0})},
		`{"t":"call","id":1,"ns":0,"name":"echo","args":{"x":1}}`},
	{"a call with the largest id and namespace index crosses", &message{T: msgCall, ID: 1<<53 - 1, NS: math.MaxInt32, Name: "", Args: nil},
		`{"t":"call","id":9007199254740991,"ns":2147483647,"name":"","args":null}`},
	{"a call's args keep the order of their members", &message{T: msgCall, ID: 7, NS: 2, Name: "f", Args: []any{dsl.NewObject(dsl.Member{Key: "z", Value: true}, dsl.Member{Key: "a", Value: "é"}), -1.5e-7, "x"}},
		`{"t":"call","id":7,"ns":2,"name":"f","args":[{"z":true,"a":"é"},-1.5e-7,"x"]}`},
	{"a call with 5,000 levels of nested arrays crosses", &message{T: msgCall, ID: 2, NS: 1, Name: "deep", Args: nestedArrays(5000, 1.0)}, ""},
	{"a call with 5,000 levels of nested objects crosses", &message{T: msgCall, ID: 2, NS: 1, Name: "deep", Args: nestedObjects(5000, "bottom")}, ""},
	{"a call with a 1 MiB string crosses", &message{T: msgCall, ID: 3, Name: "big", Args: strings.Repeat("ab\"\\\n\x01é", 1<<17)}, ""},
	{"a log entry crosses", &message{T: msgLog, Entry: "hello"}, `{"t":"log","entry":"hello"}`},
	{"an empty log entry crosses as a string", &message{T: msgLog, Entry: ""}, `{"t":"log","entry":""}`},
	{"a log entry that looks like the base64 form crosses as a string", &message{T: msgLog, Entry: `{"base64":"/w=="}`}, `{"t":"log","entry":"{\"base64\":\"/w==\"}"}`},
	{"a log entry with a lone surrogate crosses as base64", &message{T: msgLog, Entry: "a" + loneSurrogate + "b"}, `{"t":"log","entry":{"base64":"Ye2ggGI="}}`},
	{"a log entry with a stray byte crosses as base64", &message{T: msgLog, Entry: strayByte}, `{"t":"log","entry":{"base64":"/w=="}}`},
	{"a log entry of 1 MiB that is not UTF-8 crosses", &message{T: msgLog, Entry: strings.Repeat("x"+strayByte+loneSurrogate, 1<<18)}, ""},
	{"a done message with a value crosses", &message{T: msgDone, Value: []any{1.0, "two", false}, HasValue: true}, `{"t":"done","value":[1,"two",false]}`},
	{"a done message with a null value keeps its value", &message{T: msgDone, Value: nil, HasValue: true}, `{"t":"done","value":null}`},
	{"a done message with 5,000 levels of nesting crosses", &message{T: msgDone, Value: nestedObjects(5000, nestedArrays(5000, nil)), HasValue: true}, ""},
	{"a done message with a 1 MiB string crosses", &message{T: msgDone, Value: strings.Repeat("\u2028z", 1<<18), HasValue: true}, ""},
	{"a done message without a value crosses", &message{T: msgDone}, `{"t":"done"}`},
	{"a done message with a failure crosses", &message{T: msgDone, Kind: "timeout", Message: "too slow"}, `{"t":"done","kind":"timeout","message":"too slow"}`},
	{"a failure whose message has a lone surrogate crosses as base64", &message{T: msgDone, Kind: "exception", Message: "Error: " + loneSurrogate}, `{"t":"done","kind":"exception","message":{"base64":"RXJyb3I6IO2ggA=="}}`},
	{"a failure with a stray byte crosses as base64", &message{T: msgDone, Kind: "invalid-output", Message: strayByte + "x"}, `{"t":"done","kind":"invalid-output","message":{"base64":"/3g="}}`},
	{"a misuse message crosses", &message{T: msgMisuse, Error: "process: no"}, `{"t":"misuse","error":"process: no"}`},
	{"a misuse message that is not UTF-8 crosses as base64", &message{T: msgMisuse, Error: loneSurrogate + strayByte}, `{"t":"misuse","error":{"base64":"7aCA/w=="}}`},
}

// parentMessages are messages of every type the parent sends.
var parentMessages = []struct {
	name string
	m    *message
	json string
}{
	{"a config crosses", &message{T: msgConfig, Config: config{Language: "javascript", ComputeMs: 1000, MaxWallMs: 5000, MaxOutputBytes: 65536, MaxMemoryMB: 256}},
		`{"t":"config","language":"javascript","computeMs":1000,"maxWallMs":5000,"maxOutputBytes":65536,"maxMemoryMB":256}`},
	{"a config with fractions crosses", &message{T: msgConfig, Config: config{Language: "lua", ComputeMs: 0.5, MaxWallMs: 1e21, MaxOutputBytes: 0, MaxMemoryMB: 1.25}},
		`{"t":"config","language":"lua","computeMs":0.5,"maxWallMs":1e+21,"maxOutputBytes":0,"maxMemoryMB":1.25}`},
	{"a run without namespaces crosses", &message{T: msgRun, Program: "1 + 1"}, `{"t":"run","program":"1 + 1","bindings":[]}`},
	{"a run with several namespaces crosses", &message{T: msgRun, Program: "return tools.a()", Bindings: []wireNamespace{
		{Global: "tools", ErrorClass: "ToolError", ErrorMember: "ToolCallError", Names: []string{"a", "b"}},
		{Global: "fs", ErrorClass: "FsError", ErrorMember: "FsCallError", Names: []string{"read"}},
		{Global: "empty", ErrorClass: "E", ErrorMember: "M"},
	}}, `{"t":"run","program":"return tools.a()","bindings":[` +
		`{"global":"tools","errorClass":"ToolError","errorMember":"ToolCallError","names":["a","b"]},` +
		`{"global":"fs","errorClass":"FsError","errorMember":"FsCallError","names":["read"]},` +
		`{"global":"empty","errorClass":"E","errorMember":"M","names":[]}]}`},
	{"a run with a 1 MiB program crosses", &message{T: msgRun, Program: strings.Repeat("x = '\u00e9\"';\n", 1<<16)}, ""},
	{"a result with a value crosses", &message{T: msgResult, ID: 3, OK: true, Value: []any{1.0, "x"}}, `{"t":"result","id":3,"ok":true,"value":[1,"x"]}`},
	{"a result with a null value crosses", &message{T: msgResult, ID: 1<<53 - 1, OK: true}, `{"t":"result","id":9007199254740991,"ok":true,"value":null}`},
	{"a result with 5,000 levels of nesting crosses", &message{T: msgResult, ID: 4, OK: true, Value: nestedArrays(5000, nestedObjects(5000, 0.0))}, ""},
	{"a result with a 1 MiB string crosses", &message{T: msgResult, ID: 5, OK: true, Value: strings.Repeat("\x00\u007f\U0001f600", 1<<18)}, ""},
	{"a result with an error crosses", &message{T: msgResult, ID: 3, Error: "boom"}, `{"t":"result","id":3,"ok":false,"error":"boom"}`},
	{"a result with an error that is not UTF-8 crosses as base64", &message{T: msgResult, ID: 3, Error: strayByte}, `{"t":"result","id":3,"ok":false,"error":{"base64":"/w=="}}`},
}

func TestMessagesCrossTheWireUnchanged(t *testing.T) {
	type tc = struct {
		name      string
		m         *message
		json      string
		fromChild bool
	}
	var cases []tc
	for _, c := range childMessages {
		cases = append(cases, tc{c.name, c.m, c.json, true})
	}
	for _, c := range parentMessages {
		cases = append(cases, tc{c.name, c.m, c.json, false})
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, body := crossTheWire(t, c.m, c.fromChild)
			if d := messageDiff(c.m, got); d != "" {
				t.Fatal(d)
			}
			if c.json != "" && string(body) != c.json {
				t.Errorf("encoded as\n%s\nwant\n%s", body, c.json)
			}
			if !utf8.Valid(body) {
				t.Errorf("the encoding is not valid UTF-8")
			}
			again, err := got.encode()
			if err != nil || !bytes.Equal(again, body) {
				t.Errorf("the decoded message encodes differently (error %v)", err)
			}
			// Each side refuses the other's messages.
			want := fmt.Sprintf("unexpected message type %q", c.m.T)
			if _, err := decode(body, !c.fromChild); err == nil || err.Error() != want {
				t.Errorf("decoded as sent the other way: error %v, want %s", err, want)
			}
		})
	}
}

func TestTextsCrossByteForByte(t *testing.T) {
	texts := []struct {
		name string
		s    string
	}{
		{"an empty text", ""},
		{"an ASCII text", "plain"},
		{"a text with escapes and non-ASCII characters", "tab\t\"quote\" \\ é \u2028 \U0001f600 \x00"},
		{"a lone high surrogate", loneSurrogate},
		{"a lone low surrogate", "\xed\xb0\x80"},
		{"a surrogate pair as WTF-8 halves", "\xed\xa0\xbd\xed\xb8\x80"},
		{"a stray byte", strayByte},
		{"a text cut inside a character", "é"[:1]},
		{"an overlong encoding", "\xc0\xaf"},
		{"a big text with stray bytes", strings.Repeat("ab"+strayByte, 100_000)},
	}
	fields := []struct {
		name      string
		fromChild bool
		make      func(s string) *message
		get       func(m *message) string
	}{
		{"a log entry", true, func(s string) *message { return &message{T: msgLog, Entry: s} }, func(m *message) string { return m.Entry }},
		{"a failure's message", true, func(s string) *message { return &message{T: msgDone, Kind: "exception", Message: s} }, func(m *message) string { return m.Message }},
		{"a misuse error", true, func(s string) *message { return &message{T: msgMisuse, Error: s} }, func(m *message) string { return m.Error }},
		{"a result's error", false, func(s string) *message { return &message{T: msgResult, ID: 1, Error: s} }, func(m *message) string { return m.Error }},
	}
	for _, f := range fields {
		for _, text := range texts {
			t.Run(text.name+" crosses as "+f.name, func(t *testing.T) {
				got, body := crossTheWire(t, f.make(text.s), f.fromChild)
				if g := f.get(got); g != text.s {
					t.Fatalf("got %+q, want %+q", g, text.s)
				}
				b64 := `{"base64":"` + base64.StdEncoding.EncodeToString([]byte(text.s)) + `"}`
				if asBase64 := bytes.Contains(body, []byte(b64)); asBase64 == utf8.ValidString(text.s) {
					t.Errorf("crossed as base64: %v, but the text is valid UTF-8: %v", asBase64, utf8.ValidString(text.s))
				}
			})
		}
	}
}

func TestEncodeRefuses(t *testing.T) {
	tests := []struct {
		name string
		m    *message
		err  string
	}{
		{"a message of no type", &message{T: "bogus"}, `process: no message type "bogus"`},
		{"a message without a type", &message{}, `process: no message type ""`},
		{"a result whose value is not lossless JSON", &message{T: msgResult, ID: 1, OK: true, Value: math.NaN()}, "NaN"},
		{"a call whose args are not lossless JSON", &message{T: msgCall, ID: 1, Args: []any{math.Inf(1)}}, "Infinity"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body, err := tt.m.encode()
			if err == nil {
				t.Fatalf("encoded as %s", body)
			}
			if !strings.Contains(err.Error(), tt.err) {
				t.Errorf("error %q, want it to contain %q", err, tt.err)
			}
		})
	}
}

func TestDecodeRefuses(t *testing.T) {
	const (
		child  = true
		parent = false
	)
	long := strings.Repeat("é", 40) // 80 bytes: quoted cut at 64
	tests := []struct {
		name      string
		fromChild bool
		body      string
		err       string
	}{
		// Direction.
		{"a child sending a result", child, `{"t":"result","id":1,"ok":true,"value":1}`, `unexpected message type "result"`},
		{"a child sending a config", child, `{"t":"config","language":"x","computeMs":1,"maxWallMs":1,"maxOutputBytes":1,"maxMemoryMB":1}`, `unexpected message type "config"`},
		{"a child sending a run", child, `{"t":"run","program":"","bindings":[]}`, `unexpected message type "run"`},
		{"a parent sending a call", parent, `{"t":"call","id":1,"ns":0,"name":"f","args":1}`, `unexpected message type "call"`},
		{"a parent sending a done message", parent, `{"t":"done"}`, `unexpected message type "done"`},
		{"a parent sending a ready message", parent, `{"t":"ready"}`, `unexpected message type "ready"`},
		{"a parent sending a log entry", parent, `{"t":"log","entry":"x"}`, `unexpected message type "log"`},
		{"a parent sending a misuse message", parent, `{"t":"misuse","error":"x"}`, `unexpected message type "misuse"`},
		{"a child sending an unknown type", child, `{"t":"hello"}`, `unexpected message type "hello"`},
		{"a child sending a type in another case", child, `{"t":"Ready"}`, `unexpected message type "Ready"`},
		{"a child sending a long type, quoted cut", child, `{"t":"` + long + `"}`, `unexpected message type "` + long[:64] + `…"`},
		{"a child sending a type with control characters", child, `{"t":"a\nb\u0000"}`, `unexpected message type "a\nb\x00"`},

		// Not a message at all.
		{"an empty body", child, ``, `not JSON: json: unexpected end of JSON input at offset 0`},
		{"invalid JSON", child, `{not json`, `not JSON: json: invalid character 'n' looking for beginning of object key string at offset 1`},
		{"two JSON values", child, `{"t":"ready"}{}`, `not JSON: json: invalid character '{' after top-level value at offset 13`},
		{"an array", child, `[1,2]`, `not a JSON object`},
		{"a string", parent, `"config"`, `not a JSON object`},
		{"null", child, `null`, `not a JSON object`},
		{"a number", child, `1`, `not a JSON object`},
		{"negative zero", child, `{"t":"done","value":-0}`, `not JSON: json: number -0 is negative zero at offset 20`},
		{"negative zero as a call id", child, `{"t":"call","id":-0.0,"ns":0,"name":"f","args":1}`, `not JSON: json: number -0.0 is negative zero at offset 17`},
		{"a duplicate key", child, `{"t":"log","entry":"a","entry":"b"}`, `not JSON: json: duplicate key "entry" at offset 23`},
		{"a duplicate type", child, `{"t":"ready","t":"ready"}`, `not JSON: json: duplicate key "t" at offset 13`},
		{"a duplicate key deep in a value", child, `{"t":"done","value":[{"a":1,"a":1}]}`, `not JSON: json: duplicate key "a" at offset 28`},
		{"a lone surrogate escape", child, `{"t":"log","entry":"\ud800"}`, `not JSON: json: lone surrogate \ud800 in string at offset 20`},
		{"invalid UTF-8 in a string", child, "{\"t\":\"log\",\"entry\":\"\xff\"}", `not JSON: json: invalid UTF-8 in string at offset 20`},
		{"an integer no float64 holds", child, `{"t":"done","value":9007199254740993}`, `not JSON: json: integer 9007199254740993 is not exactly a float64 at offset 20`},
		{"a byte order mark", child, "\xef\xbb\xbf{\"t\":\"ready\"}", `not JSON: json: byte order mark is not allowed at offset 0`},

		// The type member.
		{"an empty object", child, `{}`, `no string member "t"`},
		{"a numeric type", child, `{"t":1}`, `no string member "t"`},
		{"a null type", parent, `{"t":null}`, `no string member "t"`},
		{"a type member with another name", child, `{"type":"ready"}`, `no string member "t"`},

		// Missing members.
		{"a call without an id", child, `{"t":"call","ns":0,"name":"f","args":1}`, `call message: member "id" must be a positive integer`},
		{"a call without ns", child, `{"t":"call","id":1,"name":"f","args":1}`, `call message: member "ns" must be a namespace index`},
		{"a call without a name", child, `{"t":"call","id":1,"ns":0,"args":1}`, `call message: member "name" must be a string`},
		{"a call without args", child, `{"t":"call","id":1,"ns":0,"name":"f"}`, `call message has 4 members, want 5`},
		{"a call with another member instead of args", child, `{"t":"call","id":1,"ns":0,"name":"f","arg":1}`, `call message has no member "args"`},
		{"a log without its entry", child, `{"t":"log"}`, `log message: member "entry" must be a string`},
		{"a failure without its message", child, `{"t":"done","kind":"exception"}`, `done message: member "message" must be a string`},
		{"a misuse message without its error", child, `{"t":"misuse"}`, `misuse message: member "error" must be a string`},
		{"a config without a language", parent, `{"t":"config","computeMs":1,"maxWallMs":1,"maxOutputBytes":1,"maxMemoryMB":1}`, `config message: member "language" must be a string`},
		{"a config without maxMemoryMB", parent, `{"t":"config","language":"x","computeMs":1,"maxWallMs":1,"maxOutputBytes":1}`, `config message: member "maxMemoryMB" must be a number`},
		{"a run without a program", parent, `{"t":"run","bindings":[]}`, `run message: member "program" must be a string`},
		{"a run without bindings", parent, `{"t":"run","program":""}`, `run message: member "bindings" must be an array`},
		{"a namespace without names", parent, `{"t":"run","program":"","bindings":[{"global":"g","errorClass":"C","errorMember":"M"}]}`, `run message: member "bindings" must be an array of namespaces`},
		{"a namespace with another member instead of global", parent, `{"t":"run","program":"","bindings":[{"globl":"g","errorClass":"C","errorMember":"M","names":[]}]}`, `run message: member "bindings" must be an array of namespaces`},
		{"a result without an id", parent, `{"t":"result","ok":true,"value":1}`, `result message: member "id" must be a positive integer`},
		{"a result without ok", parent, `{"t":"result","id":1,"value":1}`, `result message: member "ok" must be a boolean`},
		{"a result without its value", parent, `{"t":"result","id":1,"ok":true}`, `result message has 3 members, want 4`},
		{"a result with an error where the value goes", parent, `{"t":"result","id":1,"ok":true,"error":"x"}`, `result message has no member "value"`},
		{"a failed result without its error", parent, `{"t":"result","id":1,"ok":false}`, `result message: member "error" must be a string`},
		{"a failed result with a value instead of its error", parent, `{"t":"result","id":1,"ok":false,"value":"x"}`, `result message: member "error" must be a string`},

		// Extra members.
		{"a ready message with an extra member", child, `{"t":"ready","x":1}`, `ready message has 2 members, want 1`},
		{"a call with an extra member", child, `{"t":"call","id":1,"ns":0,"name":"f","args":1,"x":1}`, `call message has 6 members, want 5`},
		{"a log entry with an extra member", child, `{"t":"log","entry":"x","extra":1}`, `log message has 3 members, want 2`},
		{"a done message with a value and an extra member", child, `{"t":"done","value":1,"x":1}`, `done message has 3 members, want 2`},
		{"a done message with only an extra member", child, `{"t":"done","x":1}`, `done message has 2 members, want 1`},
		{"a done message with both a failure and a value", child, `{"t":"done","kind":"exception","message":"m","value":1}`, `done message has 4 members, want 3`},
		{"a misuse message with an extra member", child, `{"t":"misuse","error":"e","x":null}`, `misuse message has 3 members, want 2`},
		{"a config with an extra member", parent, `{"t":"config","language":"x","computeMs":1,"maxWallMs":1,"maxOutputBytes":1,"maxMemoryMB":1,"x":1}`, `config message has 7 members, want 6`},
		{"a run with an extra member", parent, `{"t":"run","program":"","bindings":[],"x":1}`, `run message has 4 members, want 3`},
		{"a namespace with an extra member", parent, `{"t":"run","program":"","bindings":[{"global":"g","errorClass":"C","errorMember":"M","names":[],"x":1}]}`, `run message: member "bindings" must be an array of namespaces`},
		{"a result with both a value and an error", parent, `{"t":"result","id":1,"ok":false,"error":"x","value":1}`, `result message has 5 members, want 4`},
		{"a base64 form with an extra member", child, `{"t":"log","entry":{"base64":"/w==","x":1}}`, `log message: member "entry" must be a string`},

		// Wrong member types.
		{"a call whose id is a string", child, `{"t":"call","id":"1","ns":0,"name":"f","args":1}`, `call message: member "id" must be a positive integer`},
		{"a call whose ns is a string", child, `{"t":"call","id":1,"ns":"0","name":"f","args":1}`, `call message: member "ns" must be a namespace index`},
		{"a call whose name is a number", child, `{"t":"call","id":1,"ns":0,"name":1,"args":1}`, `call message: member "name" must be a string`},
		{"a log entry that is a number", child, `{"t":"log","entry":1}`, `log message: member "entry" must be a string`},
		{"a log entry that is null", child, `{"t":"log","entry":null}`, `log message: member "entry" must be a string`},
		{"a log entry that is an array", child, `{"t":"log","entry":["x"]}`, `log message: member "entry" must be a string`},
		{"a log entry that is an empty object", child, `{"t":"log","entry":{}}`, `log message: member "entry" must be a string`},
		{"a base64 form whose text is a number", child, `{"t":"log","entry":{"base64":1}}`, `log message: member "entry" must be a string`},
		{"a failure kind that is a number", child, `{"t":"done","kind":1,"message":"m"}`, `done message: member "kind" must be a failure kind`},
		{"a failure message that is a boolean", child, `{"t":"done","kind":"abort","message":true}`, `done message: member "message" must be a string`},
		{"a misuse error that is an object", child, `{"t":"misuse","error":{"message":"x"}}`, `misuse message: member "error" must be a string`},
		{"a config language that is null", parent, `{"t":"config","language":null,"computeMs":1,"maxWallMs":1,"maxOutputBytes":1,"maxMemoryMB":1}`, `config message: member "language" must be a string`},
		{"a config budget that is a string", parent, `{"t":"config","language":"x","computeMs":"1","maxWallMs":1,"maxOutputBytes":1,"maxMemoryMB":1}`, `config message: member "computeMs" must be a number`},
		{"a run program that is a number", parent, `{"t":"run","program":1,"bindings":[]}`, `run message: member "program" must be a string`},
		{"bindings that are an object", parent, `{"t":"run","program":"","bindings":{}}`, `run message: member "bindings" must be an array`},
		{"bindings holding a number", parent, `{"t":"run","program":"","bindings":[1]}`, `run message: member "bindings" must be an array of namespaces`},
		{"a namespace whose global is a number", parent, `{"t":"run","program":"","bindings":[{"global":1,"errorClass":"C","errorMember":"M","names":[]}]}`, `run message: member "bindings" must be an array of namespaces`},
		{"a namespace whose names are a string", parent, `{"t":"run","program":"","bindings":[{"global":"g","errorClass":"C","errorMember":"M","names":"a"}]}`, `run message: member "bindings" must be an array of namespaces`},
		{"a namespace with a name that is a number", parent, `{"t":"run","program":"","bindings":[{"global":"g","errorClass":"C","errorMember":"M","names":["a",1]}]}`, `run message: member "bindings" must be an array of namespaces`},
		{"a result whose ok is a string", parent, `{"t":"result","id":1,"ok":"true","value":1}`, `result message: member "ok" must be a boolean`},
		{"a result whose error is a number", parent, `{"t":"result","id":1,"ok":false,"error":1}`, `result message: member "error" must be a string`},

		// Ids and namespace indexes.
		{"a call id with a fraction", child, `{"t":"call","id":1.5,"ns":0,"name":"f","args":1}`, `call message: member "id" must be a positive integer`},
		{"a call id of zero", child, `{"t":"call","id":0,"ns":0,"name":"f","args":1}`, `call message: member "id" must be a positive integer`},
		{"a negative call id", child, `{"t":"call","id":-1,"ns":0,"name":"f","args":1}`, `call message: member "id" must be a positive integer`},
		{"a call id of 2^53", child, `{"t":"call","id":9007199254740992,"ns":0,"name":"f","args":1}`, `call message: member "id" must be a positive integer`},
		{"a huge call id", child, `{"t":"call","id":1e300,"ns":0,"name":"f","args":1}`, `call message: member "id" must be a positive integer`},
		{"a result id of zero", parent, `{"t":"result","id":0,"ok":true,"value":1}`, `result message: member "id" must be a positive integer`},
		{"a result id of 2^53", parent, `{"t":"result","id":9007199254740992,"ok":true,"value":1}`, `result message: member "id" must be a positive integer`},
		{"a result id with a fraction", parent, `{"t":"result","id":2.5,"ok":true,"value":1}`, `result message: member "id" must be a positive integer`},
		{"a negative namespace index", child, `{"t":"call","id":1,"ns":-1,"name":"f","args":1}`, `call message: member "ns" must be a namespace index`},
		{"a namespace index with a fraction", child, `{"t":"call","id":1,"ns":0.5,"name":"f","args":1}`, `call message: member "ns" must be a namespace index`},
		{"a namespace index past int32", child, `{"t":"call","id":1,"ns":2147483648,"name":"f","args":1}`, `call message: member "ns" must be a namespace index`},
		{"a namespace index of 2^53", child, `{"t":"call","id":1,"ns":9007199254740992,"name":"f","args":1}`, `call message: member "ns" must be a namespace index`},
		{"a huge namespace index", child, `{"t":"call","id":1,"ns":1e300,"name":"f","args":1}`, `call message: member "ns" must be a namespace index`},

		// Failure kinds.
		{"an unknown failure kind", child, `{"t":"done","kind":"nope","message":"x"}`, `done message: member "kind" must be a failure kind`},
		{"an empty failure kind", child, `{"t":"done","kind":"","message":"x"}`, `done message: member "kind" must be a failure kind`},
		{"a failure kind in another case", child, `{"t":"done","kind":"Timeout","message":"x"}`, `done message: member "kind" must be a failure kind`},

		// The base64 form.
		{"base64 for a valid UTF-8 text", child, `{"t":"log","entry":{"base64":"YQ=="}}`, `log message: member "entry" must be a string`},
		{"base64 for an empty text", child, `{"t":"log","entry":{"base64":""}}`, `log message: member "entry" must be a string`},
		{"base64 for valid UTF-8 as a failure's message", child, `{"t":"done","kind":"exception","message":{"base64":"w6k="}}`, `done message: member "message" must be a string`},
		{"base64 for valid UTF-8 as a result's error", parent, `{"t":"result","id":1,"ok":false,"error":{"base64":"b2s="}}`, `result message: member "error" must be a string`},
		{"base64 with characters outside its alphabet", child, `{"t":"log","entry":{"base64":"!!!!"}}`, `log message: member "entry" must be a string`},
		{"base64 without its padding", child, `{"t":"misuse","error":{"base64":"/w"}}`, `misuse message: member "error" must be a string`},
		{"URL-safe base64", child, `{"t":"log","entry":{"base64":"_w=="}}`, `log message: member "entry" must be a string`},
		{"base64 with a line break", child, `{"t":"log","entry":{"base64":"/w==\n"}}`, `log message: member "entry" must be a string`},
		{"base64 with a line break inside", child, `{"t":"log","entry":{"base64":"7a\r\nCA"}}`, `log message: member "entry" must be a string`},
		{"base64 whose padding bits are not zero", child, `{"t":"log","entry":{"base64":"/x=="}}`, `log message: member "entry" must be a string`},
		{"base64 under another key", child, `{"t":"log","entry":{"Base64":"/w=="}}`, `log message: member "entry" must be a string`},
	}
	for _, tt := range tests {
		t.Run("decode refuses "+tt.name, func(t *testing.T) {
			m, err := decode([]byte(tt.body), tt.fromChild)
			if err == nil {
				t.Fatalf("decoded as %+v", m)
			}
			if err.Error() != tt.err {
				t.Errorf("error\n%s\nwant\n%s", err, tt.err)
			}
		})
	}
}

func TestDecodeErrorsAreBounded(t *testing.T) {
	key := strings.Repeat("k", 1<<20)
	tests := []struct {
		name string
		body string
	}{
		{"a long duplicate key", `{"t":"log","` + key + `":1,"` + key + `":2}`},
		{"a long type", `{"t":"` + key + `"}`},
		{"a long number", `{"t":"done","value":1` + strings.Repeat("0", 1<<20) + `}`},
		{"a long invalid literal", `{"t":"done","value":tru` + key + `}`},
	}
	for _, tt := range tests {
		t.Run("the error for "+tt.name+" is short", func(t *testing.T) {
			_, err := decode([]byte(tt.body), true)
			if err == nil {
				t.Fatal("decoded")
			}
			if len(err.Error()) > 200 || !utf8.ValidString(err.Error()) {
				t.Errorf("error of %d bytes: %.300q", len(err.Error()), err)
			}
		})
	}
}

// frame returns the frame of body, its header saying n bytes.
func frame(n uint32, body string) []byte {
	b := binary.BigEndian.AppendUint32(nil, n)
	return append(b, body...)
}

// headerOnly is a reader that gives a frame's header and fails the test if
// it is read again.
type headerOnly struct {
	t      *testing.T
	header []byte
	reads  int
}

func (r *headerOnly) Read(p []byte) (int, error) {
	r.reads++
	if r.reads > 1 {
		r.t.Error("read past the header")
		return 0, errors.New("read past the header")
	}
	return copy(p, r.header), nil
}

func TestReadFrameRefusesAFrameOverItsLimit(t *testing.T) {
	tests := []struct {
		name  string
		n     uint32
		limit int64
		err   string
	}{
		{"one byte over", 1001, 1000, "frame too large: 1001 bytes, the limit is 1000"},
		{"the largest frame", math.MaxUint32, 1 << 20, "frame too large: 4294967295 bytes, the limit is 1048576"},
		{"any frame but an empty one under a zero limit", 1, 0, "frame too large: 1 bytes, the limit is 0"},
	}
	for _, tt := range tests {
		t.Run("a frame "+tt.name+" is refused without reading its body", func(t *testing.T) {
			r := &headerOnly{t: t, header: frame(tt.n, "")}
			body, err := readFrame(bufio.NewReader(r), tt.limit)
			if err == nil {
				t.Fatalf("read %d bytes", len(body))
			}
			if !errors.Is(err, ErrFrameTooLarge) || err.Error() != tt.err {
				t.Errorf("error %q, want %q wrapping ErrFrameTooLarge", err, tt.err)
			}
		})
	}
}

func TestReadFrame(t *testing.T) {
	broken := errors.New("broken pipe")
	tests := []struct {
		name   string
		input  io.Reader
		limit  int64
		bodies []string // the frames read before err
		err    error
	}{
		{"a clean end is io.EOF", strings.NewReader(""), 10, nil, io.EOF},
		{"an empty body is a frame", bytes.NewReader(frame(0, "")), 0, []string{""}, io.EOF},
		{"a frame at its limit is read", bytes.NewReader(frame(5, "hello")), 5, []string{"hello"}, io.EOF},
		{"frames in a row are read one by one", bytes.NewReader(slices.Concat(frame(1, "a"), frame(0, ""), frame(3, "bcd"))), 3, []string{"a", "", "bcd"}, io.EOF},
		{"a frame cut in its header is io.ErrUnexpectedEOF", bytes.NewReader(frame(5, "")[:2]), 10, nil, io.ErrUnexpectedEOF},
		{"a frame cut in its body is io.ErrUnexpectedEOF", bytes.NewReader(frame(5, "hel")), 10, nil, io.ErrUnexpectedEOF},
		{"a frame with no body is io.ErrUnexpectedEOF", bytes.NewReader(frame(5, "")), 10, nil, io.ErrUnexpectedEOF},
		{"a cut frame after a whole one is io.ErrUnexpectedEOF", bytes.NewReader(slices.Concat(frame(1, "a"), frame(2, "b"))), 10, []string{"a"}, io.ErrUnexpectedEOF},
		{"a reader's error in a body is returned", io.MultiReader(bytes.NewReader(frame(5, "he")), iotest.ErrReader(broken)), 10, nil, broken},
		{"a reader's error in a header is returned", io.MultiReader(bytes.NewReader(frame(5, "")[:3]), iotest.ErrReader(broken)), 10, nil, broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rd := bufio.NewReader(tt.input)
			for i, want := range tt.bodies {
				body, err := readFrame(rd, tt.limit)
				if err != nil {
					t.Fatalf("frame %d: %v", i, err)
				}
				if body == nil || string(body) != want {
					t.Fatalf("frame %d is %q, want %q", i, body, want)
				}
			}
			body, err := readFrame(rd, tt.limit)
			if err != tt.err {
				t.Errorf("error %v (body %q), want %v", err, body, tt.err)
			}
			if body != nil {
				t.Errorf("a body %q with the error", body)
			}
		})
	}
}

func TestWriteFrame(t *testing.T) {
	broken := errors.New("broken pipe")
	tests := []struct {
		name string
		body string
		w    io.Writer // nil: a buffer
		want []byte
		err  error
	}{
		{"an empty body is a header of zero", "", nil, []byte{0, 0, 0, 0}, nil},
		{"a body follows its big-endian length", "abc", nil, []byte{0, 0, 0, 3, 'a', 'b', 'c'}, nil},
		{"a body of 256 bytes has its length in two bytes", strings.Repeat("x", 256), nil, append([]byte{0, 0, 1, 0}, strings.Repeat("x", 256)...), nil},
		{"a writer's error is returned", "abc", failingWriter{broken}, nil, broken},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var buf bytes.Buffer
			var w io.Writer = &buf
			if tt.w != nil {
				w = tt.w
			}
			err := writeFrame(w, []byte(tt.body))
			if err != tt.err {
				t.Fatalf("error %v, want %v", err, tt.err)
			}
			if tt.err == nil && !bytes.Equal(buf.Bytes(), tt.want) {
				t.Errorf("wrote %q, want %q", buf.Bytes(), tt.want)
			}
		})
	}
}

type failingWriter struct{ err error }

func (w failingWriter) Write([]byte) (int, error) { return 0, w.err }

// fuzzSeeds are message bodies to start fuzzing from: every message of the
// round-trip tests that is small, and some refused ones.
func fuzzSeeds() [][]byte {
	var seeds [][]byte
	for _, c := range childMessages {
		if c.json != "" {
			seeds = append(seeds, []byte(c.json))
		}
	}
	for _, c := range parentMessages {
		if c.json != "" {
			seeds = append(seeds, []byte(c.json))
		}
	}
	for _, s := range []string{
		`{"t":"call","id":1,"ns":0,"name":"f","args":{"a":[{"b":null}],"c":-1e-300}}`,
		`{"t":"done","value":{"x":[1,2,{"y":"\u00e9\ud83d\ude00"}]}}`,
		`{"t":"log","entry":{"base64":"/w=="}}`,
		`{"t":"log","entry":{"base64":"YQ=="}}`,
		`{"t":"done","value":-0}`,
		`{"t":"log","entry":"a","entry":"b"}`,
		` { "t" : "ready" } `,
		`[]`,
	} {
		seeds = append(seeds, []byte(s))
	}
	return seeds
}

func FuzzDecode(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(s)
	}
	childTypes := map[string]bool{msgReady: true, msgCall: true, msgLog: true, msgDone: true, msgMisuse: true}
	f.Fuzz(func(t *testing.T, data []byte) {
		decoded := 0
		for _, fromChild := range []bool{true, false} {
			m, err := decode(data, fromChild)
			if err != nil {
				if !utf8.ValidString(err.Error()) {
					t.Errorf("the error is not valid UTF-8: %q", err)
				}
				continue
			}
			decoded++
			if childTypes[m.T] != fromChild {
				t.Fatalf("decoded a %q message as sent by the child: %v", m.T, fromChild)
			}
			body, err := m.encode()
			if err != nil {
				t.Fatalf("a decoded message does not encode: %v", err)
			}
			again, err := decode(body, fromChild)
			if err != nil {
				t.Fatalf("its encoding %q does not decode: %v", body, err)
			}
			if d := messageDiff(m, again); d != "" {
				t.Fatalf("decoded again as another message: %s", d)
			}
			body2, err := again.encode()
			if err != nil || !bytes.Equal(body, body2) {
				t.Fatalf("encodes as %q, then as %q (error %v)", body, body2, err)
			}
		}
		if decoded > 1 {
			t.Fatal("decoded as sent by either side")
		}
	})
}

func FuzzReadFrame(f *testing.F) {
	for _, s := range fuzzSeeds() {
		f.Add(frame(uint32(len(s)), string(s)), uint16(len(s)))
	}
	f.Add(slices.Concat(frame(0, ""), frame(3, "abc"), frame(2, "d")), uint16(3))
	f.Add(frame(math.MaxUint32, "x"), uint16(100))
	f.Add([]byte{0, 0}, uint16(10))
	f.Add([]byte{}, uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, limit16 uint16) {
		limit := int64(limit16)
		rd := bufio.NewReader(bytes.NewReader(data))
		rest := data
		for {
			// What readFrame must do with rest, the input not read yet.
			var want []byte
			var wantErr error
			switch {
			case len(rest) == 0:
				wantErr = io.EOF
			case len(rest) < frameHeader:
				wantErr = io.ErrUnexpectedEOF
			default:
				n := int64(binary.BigEndian.Uint32(rest))
				switch {
				case n > limit:
					wantErr = ErrFrameTooLarge
				case int64(len(rest)-frameHeader) < n:
					wantErr = io.ErrUnexpectedEOF
				default:
					want = rest[frameHeader : frameHeader+n]
				}
			}

			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			body, err := readFrame(rd, limit)
			runtime.ReadMemStats(&after)
			// A frame's body and little else (the slack is for whatever
			// else runs): a header may not make it allocate past the limit.
			if alloc := after.TotalAlloc - before.TotalAlloc; alloc > uint64(limit)+1<<20 {
				t.Fatalf("allocated %d bytes under a limit of %d", alloc, limit)
			}

			if wantErr != nil {
				if !errors.Is(err, wantErr) || body != nil {
					t.Fatalf("got %q and error %v, want error %v", body, err, wantErr)
				}
				return
			}
			if err != nil || !bytes.Equal(body, want) {
				t.Fatalf("got %q and error %v, want %q", body, err, want)
			}
			if int64(cap(body)) > limit {
				t.Fatalf("a body with room for %d bytes under a limit of %d", cap(body), limit)
			}
			rest = rest[frameHeader+len(want):]
		}
	})
}
