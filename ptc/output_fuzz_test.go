package ptc

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// FuzzPrettyJSON checks the printer on any JSON text dsl reads: it never
// panics, it is deterministic, it agrees with upstream's algorithm, its
// output is JSON that reads back as the value, and no line is indented past
// ten spaces (deeper containers are compact and valid JSON on their own).
func FuzzPrettyJSON(f *testing.F) {
	for _, seed := range []string{
		`null`, `"s"`, `1e21`, `[]`, `{}`, `{"n":42,"ok":true}`, `["x",2]`,
		`{"outer":[{"inner":true}]}`, `[[[[[[1,2],{"k":[3]}]]]]]`,
		`{"a":{"b":{"c":{"d":{"e":{"f":1,"g":[2,{"h":null}]},"s":"x"}}}}}`,
		`{"k\n":"v\"\u2028\u0001","":[0.1,-0,5e-324]}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		text := PrettyJSON(v)
		if again := PrettyJSON(v); again != text {
			t.Fatalf("not deterministic:\n%q\n%q", text, again)
		}
		if want := outUpstream(v); text != want {
			t.Fatalf("differs from upstream's algorithm\n got %q\nwant %q", text, want)
		}
		back, err := dsl.Unmarshal([]byte(text))
		if err != nil {
			t.Fatalf("output is not JSON: %v\n%q", err, text)
		}
		if !dsl.Equal(back, v) {
			t.Fatalf("output reads back as another value:\n%q", text)
		}
		for line := range strings.SplitSeq(text, "\n") {
			body := strings.TrimLeft(line, " ")
			indent := len(line) - len(body)
			if indent > maxIndent {
				t.Fatalf("line indented %d: %q", indent, line)
			}
			// A line at the deepest indentation holds a compact item:
			// valid JSON once its key and trailing comma are cut.
			if indent == maxIndent {
				item := outCutKey(strings.TrimSuffix(body, ","))
				if _, err := dsl.Unmarshal([]byte(item)); err != nil {
					t.Fatalf("compact item is not JSON: %v\n%q", err, item)
				}
			}
		}
	})
}

// outCutKey drops a leading `"key": ` from a pretty line's body: a line
// that starts with a JSON string followed by ": " is an object member.
func outCutKey(body string) string {
	if !strings.HasPrefix(body, `"`) {
		return body
	}
	for i := 1; i < len(body); i++ {
		switch body[i] {
		case '\\':
			i++
		case '"':
			if rest, ok := strings.CutPrefix(body[i+1:], ": "); ok {
				return rest
			}
			return body
		}
	}
	return body
}
