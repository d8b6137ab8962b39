package jsregexp_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/dsh-go/dsh/scripting/js/internal/jsregexp"
)

func TestBacktrackingFollowsGojasChoiceOfEngine(t *testing.T) {
	tests := []struct {
		name, pattern, flags string
		want                 bool
	}{
		{"a lookahead needs backtracking", `a(?=b)`, "", true},
		{"a negative lookahead needs backtracking", `a(?!b)`, "", true},
		{"a lookbehind needs backtracking", `(?<=a)b`, "", true},
		{"a backreference needs backtracking", `(a)\1`, "", true},
		{"\\S in a class needs backtracking", `[\S]`, "", true},
		{"a repeat count past 1000 needs backtracking", `a{1001}`, "", true},
		{"a repeat count past 1000 with i needs backtracking", `a{2,1500}`, "i", true},
		{"nested quantifiers do not", `^(a+)+$`, "", false},
		{"classes and alternation do not", `\b(?:rm|mv)\s+-rf\b`, "gi", false},
		{"a repeat count of 1000 does not", `a{1000}`, "", false},
		{"dotAll does not", `a.b`, "s", false},
		{"an astral character with u does not", `😀+`, "u", false},
		{"an astral character without u does not", `😀+`, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsregexp.Backtracking(tt.pattern, tt.flags); got != tt.want {
				t.Errorf("Backtracking(%q, %q) = %v, want %v", tt.pattern, tt.flags, got, tt.want)
			}
		})
	}
}

func TestPatternFromUTF16EscapesLoneSurrogatesAsGojaDoes(t *testing.T) {
	tests := []struct {
		name  string
		units []uint16
		want  string
	}{
		{"ASCII stays", []uint16{'a', '+'}, "a+"},
		{"a surrogate pair becomes its character", []uint16{0xD83D, 0xDE00}, "😀"},
		{"a lone high surrogate becomes an escape", []uint16{'a', 0xD800, 'b'}, `a\ud800b`},
		{"a lone low surrogate becomes an escape", []uint16{0xDC00}, `\udc00`},
		{"a backslash before the first lone surrogate is doubled", []uint16{'\\', 0xD800, 'x', 0xDC01}, `\\\ud800x\udc01`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := jsregexp.PatternFromUTF16(tt.units); got != tt.want {
				t.Errorf("PatternFromUTF16 = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestMatcherAgreesWithGojasBacktrackingEngine runs each pattern on goja
// from a lastIndex past 0 (so goja runs it on regexp2, as it does every
// match jsguard reruns) and on a Matcher, from every start, and compares
// whether each finds a match.
func TestMatcherAgreesWithGojasBacktrackingEngine(t *testing.T) {
	patterns := []struct{ pattern, flags string }{
		{`a(?=b)`, "g"}, {`(a)\1`, "gi"}, {`\w+`, "g"}, {`^b`, "gm"}, {`b$`, "gm"}, {`.`, "gs"},
		{`\bfox\b`, "g"}, {`[^a]`, "gy"}, {`(?<=é)x`, "g"}, {`😀`, "gu"}, {`.`, "gu"}, {`\ud83d`, "g"},
		{`[😀-😂]`, "gu"}, {`\u{1F600}`, "gu"}, {`É`, "gi"}, {`(?<!a)b`, "gy"}, {`\s+`, "g"}, {`\/x`, "g"},
		{`a{2}`, "gy"}, {`\S`, "gu"}, {`[\udc00-\udfff]`, "gyu"}, {`[\udc00-\udfff]`, "gu"},
	}
	inputs := []string{"", "ab", "aab", "b\nab", "the fox", "éx", "😀😁😂", "x😀", "AaBb", "a\u2028b", " \t\u00a0x", "a/x"}
	vm := goja.New()
	// A string with a lone surrogate, which no Go string can hold.
	if err := vm.Set("lone", goja.StringFromUTF16([]uint16{'a', 0xD83D, 'b', 0xDE00})); err != nil {
		t.Fatal(err)
	}
	check, err := vm.RunString(`(function (p, f, s, i) { var re = new RegExp(p, f); re.lastIndex = i; return re.exec(s) !== null })`)
	if err != nil {
		t.Fatal(err)
	}
	gojaFinds, _ := goja.AssertFunction(check)
	for _, p := range patterns {
		m, err := jsregexp.Compile(p.pattern, p.flags, time.Minute)
		if err != nil {
			t.Fatalf("Compile(%q, %q): %v", p.pattern, p.flags, err)
		}
		values := make([]goja.Value, 0, len(inputs)+1)
		for _, in := range inputs {
			values = append(values, vm.ToValue(in))
		}
		values = append(values, vm.Get("lone"))
		for _, v := range values {
			s := v.(goja.String)
			for start := 1; start <= s.Length(); start++ {
				want, err := gojaFinds(goja.Undefined(), vm.ToValue(p.pattern), vm.ToValue(p.flags), v, vm.ToValue(start))
				if err != nil {
					t.Fatal(err)
				}
				got, err := m.MatchAt(s, start)
				if err != nil || got != want.ToBoolean() {
					t.Errorf("/%s/%s on %q from %d: Matcher says %v (%v), goja %v", p.pattern, p.flags, s.String(), start, got, err, want)
				}
				// SearchFrom is the search without the y flag.
				unanchored := strings.ReplaceAll(p.flags, "y", "")
				want, err = gojaFinds(goja.Undefined(), vm.ToValue(p.pattern), vm.ToValue(unanchored), v, vm.ToValue(start))
				if err != nil {
					t.Fatal(err)
				}
				if got, err := m.SearchFrom(s, start); err != nil || got != want.ToBoolean() {
					t.Errorf("/%s/%s on %q from %d: SearchFrom says %v (%v), goja without y %v", p.pattern, p.flags, s.String(), start, got, err, want)
				}
			}
		}
	}
}

// TestMatchAtReportsAMatchThatRunsOutOfTime is about the Matcher's own
// timeout: a catastrophic match ends with ErrTimeout, no sooner than
// regexp2 allows (half the timeout: earlier ones are retried as spurious).
func TestMatchAtReportsAMatchThatRunsOutOfTime(t *testing.T) {
	const timeout = 200 * time.Millisecond
	m, err := jsregexp.Compile(`^(a+)+\1$`, "", timeout)
	if err != nil {
		t.Fatal(err)
	}
	vm := goja.New()
	s := vm.ToValue(strings.Repeat("a", 40) + "b").(goja.String)
	began := time.Now()
	found, err := m.MatchAt(s, 0)
	elapsed := time.Since(began)
	if !errors.Is(err, jsregexp.ErrTimeout) || found {
		t.Fatalf("MatchAt = %v, %v; want false, ErrTimeout", found, err)
	}
	if elapsed < timeout/2 {
		t.Errorf("the timeout came after %v, before half the timeout (%v)", elapsed, timeout/2)
	}
}

func TestCompileReportsAPatternRegexp2Refuses(t *testing.T) {
	_, err := jsregexp.Compile(`(`, "", time.Second)
	want := fmt.Sprintf("jsregexp: compiling %s: ", jsregexp.Show("(", ""))
	if err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Errorf("Compile(\"(\") = %v, want an error starting %q", err, want)
	}
}

func TestSearchRE2LooksOnlyWhereGojaHasRE2(t *testing.T) {
	vm := goja.New()
	s := vm.ToValue("é" + strings.Repeat("a", 40) + "b ok").(goja.String)
	tests := []struct {
		name, pattern, flags string
		found, ok            bool
	}{
		{"a pattern RE2 runs finds a match in linear time", `(a+)+$|ok`, "g", true, true},
		{"a pattern RE2 runs may find nothing", `(a+)+$|no`, "g", false, true},
		{"with the u flag too", `é`, "gu", true, true},
		{"a backreference has no RE2 form", `(a)\1`, "g", false, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m, err := jsregexp.Compile(tt.pattern, tt.flags, time.Minute)
			if err != nil {
				t.Fatal(err)
			}
			if found, ok := m.SearchRE2(s); found != tt.found || ok != tt.ok {
				t.Errorf("SearchRE2 = %v, %v; want %v, %v", found, ok, tt.found, tt.ok)
			}
		})
	}
}
