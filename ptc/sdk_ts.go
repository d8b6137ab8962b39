package ptc

import (
	"slices"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
)

// SDKTool is one tool as the SDK declares it: its name, its description
// (the JSDoc above its arguments), and its parameter and canonical output
// schemas as raw JSON Schema in dsl's representation (*dsl.Object or
// map[string]any records, []any, string, float64, bool, nil).
type SDKTool struct {
	Name        string
	Description string
	Parameters  any
	Output      any
}

// tsInstructions is the fixed usage contract above the declarations (§1.7).
const tsInstructions = "## Writing code for run_code\n" +
	"\n" +
	"`run_code` takes two required arguments: `code` — the body of an async TypeScript function (erasable syntax only — no `enum` or namespaces; type annotations are advisory, the code runs type-stripped) — and `description`, a short summary of what the program does. Inside the program:\n" +
	"\n" +
	"- Call tools as `await tools.name(args)` — quoted access for exotic names: `tools[\"my-tool\"](args)`. Every call resolves to the tool's typed canonical JSON value. Tool arguments must be lossless JSON.\n" +
	"- A FAILED tool call rejects with `ToolCallError`, whose `toolName` identifies the failed tool and whose `message` is human-readable — `try/catch` it to handle and continue.\n" +
	"- Independent read-only calls MAY overlap under `Promise.all` (safe calls run concurrently; mutating calls run alone, in submission order). Sequence dependent work with `await`.\n" +
	"- Emit results with `return` and/or `console.log(...)`. Only what you print or return is program output. A successful tool result containing an image is attached after the run so you can inspect it on the next step; every other intermediate result stays out of the conversation, so extract just what you need.\n" +
	"\n" +
	"The available tools:"

// tsJSONValue is the alias every open type refers to.
const tsJSONValue = "type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue }"

// tsDeclarationTail is what follows the two maps.
const tsDeclarationTail = "type ToolName = keyof ToolOutputMap\n" +
	"\n" +
	"declare class ToolCallError extends Error {\n" +
	"  readonly name: \"ToolCallError\";\n" +
	"  readonly toolName: ToolName;\n" +
	"}\n" +
	"\n" +
	"declare const tools: {\n" +
	"  [K in ToolName]: (args: ToolArgsMap[K]) => Promise<ToolOutputMap[K]>;\n" +
	"}"

// TypeScriptSDK renders the tools:sdk section (§1.7): the fixed instructions,
// then a fenced ts block declaring JsonValue, ToolArgsMap, ToolOutputMap,
// ToolName, ToolCallError and tools. Tools are sorted by name in JavaScript
// string order (UTF-16 code units), so the same set gives byte-identical text
// in any order. Tools sharing a name, which a caller keyed by name never
// passes, are ordered by their rendered declarations so that the text still
// does not depend on the input order. The caller leaves run_code out.
func TypeScriptSDK(tools []SDKTool) string {
	return tsInstructions + "\n\n```ts\n" + TypeScriptDeclarations(tools) + "\n```"
}

// TypeScriptDeclarations is the body of TypeScriptSDK's fenced block, the
// declarations alone (what `dsh types` writes as tools.d.ts for an editor).
// The named types that schemas outside the subset reach by $ref are
// declared between JsonValue and ToolArgsMap, in tool order.
func TypeScriptDeclarations(tools []SDKTool) string {
	type entry struct {
		name       []uint16
		tool       *SDKTool
		args, outs string
		named      bool // the schemas declare named types
	}
	render := func(t *SDKTool, namer *luaNamer) (e entry, decls []string) {
		key := tsKeyOrQuoted(t.Name)
		base := luaToolBase(t.Name)
		args, argDecls := tsSchema(t.Parameters, 1, base+"Args", namer)
		outs, outDecls := tsSchema(t.Output, 1, base+"Result", namer)
		decls = append(argDecls, outDecls...)
		return entry{
			name:  utf16.Encode([]rune(t.Name)),
			tool:  t,
			args:  tsDocLine(t.Description, 1) + "  " + key + ": " + args + ";",
			outs:  "  " + key + ": " + outs + ";",
			named: len(decls) > 0,
		}, decls
	}
	entries := make([]entry, len(tools))
	for i := range tools {
		entries[i], _ = render(&tools[i], newLuaNamer())
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := slices.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := strings.Compare(a.tool.Name, b.tool.Name); c != 0 {
			return c
		}
		if c := strings.Compare(a.args, b.args); c != 0 {
			return c
		}
		return strings.Compare(a.outs, b.outs)
	})

	// Named types are named again in the sorted order, so that tools whose
	// names share a stem are told apart the same way in any input order.
	namer := newLuaNamer()
	var decls []string
	for i := range entries {
		if entries[i].named {
			var d []string
			entries[i], d = render(entries[i].tool, namer)
			decls = append(decls, d...)
		}
	}

	var b strings.Builder
	b.WriteString(tsJSONValue)
	for _, d := range decls {
		b.WriteString("\n\n")
		b.WriteString(d)
	}
	b.WriteString("\n\ninterface ToolArgsMap {")
	for _, e := range entries {
		b.WriteString("\n")
		b.WriteString(e.args)
	}
	if len(entries) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n\ninterface ToolOutputMap {")
	for _, e := range entries {
		b.WriteString("\n")
		b.WriteString(e.outs)
	}
	if len(entries) > 0 {
		b.WriteString("\n")
	}
	b.WriteString("}\n\n")
	b.WriteString(tsDeclarationTail)
	return b.String()
}

// SchemaToTS maps a raw JSON Schema to a TypeScript type (§1.8,
// jsonSchemaToTs). A schema inside the supported subset
// ([dsl.AssertSupported]) renders as §1.8 says ("unknown" if a property
// name is not valid UTF-8). A schema outside it (an imported server's full
// JSON Schema) renders node by node, unknown only where a node has no
// TypeScript form, by the rules in the package doc ("Schemas outside the
// subset"); its $refs name types T_<key>, which [TypeScriptDeclarations]
// declares (under the tool's own stem) and SchemaToTS does not. Rendering
// uses an explicit stack, so depth is bounded by memory, not the call
// stack. Objects with properties render over several lines at indent 0.
func SchemaToTS(schema any) string { return schemaToTS(schema, 0) }

// schemaToTS is SchemaToTS with object members at indent+1 and the closing
// brace at indent (two spaces per level).
func schemaToTS(schema any, indent int) string {
	typ, _ := tsSchema(schema, indent, "T", newLuaNamer())
	return typ
}

// tsSchema is schemaToTS with the named types a schema outside the subset
// declares (its $defs that a $ref reaches), named base_<key> through namer.
// A schema inside the subset renders as §1.8 says and declares none.
func tsSchema(schema any, indent int, base string, namer *luaNamer) (string, []string) {
	if dsl.AssertSupported(schema) == nil {
		d, ok := tsRender(schema, indent)
		if !ok {
			return "unknown", nil
		}
		return d.flatten(), nil
	}
	if typ, decls, ok := newFullRenderer(fullTS, schema, base, namer).renderAll(schema, indent); ok {
		return typ, decls
	}
	return "unknown", nil
}

// tsDoc is rendered type text kept as a tree of parts, so that nesting does
// not copy strings level after level; bar records whether the text contains
// '|' or '&' anywhere (an array of it then needs parentheses).
type tsDoc struct {
	parts []tsPart
	bar   bool
	size  int // the length of the text in bytes
}

// tsPart is a literal string or a nested document.
type tsPart struct {
	s string
	d *tsDoc
}

func tsText(s string) tsPart  { return tsPart{s: s} }
func tsSub(d *tsDoc) tsPart   { return tsPart{d: d} }
func tsLeaf(s string) *tsDoc  { return tsNewDoc(tsText(s)) }
func tsHasBar(s string) bool  { return strings.ContainsAny(s, "|&") }
func tsPad(indent int) string { return strings.Repeat("  ", indent) }

func tsNewDoc(parts ...tsPart) *tsDoc {
	d := &tsDoc{parts: parts}
	for _, p := range parts {
		if p.d != nil && p.d.bar || p.d == nil && tsHasBar(p.s) {
			d.bar = true
		}
		if p.d != nil {
			d.size += p.d.size
		} else {
			d.size += len(p.s)
		}
	}
	return d
}

// flatten writes the document's text with an explicit work stack.
func (d *tsDoc) flatten() string {
	var b strings.Builder
	stack := []tsPart{tsSub(d)}
	for len(stack) > 0 {
		p := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		if p.d == nil {
			b.WriteString(p.s)
			continue
		}
		for i := len(p.d.parts) - 1; i >= 0; i-- {
			stack = append(stack, p.d.parts[i])
		}
	}
	return b.String()
}

// tsKind is what a render frame waits for its children to become.
type tsKind uint8

const (
	tsStart tsKind = iota
	tsOneOf
	tsArray
	tsObject
)

// tsFrame is one schema node being rendered: its children (oneOf branches,
// the items schema or the property schemas) are rendered first, then the
// frame combines their documents.
type tsFrame struct {
	node     tsRecord
	indent   int
	kind     tsKind
	children []any
	keys     []string // property names, for tsObject
	docs     []*tsDoc
}

// tsRender renders a schema that dsl.AssertSupported accepted. It reports
// false when a part has no text (a property name that is not valid UTF-8).
func tsRender(schema any, indent int) (*tsDoc, bool) {
	root, _ := tsAsRecord(schema)
	frames := []*tsFrame{{node: root, indent: indent}}
	var result *tsDoc
	finish := func(d *tsDoc) {
		frames = frames[:len(frames)-1]
		if len(frames) == 0 {
			result = d
		} else {
			parent := frames[len(frames)-1]
			parent.docs = append(parent.docs, d)
		}
	}
	for len(frames) > 0 {
		f := frames[len(frames)-1]
		if f.kind != tsStart {
			if n := len(f.docs); n < len(f.children) {
				child, _ := tsAsRecord(f.children[n])
				childIndent := f.indent
				if f.kind == tsObject {
					childIndent++
				}
				frames = append(frames, &tsFrame{node: child, indent: childIndent})
				continue
			}
			d, ok := f.combine()
			if !ok {
				return nil, false
			}
			finish(d)
			continue
		}
		if branches, ok := f.node.get("oneOf"); ok {
			f.kind, f.children = tsOneOf, branches.([]any)
			continue
		}
		typ, ok := f.node.get("type")
		if !ok {
			finish(tsLeaf("JsonValue"))
			continue
		}
		switch t := typ.(string); t {
		case "array":
			items, ok := f.node.get("items")
			if !ok {
				finish(tsLeaf("JsonValue[]"))
				continue
			}
			f.kind, f.children = tsArray, []any{items}
		case "object":
			var props tsRecord
			if pv, ok := f.node.get("properties"); ok {
				props, _ = tsAsRecord(pv)
			}
			keys := props.keys()
			if len(keys) == 0 {
				if ap, _ := f.node.get("additionalProperties"); ap == false {
					finish(tsLeaf("Record<string, never>"))
				} else {
					finish(tsLeaf("Record<string, JsonValue>"))
				}
				continue
			}
			f.kind, f.keys = tsObject, keys
			f.children = make([]any, len(keys))
			for i, k := range keys {
				f.children[i], _ = props.get(k)
			}
		default:
			s, ok := tsScalar(f.node, t)
			if !ok {
				return nil, false
			}
			finish(tsLeaf(s))
		}
	}
	return result, result != nil
}

// combine builds a oneOf, array or object frame's document from its
// children's documents.
func (f *tsFrame) combine() (*tsDoc, bool) {
	switch f.kind {
	case tsOneOf:
		parts := make([]tsPart, 0, 2*len(f.docs))
		for i, d := range f.docs {
			if i > 0 {
				parts = append(parts, tsText(" | "))
			}
			parts = append(parts, tsSub(d))
		}
		return tsNewDoc(parts...), true
	case tsArray:
		if f.docs[0].bar {
			return tsNewDoc(tsText("("), tsSub(f.docs[0]), tsText(")[]")), true
		}
		return tsNewDoc(tsSub(f.docs[0]), tsText("[]")), true
	}
	required := map[string]bool{}
	if rv, ok := f.node.get("required"); ok {
		for _, n := range rv.([]any) {
			required[n.(string)] = true
		}
	}
	parts := []tsPart{tsText("{")}
	for i, k := range f.keys {
		key, ok := tsKey(k)
		if !ok {
			return nil, false
		}
		prop, _ := tsAsRecord(f.children[i])
		if desc, _ := prop.get("description"); desc != nil {
			if line := tsDocLine(desc, f.indent+1); line != "" {
				parts = append(parts, tsText("\n"+line[:len(line)-1]))
			}
		}
		opt := "?"
		if required[k] {
			opt = ""
		}
		parts = append(parts, tsText("\n"+tsPad(f.indent+1)+key+opt+": "), tsSub(f.docs[i]), tsText(";"))
	}
	parts = append(parts, tsText("\n"+tsPad(f.indent)+"}"))
	declared := tsNewDoc(parts...)
	if ap, _ := f.node.get("additionalProperties"); ap == false {
		return declared, true
	}
	return tsNewDoc(tsSub(declared), tsText(" & Record<string, JsonValue>")), true
}

// tsScalar renders a scalar node: its const, else its enum's literals joined
// by " | ", else its type (integer is number).
func tsScalar(node tsRecord, t string) (string, bool) {
	if c, ok := node.get("const"); ok {
		return tsLiteral(c)
	}
	if e, ok := node.get("enum"); ok {
		var b strings.Builder
		for i, v := range e.([]any) {
			lit, ok := tsLiteral(v)
			if !ok {
				return "", false
			}
			if i > 0 {
				b.WriteString(" | ")
			}
			b.WriteString(lit)
		}
		return b.String(), true
	}
	if t == "integer" {
		return "number", true
	}
	return t, true
}

// tsLiteral is JSON.stringify of a scalar.
func tsLiteral(v any) (string, bool) {
	b, err := dsl.Marshal(v)
	return string(b), err == nil
}

// tsKey renders a property or tool name: bare when it is an identifier
// (^[A-Za-z_$][A-Za-z0-9_$]*$, reserved words included), JSON-quoted
// otherwise. It fails for a name that is not valid UTF-8.
func tsKey(name string) (string, bool) {
	if dsl.IsIdentifier(name) {
		return name, true
	}
	return tsLiteral(name)
}

// tsKeyOrQuoted is tsKey for a tool name, which has no type to degrade to:
// a name that is not valid UTF-8 is quoted with its bad bytes as U+FFFD.
func tsKeyOrQuoted(name string) string {
	if k, ok := tsKey(name); ok {
		return k
	}
	k, _ := tsLiteral(strings.ToValidUTF8(name, "\uFFFD"))
	return k
}

// tsDocLine is the one-line JSDoc for a description, newline included, or ""
// when description is not a non-empty string. Runs of JavaScript whitespace
// (the \s class) collapse to one space, the ends are trimmed, and "*/" is
// written "*\/" so that a description cannot close the comment.
func tsDocLine(description any, indent int) string {
	s, ok := description.(string)
	if !ok || s == "" {
		return ""
	}
	var b strings.Builder
	space := false
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		if tsIsSpace(r) {
			space = true
		} else {
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	return tsPad(indent) + "/** " + strings.ReplaceAll(b.String(), "*/", `*\/`) + " */\n"
}

// tsIsSpace reports whether r is in JavaScript's \s class (WhiteSpace and
// LineTerminator of ECMA-262). Unlike unicode.IsSpace it includes U+FEFF and
// excludes U+0085.
func tsIsSpace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', ' ', 0xA0, 0x1680, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000, 0xFEFF:
		return true
	}
	return r >= 0x2000 && r <= 0x200A
}

// tsRecord is a schema object as the renderer reads it: an *dsl.Object in
// member order, or a map[string]any in sorted key order (as dsl reads it).
type tsRecord struct {
	o *dsl.Object
	m map[string]any
}

func tsAsRecord(v any) (tsRecord, bool) {
	switch x := v.(type) {
	case *dsl.Object:
		return tsRecord{o: x}, x != nil
	case map[string]any:
		return tsRecord{m: x}, x != nil
	}
	return tsRecord{}, false
}

func (r tsRecord) get(k string) (any, bool) {
	if r.o != nil {
		return r.o.Get(k)
	}
	v, ok := r.m[k]
	return v, ok
}

func (r tsRecord) keys() []string {
	if r.o != nil {
		return r.o.Keys()
	}
	keys := make([]string, 0, len(r.m))
	for k := range r.m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}
