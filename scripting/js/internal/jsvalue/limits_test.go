package jsvalue

import (
	"errors"
	"math"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// The messages below are word for word those of luavalue's limits_test.go:
// both languages refuse a value at the same size, in the same words.

// deepPathJS is the path of the innermost of 100,001 nested arrays, as every
// converter renders it: the middle levels counted, not written.
var deepPathJS = "value" + strings.Repeat("[0]", 20) + "…(99,958 more)…" + strings.Repeat("[0]", 22)

func TestToGoDefaultDepthLimit(t *testing.T) {
	const build = `(() => { let a = []; for (let i = 1; i < %d; i++) a = [a]; return a })()`
	t.Run("100,001 levels are refused in a short message naming the limit", func(t *testing.T) {
		e := newEnv(t)
		_, err := e.toGo(strings.Replace(build, "%d", "100001", 1))
		wantSnapshotError(t, err, deepPathJS, "nesting deeper than 100000 levels")
		if !errors.Is(err, dsl.ErrLimit) {
			t.Fatal("the error does not wrap dsl.ErrLimit")
		}
		if n := len(err.Error()); n > 300 {
			t.Fatalf("a message of %d bytes", n)
		}
	})
	t.Run("the built-in path words it the same", func(t *testing.T) {
		e := newEnv(t).builtinOnly()
		_, err := e.r.ToGo(e.run(strings.Replace(build, "%d", "1001", 1)), "value", Limits{MaxDepth: 1000})
		wantSnapshotError(t, err, "value"+strings.Repeat("[0]", 20)+"…(958 more)…"+strings.Repeat("[0]", 22),
			"nesting deeper than 1000 levels")
	})
}

func TestToJSDefaultDepthLimit(t *testing.T) {
	e := newEnv(t)
	_, err := e.r.ToJS(nestedGo(100_001))
	wantSnapshotError(t, err, deepPathJS, "nesting deeper than 100000 levels")
}

// nestedGo is n nested arrays, the innermost empty.
func nestedGo(n int) any {
	var v any = []any{}
	for i := 1; i < n; i++ {
		v = []any{v}
	}
	return v
}

func TestToGoCountsBytes(t *testing.T) {
	// {s: <100 bytes>}: the object and its member count 2×16 bytes, the key
	// 1 and the string 100: 133 bytes.
	tests := []struct {
		name, src string
		max       int
		path      string // "" when accepted
	}{
		{"an ASCII string exactly at the limit is accepted", `({s: "x".repeat(100)})`, 133, ""},
		{"an ASCII string one byte over is refused", `({s: "x".repeat(100)})`, 132, "value.s"},
		{"a UTF-16 string is measured in UTF-8", `({s: "\u00e9".repeat(50)})`, 133, ""},
		{"a UTF-16 string one byte over is refused", `({s: "\u00e9".repeat(50)})`, 132, "value.s"},
		{"keys count, where their object opens", `({["k".repeat(100)]: 1})`, 131, "value"},
		{"elements count 16 bytes each", `[1, 2, 3]`, 63, "value"},
		{"a string at the root", `"x".repeat(100)`, 115, "value"},
	}
	for _, tt := range tests {
		for _, fast := range []bool{true, false} {
			name := tt.name
			if !fast {
				name += " (built-in path)"
			}
			t.Run(name, func(t *testing.T) {
				e := newEnv(t)
				e.r.SetFastPath(fast)
				_, err := e.r.ToGo(e.run(tt.src), "value", Limits{MaxBytes: tt.max})
				if tt.path == "" {
					if err != nil {
						t.Fatal(err)
					}
					return
				}
				wantSnapshotError(t, err, tt.path, "more than "+strconv.Itoa(tt.max)+" bytes")
			})
		}
	}
	t.Run("a string imported from Go", func(t *testing.T) {
		e := newEnv(t)
		e.vm.Set("s", strings.Repeat("é", 50))
		_, err := e.r.ToGo(e.run(`({s})`), "value", Limits{MaxBytes: 132})
		wantSnapshotError(t, err, "value.s", "more than 132 bytes")
	})
}

// allocated runs f and returns how many bytes the process allocated meanwhile.
func allocated(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

func TestTooLargeStringsAreRefusedWithoutACopy(t *testing.T) {
	const size = 4 << 20 // in UTF-16 units; a copy would take at least twice as many bytes
	const limit = 256 << 10
	tests := []struct{ name, src, path string }{
		{"a UTF-16 string", `({s: "\u00e9".repeat(4 * 1024 * 1024)})`, "value.s"},
		{"a UTF-16 key", `({["\u00e9".repeat(4 * 1024 * 1024)]: 1})`, "value"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			v := e.run(tt.src)
			var err error
			n := allocated(func() { _, err = e.r.ToGo(v, "value", Limits{MaxBytes: limit}) })
			wantSnapshotError(t, err, tt.path, "more than 262144 bytes")
			if n > size/4 {
				t.Fatalf("ToGo allocated %d bytes refusing it", n)
			}
		})
	}
	t.Run("a Go string on its way to JavaScript", func(t *testing.T) {
		e := newEnv(t)
		e.r.SetLimits(Limits{MaxBytes: limit})
		s := strings.Repeat("é", size/2)
		var err error
		n := allocated(func() { _, err = e.r.ToJS(dsl.NewObject(dsl.Member{Key: "s", Value: s})) })
		wantSnapshotError(t, err, "value.s", "more than 262144 bytes")
		if n > size/4 {
			t.Fatalf("ToJS allocated %d bytes refusing it", n)
		}
	})
}

func TestToJSLimits(t *testing.T) {
	tests := []struct {
		name string
		v    any
		lim  Limits
		path string
		msg  string
	}{
		{"too many values", []any{1.0, []any{2.0, 3.0}}, Limits{MaxNodes: 4}, "value[1]", "more than 4 values"},
		{"too deep", []any{[]any{[]any{}}}, Limits{MaxDepth: 2}, "value[0][0]", "nesting deeper than 2 levels"},
		{"a key too long", dsl.NewObject(dsl.Member{Key: strings.Repeat("k", 100), Value: 1.0}), Limits{MaxBytes: 100},
			"value.kkkkkkkkkkkkkkkkkkkkkkkkkkkkkkkk…", "more than 100 bytes"},
		{"a map normalised by dsl is limited too", map[string]any{"a": strings.Repeat("x", 200)}, Limits{MaxBytes: 100},
			"value.a", "more than 100 bytes"},
		{"the Go values ToValue would take whole are limited before", make([]int, 10), Limits{MaxNodes: 5},
			"value", "more than 5 values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t)
			e.r.SetLimits(tt.lim)
			_, err := e.r.ToJS(tt.v)
			wantSnapshotError(t, err, tt.path, tt.msg)
		})
	}
}

func TestRealmLimitsAreToGoDefaults(t *testing.T) {
	e := newEnv(t)
	e.r.SetLimits(Limits{MaxNodes: 2})
	_, err := e.r.ToGo(e.run(`[1, 2]`), "value", Limits{})
	wantSnapshotError(t, err, "value", "more than 2 values")
	if _, err := e.r.ToGo(e.run(`[1, 2]`), "value", Limits{MaxNodes: 3}); err != nil {
		t.Fatalf("the limit given to ToGo did not win: %v", err)
	}
}

func TestFastPathOffSwitch(t *testing.T) {
	e := newEnv(t)
	if !e.r.FastPath() {
		t.Fatal("the fast path is off by default")
	}
	e.r.SetFastPath(false)
	if e.r.FastPath() {
		t.Fatal("SetFastPath(false) left it on")
	}
	got, err := e.toGo(`({a: [1, "x", {b: null}]})`)
	if err != nil || mustJSON(t, got) != `{"a":[1,"x",{"b":null}]}` {
		t.Fatalf("ToGo = %v, %v", got, err)
	}
	e.r.SetFastPath(true)
	if !e.r.FastPath() {
		t.Fatal("SetFastPath(true) left it off")
	}
}

func TestFastPathReadsOnlyAllowListedValues(t *testing.T) {
	e := newEnv(t)
	l := e.r.fast
	if l == nil {
		t.Fatal("no fast path")
	}
	tests := []struct {
		name, src string
		want      fastResult
	}{
		{"every JSON value", `({i: 1, f: 0.5, b: false, n: null, s: "a", u: "\u00e9", o: {}, a: []})`, fastOK},
		{"JSON values in a frozen object", `Object.freeze({i: 1, u: "\u00e9"})`, fastOK},
		{"undefined is left to the built-in path", `({a: undefined})`, fastNo},
		{"a symbol is left to the built-in path", `({a: Symbol()})`, fastNo},
		{"a BigInt is left to the built-in path", `({a: 1n})`, fastNo},
		{"a BigInt in a frozen object too", `Object.freeze({a: 1n})`, fastNo},
		{"an accessor", `({get a() { return 1 }})`, fastNo},
		{"a non-enumerable property", `Object.defineProperty({}, "a", {value: 1})`, fastNo},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, res := l.object(e.run(tt.src).ToObject(e.vm), e.r.objectProto, nil, nil, math.MaxInt, math.MaxInt)
			if res != tt.want {
				t.Fatalf("object() = %d, want %d", res, tt.want)
			}
		})
	}
	for _, src := range []string{`[undefined]`, `[Symbol()]`, `[1n]`, `Object.freeze([1, undefined])`} {
		t.Run("the array "+src+" is left to the built-in path", func(t *testing.T) {
			if _, ok := l.array(e.run(src).ToObject(e.vm), e.r.arrayProto, nil); ok {
				t.Fatal("the fast path read it")
			}
		})
	}
}

// TestUTF16StringsConvertInOneCopy fails when goja's UTF-16 representation is
// no longer the one utf16Units reads: ToGo then still works, measuring such
// strings by a lower bound and converting them through goja's String, which
// takes several times their size.
func TestUTF16StringsConvertInOneCopy(t *testing.T) {
	e := newEnv(t)
	if e.r.utf16Type == nil {
		t.Fatal("goja's UTF-16 strings are not the slice of code units this package reads")
	}
	v := e.run(`"\u00e9\ud83d\ude00".repeat(1024 * 1024)`) // 3 Mi units, 6 MiB in UTF-8
	var got any
	var err error
	n := allocated(func() { got, err = e.r.ToGo(v, "value", Limits{}) })
	if err != nil {
		t.Fatal(err)
	}
	if s := got.(string); s != strings.Repeat("é😀", 1024*1024) {
		t.Fatal("the string changed on its way")
	}
	if n > 8<<20 {
		t.Fatalf("converting a 6 MiB string allocated %d bytes", n)
	}
}
