package dsl_test

import (
	"encoding/json"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// fiveProps is the typical tool-argument schema of the issue: a string, an
// integer, an enum, a nested array of objects, required and a closed root.
func fiveProps(tb testing.TB) *dsl.Schema {
	tb.Helper()
	raw, err := dsl.Params(
		dsl.Prop("path", dsl.String().Required()),
		dsl.Prop("limit", dsl.Integer()),
		dsl.Prop("mode", dsl.String().Enum("read", "write", "append").Required()),
		dsl.Prop("edits", dsl.ArrayOf(dsl.ObjectOf(false,
			dsl.Prop("line", dsl.Integer().Required()),
			dsl.Prop("text", dsl.String().Required()),
		))),
		dsl.Prop("dryRun", dsl.Boolean()),
	).Compile()
	if err != nil {
		tb.Fatal(err)
	}
	raw.Set("additionalProperties", false)
	s, err := dsl.Compile(raw)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

func fivePropsArgs(tb testing.TB) any {
	tb.Helper()
	v, err := dsl.Unmarshal([]byte(`{"path":"src/main.go","limit":200,"mode":"write",
		"edits":[{"line":3,"text":"package main"},{"line":10,"text":"func main() {}"}],"dryRun":false}`))
	if err != nil {
		tb.Fatal(err)
	}
	return v
}

func BenchmarkValidateFiveProperties(b *testing.B) {
	s, v := fiveProps(b), fivePropsArgs(b)
	if vs := s.ValidateArgs(v); vs != nil {
		b.Fatal(vs)
	}
	b.ReportAllocs()
	for b.Loop() {
		if s.ValidateArgs(v) != nil {
			b.Fatal("invalid")
		}
	}
}

func BenchmarkValidateFivePropertiesInvalid(b *testing.B) {
	s := fiveProps(b)
	v, _ := dsl.Unmarshal([]byte(`{"path":1,"mode":"erase","edits":[{"line":1.5}],"extra":true}`))
	b.ReportAllocs()
	for b.Loop() {
		if s.ValidateArgs(v) == nil {
			b.Fatal("valid")
		}
	}
}

// kiloArgs is a 1 KB argument object in Go form.
func kiloArgs(tb testing.TB) (any, []byte) {
	tb.Helper()
	text := []byte(`{"path":"internal/engine/pipeline.go","offset":120,"limit":400,"encoding":"utf-8",
	"pattern":"func (p \\*Pipeline) (Run|Dispatch)\\(","caseSensitive":true,"context":3,
	"include":["**/*.go","**/*.md","cmd/**"],"exclude":["vendor/**","**/*_test.go"],
	"edits":[{"line":12,"text":"\tctx, cancel := context.WithTimeout(ctx, d)","replace":true},
	{"line":40,"text":"\tdefer cancel()","replace":false},{"line":88,"text":"// Run executes one call through every stage.","replace":true}],
	"options":{"followSymlinks":false,"maxDepth":12,"ratio":0.75,"labels":{"owner":"tools-team","tier":"critical"}},
	"note":"Apply the edits in order; stop at the first conflict and report the line, the expected text and the text found there.",
	"requestId":"req_01HZX3J8Q7K2M4N6P8R0S2T4V6","retry":null,"tags":["refactor","engine","pipeline"],
	"reviewers":[{"name":"Ada","email":"ada@example.com","required":true},{"name":"Grace","email":"grace@example.com","required":false}],
	"summary":"Wrap each call in the timeout policy and make the wrapper hand the fused context to the body."}`)
	v, err := dsl.Unmarshal(text)
	if err != nil {
		tb.Fatal(err)
	}
	compact, err := dsl.Marshal(v)
	if err != nil || len(compact) < 1024 {
		tb.Fatalf("the argument object is %d bytes of JSON, want at least 1 KiB (%v)", len(compact), err)
	}
	return v, compact
}

func BenchmarkSnapshotKilobyte(b *testing.B) {
	v, text := kiloArgs(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dsl.Snapshot(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkSnapshotKilobyteMap(b *testing.B) {
	_, text := kiloArgs(b)
	var m any
	if err := json.Unmarshal(text, &m); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dsl.Snapshot(m); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkCheckLosslessKilobyte(b *testing.B) {
	v, _ := kiloArgs(b)
	b.ReportAllocs()
	for b.Loop() {
		if err := dsl.CheckLossless(v); err != nil {
			b.Fatal(err)
		}
	}
}

// The same validation by santhosh-tekuri/jsonschema/v6, for comparison.
func BenchmarkValidateFivePropertiesJSONSchemaV6(b *testing.B) {
	theirs, err := compileTheirs(fiveProps(b).Raw())
	if err != nil {
		b.Fatal(err)
	}
	v := toPlain(fivePropsArgs(b))
	if err := theirs.Validate(v); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		if theirs.Validate(v) != nil {
			b.Fatal("invalid")
		}
	}
}

// Canonical encoding of the object BenchmarkSnapshotKilobyte copies, beside
// encoding/json writing the same object decoded into map[string]any.
func BenchmarkMarshalKilobyte(b *testing.B) {
	v, text := kiloArgs(b)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := dsl.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalKilobyteEncodingJSON(b *testing.B) {
	_, text := kiloArgs(b)
	var m any
	if err := json.Unmarshal(text, &m); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(m); err != nil {
			b.Fatal(err)
		}
	}
}
