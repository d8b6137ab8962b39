package tests

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// goInternals matches Go's own forms in a text that reaches the model: a
// heap address, a struct dump, a goja or gopher-lua type, fmt's error
// verbs, a goroutine trace.
var goInternals = regexp.MustCompile(`0x[0-9a-f]{6,}|\*goja\.|\*lua\.|&\{|%!|goroutine`)

// hostilePrograms are programs whose failure (or result) text goja or
// gopher-lua once formatted with Go's %v or %T of their own values.
var hostilePrograms = map[string][]string{
	"ts": {
		"String(Object.create(null))",
		"`${Object.create(null)}`",
		"Object.create(null) + 1",
		"[Object.create(null)].join()",
		"Number(Object.create(null))",
		"const o = Object.create(null); o.toString = 5; String(o)",
		"String(Object.assign(Object.create(null), { secret: 'v' }))",
		"throw Object.create(null)",
		"new Proxy({}, { get() { throw Object.create(null) } }).x",
		"await Promise.reject(Object.create(null))",
		"Symbol() + ''",
		"JSON.parse('{')",
		"null.x",
		"BigInt(1.5)",
		"(function f() { f() })()",
		"Reflect.ownKeys(1)",
		"Object.setPrototypeOf(Object.prototype, {})",
	},
	"lua": {
		"error({})",
		"error(setmetatable({}, {__tostring = function() return {} end}))",
		"return {} .. 'x'",
		"return {} < {}",
		"local t = nil; return t.x",
		"error(coroutine.create(function() end))",
		"return math.floor({})",
		"return setmetatable({}, {__index = function(t, k) return t[k] end}).x",
		"return string.format('%d', {})",
		"return string.format('%v', {})",
		"return string.format('%T', 1)",
		"return string.format('%s %d', 'a')",
		"return string.format('%x', 'abc')",
		"error(type)",
	},
}

// TestErrorsCarryNoGoInternals runs hostile programs in both languages and
// both isolation modes through the dsh binary and scans every result's
// text (a failure's message, or a value) for Go's own forms.
func TestErrorsCarryNoGoInternals(t *testing.T) {
	bin := buildDsh(t)
	for _, lang := range []string{"ts", "lua"} {
		for _, mode := range []string{"in-process", "process"} {
			t.Run(lang+"/"+mode+": no failure text holds a Go form", func(t *testing.T) {
				dir := t.TempDir()
				if err := os.MkdirAll(filepath.Join(dir, "scripts"), 0o755); err != nil {
					t.Fatal(err)
				}
				var calls []map[string]any
				for i, code := range hostilePrograms[lang] {
					calls = append(calls, map[string]any{"id": strconv.Itoa(i), "name": "run_code",
						"arguments": map[string]any{"description": "hostile", "code": code}})
				}
				b, _ := json.Marshal(calls)
				if err := os.WriteFile(filepath.Join(dir, "calls.json"), b, 0o644); err != nil {
					t.Fatal(err)
				}
				cmd := exec.Command(bin, "--scripts", filepath.Join(dir, "scripts"), "--executor", "ptc", "--ptc-lang", lang,
					"--ptc-isolation", mode, "--approve", "allow", "run", "--json", "calls.json")
				cmd.Dir = dir
				var stderr strings.Builder
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("dsh: %v\n%s", err, stderr.String())
				}
				results, err := readBatch(out)
				if err != nil {
					t.Fatalf("%v\n%s", err, out)
				}
				for i, code := range hostilePrograms[lang] {
					r, ok := results[strconv.Itoa(i)]
					if !ok {
						t.Errorf("%s: no result", code)
						continue
					}
					text := r.message()
					if !r.IsError {
						text = string(r.Value)
					}
					for _, c := range r.Content {
						text += "\n" + c.Text
					}
					if m := goInternals.FindString(text); m != "" {
						t.Errorf("%s: %q holds %q", code, clip(text), m)
					}
				}
			})
		}
	}
}
