package ptc

import (
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
)

// luaNull is the program-visible JSON null (the Lua runtime's global null;
// nil is absence), and luaNullType its LuaLS type.
const (
	luaNull     = "null"
	luaNullType = "JsonNull"
)

// luaInstructions is the fixed usage contract above the Lua declarations,
// the Lua twin of tsInstructions (§0.3, §1.7).
const luaInstructions = "## Writing code for run_code\n" +
	"\n" +
	"`run_code` takes two required arguments: `code` — the body of a Lua function (Lua 5.1; a top-level `return` gives the program's result) — and `description`, a short summary of what the program does. Inside the program:\n" +
	"\n" +
	"- Call tools as `tools.name{key = value}` — quoted access for names that are not Lua identifiers or are Lua keywords: `tools[\"my-tool\"]{key = value}`. Every call blocks until the tool is done and returns the tool's canonical JSON value as Lua values: objects and arrays are tables, JSON null is `" + luaNull + "` (nil means absent), and `array{}` or `object{}` makes an empty table that stays a JSON array or object. Tool arguments must be lossless JSON: no functions, NaN, holes or tables mixing array and hash keys.\n" +
	"- A FAILED tool call raises a `ToolCallError` value, whose `toolName` identifies the failed tool and whose `message` is human-readable (`tostring(e)` gives it too) — catch it with `local ok, e = pcall(tools.name, args)`, test it with `ToolCallError.is(e)` and handle it to continue, or re-raise it with `error(e)`.\n" +
	"- Independent read-only calls MAY overlap under `tools.gather(f1, f2, ...)`, which runs each function as a coroutine and returns one array table of their results in order (`null` for a function that returns nothing): `local r = tools.gather(f, g)`, then `r[1]`, `r[2]`. It raises the first error (safe calls run concurrently; mutating calls run alone, in submission order). Calls outside it run one after another.\n" +
	"- Emit results with `return` and/or `print(...)` (one log entry per call, its arguments joined with tabs). Only what you print or return is program output. A successful tool result containing an image is attached after the run so you can inspect it on the next step; every other intermediate result stays out of the conversation, so extract just what you need.\n" +
	"\n" +
	"The available tools:"

// luaPrelude declares what every program has besides the tools: JSON null,
// the array and object markers, ToolCallError, and the tools table.
const luaPrelude = "---@meta\n" +
	"\n" +
	"---JSON null: tool results hold null where the JSON holds null (nil is absence), and arguments may pass it.\n" +
	"---@class " + luaNullType + "\n" +
	"\n" +
	"---JSON null.\n" +
	"---@type " + luaNullType + "\n" +
	luaNull + " = nil\n" +
	"\n" +
	"---Marks t (a new table when nil) as a JSON array, so that it stays one when empty; returns it.\n" +
	"---@generic T: table\n" +
	"---@param t? T\n" +
	"---@return T\n" +
	"function array(t) end\n" +
	"\n" +
	"---Marks t (a new table when nil) as a JSON object, so that it stays one when empty; returns it.\n" +
	"---@generic T: table\n" +
	"---@param t? T\n" +
	"---@return T\n" +
	"function object(t) end\n" +
	"\n" +
	"---What a failed tool call raises: pcall returns it as its error value.\n" +
	"---@class ToolCallError\n" +
	"---@field toolName string The name of the tool whose call failed.\n" +
	"---@field message string What went wrong; tostring(e) gives it too.\n" +
	"ToolCallError = {}\n" +
	"\n" +
	"---Reports whether e is a ToolCallError.\n" +
	"---@param e any\n" +
	"---@return boolean\n" +
	"function ToolCallError.is(e) end\n" +
	"\n" +
	"---The tools, one function per tool: a call blocks until the tool is done and returns its value, or raises a ToolCallError.\n" +
	"---@class tools\n" +
	"tools = {}"

// luaGather is the declaration of tools.gather, which the runtime offers
// unless a tool has that name.
const (
	luaGatherName = "gather"
	luaGather     = "---Runs each function as a coroutine, so that their tool calls overlap; returns one array table of their results and raises the first error.\n" +
		"---@param ... fun(): any\n" +
		"---@return any[] results one per function, in order (null for a function that returns nothing)\n" +
		"function tools.gather(...) end"
)

// LuaSDK renders the tools:sdk section for Lua programs (§0.3): the fixed
// instructions, then a fenced lua block of LuaLS annotations declaring
// null, array, object, ToolCallError, tools and tools.gather (left out when
// a tool is named gather, as the runtime leaves it out), then per
// tool the classes of its arguments and result and its function (with the
// tool's description, @param and @return). Schemas map by the rules of §1.8
// in their LuaLS form ([schemaToLua]). Tools are sorted as [TypeScriptSDK]
// sorts them (UTF-16 code units), so the same set gives byte-identical text
// in any order; classes are named after their tool (see [luaToolBase]) and
// made unique in that order. Tools sharing a name, which a caller keyed by
// name never passes, are ordered by their declarations rendered alone. The
// caller leaves run_code out.
func LuaSDK(tools []SDKTool) string {
	return luaInstructions + "\n\n```lua\n" + LuaDeclarations(tools) + "\n```"
}

// LuaDeclarations is the body of LuaSDK's fenced block, the LuaLS meta file
// alone (what `dsh types` writes as tools.lua for an editor).
func LuaDeclarations(tools []SDKTool) string {
	type entry struct {
		name  []uint16
		tool  *SDKTool
		alone string // the declarations rendered alone, for tools sharing a name
	}
	entries := make([]entry, len(tools))
	count := make(map[string]int, len(tools))
	for i := range tools {
		entries[i] = entry{name: utf16.Encode([]rune(tools[i].Name)), tool: &tools[i]}
		count[tools[i].Name]++
	}
	for i := range entries {
		if count[entries[i].tool.Name] > 1 {
			entries[i].alone = luaToolBlock(entries[i].tool, newLuaNamer())
		}
	}
	slices.SortFunc(entries, func(a, b entry) int {
		if c := slices.Compare(a.name, b.name); c != 0 {
			return c
		}
		if c := strings.Compare(a.tool.Name, b.tool.Name); c != 0 {
			return c
		}
		return strings.Compare(a.alone, b.alone)
	})

	namer := newLuaNamer()
	var b strings.Builder
	b.WriteString(luaPrelude)
	if count[luaGatherName] == 0 {
		b.WriteString("\n\n")
		b.WriteString(luaGather)
	}
	for _, e := range entries {
		b.WriteString("\n\n")
		b.WriteString(luaToolBlock(e.tool, namer))
	}
	return b.String()
}

// luaToolBlock is one tool's declarations: the classes of its arguments,
// the classes of its result, then its function, blank-line separated.
func luaToolBlock(t *SDKTool, namer *luaNamer) string {
	base := luaToolBase(t.Name)
	args, argClasses := schemaToLua(t.Parameters, base+"Args", namer)
	result, resultClasses := schemaToLua(t.Output, base+"Result", namer)
	var b strings.Builder
	for _, c := range slices.Concat(argClasses, resultClasses) {
		b.WriteString(c)
		b.WriteString("\n\n")
	}
	if line := luaDocText(t.Description); line != "" {
		b.WriteString("---")
		b.WriteString(line)
		b.WriteString("\n")
	}
	b.WriteString("---@param args ")
	b.WriteString(args)
	b.WriteString("\n---@return ")
	b.WriteString(result)
	b.WriteString("\n")
	if luaIsName(t.Name) {
		b.WriteString("function tools." + t.Name + "(args) end")
	} else {
		b.WriteString("tools[" + luaQuote(t.Name) + "] = function(args) end")
	}
	return b.String()
}

// luaToolBase is the stem of a tool's class names: its runs of ASCII
// letters and digits, each capitalized, joined ("my-mcp.tool" is
// "MyMcpTool", "read_file" is "ReadFile"); "Tool" before a stem that is
// empty or starts with a digit. Stems may coincide; the namer tells the
// classes apart.
func luaToolBase(name string) string {
	base := luaPascal(name)
	if base == "" || base[0] >= '0' && base[0] <= '9' {
		return "Tool" + base
	}
	return base
}

// luaPascal joins the runs of ASCII letters and digits of s, each with its
// first letter upper-cased.
func luaPascal(s string) string {
	var b strings.Builder
	start := true
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case 'a' <= c && c <= 'z':
			if start {
				c -= 'a' - 'A'
			}
		case 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		default:
			start = true
			continue
		}
		b.WriteByte(c)
		start = false
	}
	return b.String()
}

// luaMaxClassName bounds a derived class name: past it a class is named
// after its schema's root class, numbered, so that names stay short however
// deep the schema is.
const luaMaxClassName = 64

// luaNamer hands out class names, each once.
type luaNamer struct {
	used map[string]struct{}
	next map[string]int // the next suffix to try for a taken candidate
}

func newLuaNamer() *luaNamer {
	n := &luaNamer{used: map[string]struct{}{}, next: map[string]int{}}
	for _, s := range []string{
		"nil", "any", "boolean", "string", "number", "integer", "function", "table", "thread",
		"userdata", "lightuserdata", "unknown", "true", "false", "self",
		luaNullType, "ToolCallError", "tools",
	} {
		n.used[s] = struct{}{}
	}
	return n
}

// claim returns candidate, or when it is taken candidate_2, candidate_3…
// (the first free one), and marks it taken.
func (n *luaNamer) claim(candidate string) string {
	name := candidate
	if _, taken := n.used[name]; taken {
		i := max(n.next[candidate], 2)
		for {
			name = candidate + "_" + strconv.Itoa(i)
			i++
			if _, taken := n.used[name]; !taken {
				break
			}
		}
		n.next[candidate] = i
	}
	n.used[name] = struct{}{}
	return name
}

// release gives names back (those of a schema that degraded to any).
func (n *luaNamer) release(names []string) {
	for _, name := range names {
		delete(n.used, name)
	}
}

// schemaToLua maps a raw JSON Schema to a LuaLS type (§0.3, the rules of
// §1.8): string, number, integer, boolean; null is JsonNull; {} is any;
// const and enum are literals joined by "|"; oneOf joins its branches by
// "|"; an array is T[] ((T)[] when T holds a "|"), any[] without items; an
// object without properties is table<string, any> when open; every other
// object is a class (one that extends table<string, any> when open) whose
// ---@field lines follow the properties in declaration order, name? for an
// optional one, the property's description after the type. The type is
// returned with the class declarations it names, in pre-order; the root
// class is named class and the others after their path from it (a
// property's name, Item for array items, Variant<n> for oneOf branches).
// That is for a schema inside the supported subset ([dsl.AssertSupported]).
// A schema outside it (an imported server's full JSON Schema) renders node
// by node, any only where a node has no LuaLS form, by the rules in the
// package doc ("Schemas outside the subset"); its $refs name classes or
// ---@alias declarations <class>_<key>, returned with the classes. Past
// that renderer's bounds the type is any and there are no classes.
// Rendering uses an explicit stack, so depth is bounded by memory, not the
// call stack.
func schemaToLua(schema any, class string, namer *luaNamer) (string, []string) {
	if dsl.AssertSupported(schema) != nil {
		if typ, decls, ok := newFullRenderer(fullLua, schema, class, namer).renderAll(schema, 0); ok {
			return typ, decls
		}
		return "any", nil
	}
	r := luaRenderer{namer: namer, root: class}
	typ, ok := r.render(schema)
	if !ok {
		namer.release(r.claimed)
		return "any", nil
	}
	classes := make([]string, len(r.classes))
	for i, c := range r.classes {
		classes[i] = c.flatten()
	}
	return typ.flatten(), classes
}

// luaRenderer renders one schema: the classes it declares, in slots taken
// in pre-order, and the names it claimed.
type luaRenderer struct {
	namer   *luaNamer
	root    string
	classes []*tsDoc
	claimed []string
}

// luaFrame is one schema node being rendered: its children (oneOf branches,
// the items schema or the property schemas) are rendered first, then the
// frame combines their documents. hint is the class name the node takes if
// it is a class, and the stem of its children's hints.
type luaFrame struct {
	node     tsRecord
	hint     string
	kind     tsKind
	children []any
	hints    []string
	keys     []string // property names, for tsObject
	docs     []*tsDoc
	class    string // the class name, for tsObject
	slot     int    // the class's slot in classes, for tsObject
}

func (r *luaRenderer) render(schema any) (*tsDoc, bool) {
	root, _ := tsAsRecord(schema)
	frames := []*luaFrame{{node: root, hint: r.root}}
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
				frames = append(frames, &luaFrame{node: child, hint: f.hints[n]})
				continue
			}
			d, ok := r.combine(f)
			if !ok {
				return nil, false
			}
			finish(d)
			continue
		}
		if branches, ok := f.node.get("oneOf"); ok {
			f.kind, f.children = tsOneOf, branches.([]any)
			f.hints = make([]string, len(f.children))
			for i := range f.hints {
				f.hints[i] = f.hint + "Variant" + strconv.Itoa(i+1)
			}
			continue
		}
		typ, ok := f.node.get("type")
		if !ok {
			finish(tsLeaf("any"))
			continue
		}
		switch t := typ.(string); t {
		case "array":
			items, ok := f.node.get("items")
			if !ok {
				finish(tsLeaf("any[]"))
				continue
			}
			f.kind, f.children, f.hints = tsArray, []any{items}, []string{f.hint + "Item"}
		case "object":
			var props tsRecord
			if pv, ok := f.node.get("properties"); ok {
				props, _ = tsAsRecord(pv)
			}
			keys := props.keys()
			closed := false
			if ap, _ := f.node.get("additionalProperties"); ap == false {
				closed = true
			}
			if len(keys) == 0 && !closed {
				finish(tsLeaf("table<string, any>"))
				continue
			}
			hint := f.hint
			if len(hint) > luaMaxClassName {
				hint = r.root
			}
			f.kind, f.keys, f.class = tsObject, keys, r.namer.claim(hint)
			r.claimed = append(r.claimed, f.class)
			f.slot = len(r.classes)
			r.classes = append(r.classes, nil)
			f.children = make([]any, len(keys))
			f.hints = make([]string, len(keys))
			for i, k := range keys {
				f.children[i], _ = props.get(k)
				key := luaPascal(k)
				if key == "" {
					key = "Field"
				}
				f.hints[i] = f.class + key
			}
		default:
			s, ok := luaScalar(f.node, t)
			if !ok {
				return nil, false
			}
			finish(tsLeaf(s))
		}
	}
	return result, result != nil
}

// combine builds a oneOf or array frame's type from its children's, or
// fills an object frame's class slot and returns the class name.
func (r *luaRenderer) combine(f *luaFrame) (*tsDoc, bool) {
	switch f.kind {
	case tsOneOf:
		parts := make([]tsPart, 0, 2*len(f.docs))
		for i, d := range f.docs {
			if i > 0 {
				parts = append(parts, tsText("|"))
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
	head := "---@class " + f.class
	if ap, _ := f.node.get("additionalProperties"); ap != false {
		head += ": table<string, any>"
	}
	parts := []tsPart{tsText(head)}
	for i, k := range f.keys {
		key := k
		if !luaIsName(k) {
			key = "[" + luaQuote(k) + "]"
		}
		if !required[k] {
			key += "?"
		}
		parts = append(parts, tsText("\n---@field "+key+" "), tsSub(f.docs[i]))
		prop, _ := tsAsRecord(f.children[i])
		if desc, _ := prop.get("description"); desc != nil {
			if text := luaDocText(desc); text != "" {
				first, _ := utf8.DecodeRuneInString(text)
				if !unicode.IsLetter(first) && !unicode.IsDigit(first) {
					text = "# " + text
				}
				parts = append(parts, tsText(" "+text))
			}
		}
	}
	r.classes[f.slot] = tsNewDoc(parts...)
	return tsLeaf(f.class), true
}

// luaScalar renders a scalar node: its const, else its enum's literals
// joined by "|", else its type (null is JsonNull).
func luaScalar(node tsRecord, t string) (string, bool) {
	if c, ok := node.get("const"); ok {
		return luaLiteral(c)
	}
	if e, ok := node.get("enum"); ok {
		var b strings.Builder
		for i, v := range e.([]any) {
			lit, ok := luaLiteral(v)
			if !ok {
				return "", false
			}
			if i > 0 {
				b.WriteString("|")
			}
			b.WriteString(lit)
		}
		return b.String(), true
	}
	if t == "null" {
		return luaNullType, true
	}
	return t, true
}

// luaLiteral is a scalar's LuaLS literal type: a quoted string, a number as
// JSON writes it, true or false, or JsonNull for null.
func luaLiteral(v any) (string, bool) {
	switch x := v.(type) {
	case nil:
		return luaNullType, true
	case string:
		return luaQuote(x), true
	}
	b, err := dsl.Marshal(v)
	return string(b), err == nil
}

// luaIsName reports whether s is a Lua name that is not a keyword, so that
// tools.s and a bare field name work.
func luaIsName(s string) bool {
	if s == "" || IsLuaKeyword(s) {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		letter := c == '_' || ('A' <= c && c <= 'Z') || ('a' <= c && c <= 'z')
		if !letter && (i == 0 || c < '0' || c > '9') {
			return false
		}
	}
	return true
}

// luaQuote writes s as a double-quoted Lua string on one line: backslash,
// quote, \n, \r and \t escaped, other control bytes, bytes of invalid UTF-8
// and the Unicode line breaks (U+0085, U+2028, U+2029) as \ddd, so the
// literal is exactly s's bytes.
func luaQuote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\' || r == '"':
			b.WriteByte('\\')
			b.WriteRune(r)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < 0x20 || r == 0x7f || r == 0x85 || r == 0x2028 || r == 0x2029 || r == utf8.RuneError && n == 1:
			for j := i; j < i+n; j++ {
				b.WriteString(`\` + luaPad3(s[j]))
			}
		default:
			b.WriteString(s[i : i+n])
		}
		i += n
	}
	b.WriteByte('"')
	return b.String()
}

// luaPad3 is c in decimal on three digits, so that a digit after a \ddd
// escape cannot extend it.
func luaPad3(c byte) string {
	return string([]byte{'0' + c/100, '0' + c/10%10, '0' + c%10})
}

// luaDocText is a description as one line of annotation text, or "" when
// description is not a non-empty string: bytes of invalid UTF-8 become
// U+FFFD, runs of whitespace (Unicode's and JavaScript's, line breaks
// included) collapse to one space, the ends are trimmed, and a leading "@"
// is escaped as "\@" so that the line cannot read as an annotation.
func luaDocText(description any) string {
	s, ok := description.(string)
	if !ok || s == "" {
		return ""
	}
	s = strings.ToValidUTF8(s, "\uFFFD")
	var b strings.Builder
	space := false
	for _, r := range s {
		if unicode.IsSpace(r) || tsIsSpace(r) || r == 0x2028 || r == 0x2029 {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	text := b.String()
	if strings.HasPrefix(text, "@") {
		text = `\` + text
	}
	return text
}
