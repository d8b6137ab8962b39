package js

import (
	"context"
	"testing"

	"github.com/dsh-go/dsh/ptc"
)

// A contained runtime (a process-isolation child's) gives a program the same
// result as a guarded one: values, exceptions and their messages, including
// what only jsguard's own builtins and checks give (its JSON, the BigInt
// operator helpers and caps, the regular-expression checks, the allocation
// caps, eval's indirect scope).
func TestAContainedRuntimeGivesWhatAGuardedOneGives(t *testing.T) {
	for _, tt := range []struct{ name, code, want string }{
		{"a value", `return 1+1`, `{"logs":[],"value":2}`},
		{"BigInt operators go through the helpers",
			`const a = 2n, b = 64n; return String(a ** b) + "," + String(a << 3n) + "," + String(a * b)`,
			`{"logs":[],"value":"18446744073709551616,16,128"}`},
		{"a BigInt past its cap is a RangeError", `const a = 1n, b = 1n << 30n; return String(a << b)`,
			`{"error":{"kind":"exception","message":"RangeError: BigInt: result larger than 1048576 bits\n\tat \u003c\u003c (native)\n\tat __dsh_main__ (program.ts:1:44(12))"},"logs":[]}`},
		{"JSON.parse keeps out-of-range numbers as Infinity", `return String(JSON.parse("1e400"))`,
			`{"logs":[],"value":"Infinity"}`},
		{"JSON.parse stops at its depth cap", `try { JSON.parse("[".repeat(20000)) } catch (e) { return String(e) }`,
			`{"logs":[],"value":"RangeError: JSON.parse: nesting deeper than 10000 levels"}`},
		{"a named capture group is refused", `try { new RegExp("(?<y>a)") } catch (e) { return String(e) }`,
			`{"logs":[],"value":"SyntaxError: named capture groups are not supported: /(?\u003cy\u003ea)/"}`},
		{"repeat keeps its allocation cap", `try { "x".repeat(1e9) } catch (e) { return String(e) }`,
			`{"logs":[],"value":"RangeError: String.prototype.repeat: result larger than 268435456 bytes"}`},
		{"eval runs in the global scope", `const local = 1; try { return eval("local") } catch (e) { return String(e) }`,
			`{"logs":[],"value":"ReferenceError: local is not defined"}`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			for _, contained := range []bool{false, true} {
				rt, err := NewProgramRuntime(ProgramOptions{WarmRuntimes: -1, ContainedByProcess: contained})
				if err != nil {
					t.Fatal(err)
				}
				res, err := rt.Run(context.Background(), ptc.Request{Program: tt.code})
				_ = rt.Close()
				if err != nil {
					t.Fatal(err)
				}
				if got := resultJSON(t, res); got != tt.want {
					t.Errorf("contained %v: got %s\nwant %s", contained, got, tt.want)
				}
			}
		})
	}
}
