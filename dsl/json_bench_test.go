package dsl

import (
	"encoding/json"
	"testing"
)

// benchArgs returns about 1 KB of realistic tool arguments.
func benchArgs() *Object {
	edit := func(line float64, oldText, newText string) *Object {
		return NewObject(
			Member{"line", line},
			Member{"oldText", oldText},
			Member{"newText", newText},
			Member{"replaceAll", false},
		)
	}
	return NewObject(
		Member{"path", "/home/user/project/src/components/Button.tsx"},
		Member{"description", "Replace the deprecated onClick handler with the new event API and update the call sites — keep the \"legacy\" prop working."},
		Member{"dryRun", false},
		Member{"maxResults", 50.0},
		Member{"timeoutMs", 30000.0},
		Member{"threshold", 0.75},
		Member{"tags", []any{"refactor", "ui", "frontend", "events"}},
		Member{"edits", []any{
			edit(12, "import { onClick } from './legacy';", "import { useEvent } from '../events';"),
			edit(42, "  onClick={handleClick}\n  disabled={false}", "  onPress={handleClick}\n  isDisabled={false}"),
			edit(87, "export default function Button(props) {\n\treturn <button {...props} />;\n}", "export function Button(props: ButtonProps) {\n\treturn <button {...props} />;\n}"),
			edit(120, "// TODO: remove", ""),
		}},
		Member{"options", NewObject(
			Member{"encoding", "utf-8"},
			Member{"createBackup", true},
			Member{"lineEnding", "\n"},
			Member{"context", NewObject(Member{"before", 3.0}, Member{"after", 3.0})},
			Member{"ignore", []any{"node_modules/**", "dist/**", "*.min.js"}},
		)},
		Member{"requestId", "req_01HZX3J8Q7K2M4N6P8R0S2T4V6"},
		Member{"retry", nil},
	)
}

func BenchmarkMarshal(b *testing.B) {
	v := benchArgs()
	text, _ := Marshal(v)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkAppendJSON(b *testing.B) {
	v := benchArgs()
	buf, _ := Marshal(v)
	b.SetBytes(int64(len(buf)))
	b.ReportAllocs()
	for b.Loop() {
		var err error
		if buf, err = AppendJSON(buf[:0], v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodingJSONMarshal(b *testing.B) {
	v := jsonPlain(benchArgs())
	text, _ := json.Marshal(v)
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := json.Marshal(v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshal(b *testing.B) {
	text, _ := Marshal(benchArgs())
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Unmarshal(text); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkEncodingJSONUnmarshal(b *testing.B) {
	text, _ := Marshal(benchArgs())
	b.SetBytes(int64(len(text)))
	b.ReportAllocs()
	for b.Loop() {
		var v any
		if err := json.Unmarshal(text, &v); err != nil {
			b.Fatal(err)
		}
	}
}
