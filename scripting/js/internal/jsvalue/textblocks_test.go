package jsvalue

import (
	"testing"

	"github.com/dop251/goja"
	"github.com/dsh-go/dsh/dsl"
)

// agreeTextBlocks checks TextBlocks against ToGo on v: when TextBlocks
// answers, ToGo reads v as the same texts, as text blocks with nothing else.
func agreeTextBlocks(t *testing.T, r *Realm, v goja.Value, lim Limits) (answered bool) {
	t.Helper()
	texts, ok := TextBlocks(r, v, lim, func(s string) string { return s })
	if !ok {
		return false
	}
	g, err := r.ToGo(v, "content", lim)
	if err != nil {
		t.Fatalf("TextBlocks read %q where ToGo refused the value: %v", texts, err)
	}
	list, isList := g.([]any)
	if !isList || len(list) != len(texts) {
		t.Fatalf("TextBlocks read %q where ToGo read %v", texts, g)
	}
	for i, e := range list {
		o, isObj := e.(*dsl.Object)
		kind, _ := o.Get("type")
		text, _ := o.Get("text")
		if !isObj || o.Len() != 2 || kind != "text" || text != texts[i] {
			t.Fatalf("TextBlocks read %q where ToGo read %v", texts, g)
		}
	}
	return true
}

func TestTextBlocksAgreesWithToGo(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		fast      bool // TextBlocks answers
	}{
		{"one text block", `[{type: "text", text: "Hello, Ada!"}]`, true},
		{"several, keys in either order", `[{type: "text", text: "a"}, {text: "b", type: "text"}]`, true},
		{"no block at all", `[]`, true},
		{"an empty text", `[{type: "text", text: ""}]`, true},
		{"a text outside ASCII", `[{type: "text", text: "\u00e9t\u00e9 \ud83d\ude00"}]`, true},
		{"frozen blocks", `Object.freeze([Object.freeze({type: "text", text: "x"})])`, true},
		{"a lone surrogate is left to ToGo", `[{type: "text", text: "a\ud800"}]`, false},
		{"an image block", `[{type: "image", data: "AAAA", mimeType: "image/png"}]`, false},
		{"a third member", `[{type: "text", text: "x", annotations: {}}]`, false},
		{"a missing text", `[{type: "text"}]`, false},
		{"a text that is not a string", `[{type: "text", text: 1}]`, false},
		{"a type written otherwise", `[{type: "Text", text: "x"}]`, false},
		{"a getter", `[{type: "text", get text() { flag++; return "x" }}]`, false},
		{"a proxy", `[new Proxy({type: "text", text: "x"}, {})]`, false},
		{"another prototype", `[Object.assign(Object.create({}), {type: "text", text: "x"})]`, false},
		{"a sparse array", `(() => { const a = [{type: "text", text: "x"}]; a.length = 3; return a })()`, false},
		{"an array with a member of its own", `Object.assign([{type: "text", text: "x"}], {extra: 1})`, false},
		{"not an array", `({type: "text", text: "x"})`, false},
		{"a string", `"text"`, false},
		{"nested content", `[[{type: "text", text: "x"}]]`, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			e.run("var flag = 0")
			v := e.run(tc.src)
			if got := agreeTextBlocks(t, e.r, v, Limits{}); got != tc.fast {
				t.Fatalf("TextBlocks answered %v, want %v", got, tc.fast)
			}
			if n := e.flag(); n != 0 {
				t.Fatalf("TextBlocks ran a getter %d times", n)
			}
		})
	}
	t.Run("content over the limits is left to ToGo", func(t *testing.T) {
		e := newEnv(t)
		v := e.run(`[{type: "text", text: "abcdefgh"}, {type: "text", text: "ijklmnop"}]`)
		// 7 values of 16 bytes; per block its keys (8 bytes), "text" (4) and its text (8).
		for _, lim := range []Limits{{MaxNodes: 6}, {MaxBytes: 16*7 + 2*(8+4+8) - 1}, {MaxDepth: 1}} {
			if agreeTextBlocks(t, e.r, v, lim) {
				t.Errorf("TextBlocks answered under %+v", lim)
			}
		}
		if !agreeTextBlocks(t, e.r, v, Limits{MaxNodes: 7, MaxBytes: 16*7 + 2*(8+4+8)}) {
			t.Error("TextBlocks did not answer at the limits")
		}
	})
}

// FuzzTextBlocks checks TextBlocks against ToGo on JSON documents parsed by
// the runtime, under random limits.
func FuzzTextBlocks(f *testing.F) {
	for _, seed := range []string{
		`[]`, `[{"type":"text","text":"x"}]`, `[{"text":"\ud83d\ude00","type":"text"}]`,
		`[{"type":"text","text":"a"},{"type":"image","data":""}]`, `[{"type":"text","text":"\ud800"}]`,
		`[{"type":"text","text":"x","x":1}]`, `{"type":"text","text":"x"}`,
	} {
		f.Add([]byte(seed), uint16(0), uint16(0))
	}
	f.Fuzz(func(t *testing.T, data []byte, nodes, size uint16) {
		r := fuzzRealms.Get().(*Realm)
		defer fuzzRealms.Put(r)
		parse, _ := goja.AssertFunction(r.vm.Get("JSON").ToObject(r.vm).Get("parse"))
		v, err := parse(goja.Undefined(), r.vm.ToValue(string(data)))
		if err != nil {
			return
		}
		agreeTextBlocks(t, r, v, Limits{MaxNodes: int(nodes), MaxBytes: int(size)})
	})
}
