package mcp

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
)

func TestBoundedRegexp(t *testing.T) {
	t.Run("a pattern Go's syntax does not take is left unchecked, not an error", func(t *testing.T) {
		re, err := boundedRegexp(`^(?!\.)[a-z]+$`)
		if err != nil {
			t.Fatal(err)
		}
		if _, ok := re.(uncheckedRegexp); !ok || !re.MatchString("!") || re.String() != `^(?!\.)[a-z]+$` {
			t.Errorf("got %T %q, want an unchecked pattern matching everything", re, re)
		}
	})
	t.Run("a pattern compiling to more than maxPatternInsts instructions is left unchecked", func(t *testing.T) {
		// 13 bytes, 2,003 instructions: 21 s of matching a MiB of "a".
		re, _ := boundedRegexp(`(?:a*){1000}$`)
		if _, ok := re.(uncheckedRegexp); !ok {
			t.Errorf("got %T, want an unchecked pattern", re)
		}
	})
	t.Run("a small pattern is Go's, and matches", func(t *testing.T) {
		re, _ := boundedRegexp(`^[a-z]+$`)
		if _, ok := re.(*linearRegexp); !ok || !re.MatchString("abc") || re.MatchString("ABC") {
			t.Errorf("got %T, want a checked pattern", re)
		}
	})
	t.Run("a string beyond maxPatternWork is not matched", func(t *testing.T) {
		// 603 instructions: 5.8 s of matching a MiB of "a" without the bound.
		re, _ := boundedRegexp(`(?:.*a){200}b$`)
		lr, ok := re.(*linearRegexp)
		if !ok {
			t.Fatalf("got %T, want a checked pattern", re)
		}
		long := strings.Repeat("a", maxPatternWork/lr.insts+1)
		start := time.Now()
		if !re.MatchString(long) {
			t.Errorf("a string beyond the bound failed the pattern; it is the server's to check")
		}
		// Not a budget: the bound makes this instant, its absence seconds.
		if d := time.Since(start); d > time.Second {
			t.Errorf("matching took %v", d)
		}
		if re.MatchString(strings.Repeat("a", 300)) {
			t.Errorf("a short string that fails the pattern matched")
		}
	})
}

func TestJSONDepth(t *testing.T) {
	for _, tc := range []struct {
		text string
		want int
	}{
		{`1`, 0},
		{`{}`, 1},
		{`{"a":[{"b":{}}]}`, 4},
		{`{"a":"[[[{{{\"[["}`, 1},
		{`[[],[[]],[]]`, 3},
	} {
		if got := jsonDepth([]byte(tc.text)); got != tc.want {
			t.Errorf("jsonDepth(%s) = %d, want %d", tc.text, got, tc.want)
		}
	}
}

func TestImportSchemaDialects(t *testing.T) {
	for _, tc := range []struct {
		name, schema, args string
		want               []string // the violations of args
		err                string   // or the reason the schema is refused
	}{
		{name: "an absolute $id resolves the schema's own $refs without loading anything",
			schema: `{"$id":"https://example.com/tool.json","type":"object","properties":{"a":{"$ref":"#/$defs/n"},"b":{"$ref":"https://example.com/tool.json#/$defs/n"}},"$defs":{"n":{"type":"integer"}}}`,
			args:   `{"a":1.5,"b":"x"}`,
			want:   []string{"arguments/a: got number, want integer", "arguments/b: got string, want integer"}},
		{name: "draft-04's boolean exclusiveMaximum is read as draft-04 says",
			schema: `{"$schema":"http://json-schema.org/draft-04/schema#","type":"object","properties":{"n":{"type":"number","maximum":5,"exclusiveMaximum":true}}}`,
			args:   `{"n":5}`,
			want:   []string{"arguments/n: exclusiveMaximum: got 5, want 5"}},
		{name: "2020-12 is the dialect of a schema without $schema: prefixItems applies",
			schema: `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"}]}}}`,
			args:   `{"p":[1]}`,
			want:   []string{"arguments/p/0: got number, want string"}},
		{name: "an unknown $schema is refused, not fetched",
			schema: `{"$schema":"https://example.com/meta.json","type":"object"}`,
			err:    `it refers to "https://example.com/meta.json", outside the schema: dsh loads no schema from a network or a file`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var schema any
			if err := json.Unmarshal([]byte(tc.schema), &schema); err != nil {
				t.Fatal(err)
			}
			_, in, err := importSchema(schema, true)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			args, err := dsl.Unmarshal([]byte(tc.args))
			if err != nil {
				t.Fatal(err)
			}
			if got := in.validate(args); !slices.Equal(got, tc.want) {
				t.Errorf("violations %q, want %q", got, tc.want)
			}
		})
	}
}

func TestValidateTakesAnyGoFormOfJSON(t *testing.T) {
	var schema any
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"n":{"type":"integer","maximum":3}}}`), &schema); err != nil {
		t.Fatal(err)
	}
	_, in, err := importSchema(schema, true)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args any
		want []string
	}{
		{"a map with an int is read as its snapshot", map[string]any{"n": 4}, []string{"arguments/n: maximum: got 4, want 3"}},
		{"a value that is not JSON is refused with the snapshot's reason", map[string]any{"n": make(chan int)}, []string{"arguments.n: chan int is not lossless JSON"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := in.validate(tc.args); !slices.Equal(got, tc.want) {
				t.Errorf("violations %q, want %q", got, tc.want)
			}
		})
	}
}
