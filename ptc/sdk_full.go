package ptc

import (
	"reflect"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The SDKs render a schema inside dsh's subset exactly as §1.8 says, and a
// schema outside it (an imported MCP server's full JSON Schema) node by
// node with the renderer below, so that one keyword dsh does not enforce
// costs that node its type, not the whole tool its signature. The rules are
// in doc.go ("Schemas outside the subset").

// Bounds of one schema's rendering outside the subset. Past either, the
// whole schema is unknown (any in Lua), as it would be inside the subset.
const (
	// fullMaxBytes bounds the text of one schema: its type and the named
	// types it declares.
	fullMaxBytes = 64 << 10
	// fullMaxNodes bounds the schema nodes one rendering visits (shared Go
	// maps could otherwise be walked again and again without writing text).
	fullMaxNodes = 100_000
	// fullMaxDefName bounds the part of a named type taken from its $defs key.
	fullMaxDefName = 64
)

// fullLongHint stands for every Lua class hint longer than luaMaxClassName.
var fullLongHint = strings.Repeat("_", luaMaxClassName+1)

// fullLang is the language a fullRenderer writes.
type fullLang uint8

const (
	fullTS fullLang = iota
	fullLua
)

// fullRenderer renders one schema (a tool's parameters or output) outside
// the subset: its type, and the named types its $refs declare, each once.
type fullRenderer struct {
	lang    fullLang
	namer   *luaNamer
	base    string   // the stem of named types (and the Lua root class)
	root    tsRecord // the schema's root, where $defs and definitions live
	defs    map[string]string
	queue   []fullDef
	decls   []*tsDoc // TS: type declarations; Lua: classes and aliases, in slots
	claimed []string
	visits  int
	failed  bool
}

// fullDef is a named type waiting to be declared.
type fullDef struct {
	name   string
	schema any
}

// fullChild is a schema to render where its parent needs a type: at indent
// (TS members), with hint as its Lua class name, or class when the class
// was named beforehand (a $defs entry that is an object).
type fullChild struct {
	schema any
	indent int
	hint   string
	class  string
}

// fullFrame is a node waiting for its children's types; combine builds its
// own from them (nil is "no constraint": JsonValue in TS, any in Lua).
type fullFrame struct {
	children []fullChild
	docs     []*tsDoc
	combine  func(docs []*tsDoc) *tsDoc
	id       uintptr
}

func newFullRenderer(lang fullLang, schema any, base string, namer *luaNamer) *fullRenderer {
	root, _ := tsAsRecord(schema)
	return &fullRenderer{lang: lang, namer: namer, base: base, root: root, defs: map[string]string{}}
}

// renderAll renders the schema and then every named type it reaches. It
// reports false when a bound was passed; the names it claimed are then
// given back.
func (r *fullRenderer) renderAll(schema any, indent int) (string, []string, bool) {
	typ := r.render(fullChild{schema: schema, indent: indent, hint: r.base})
	total := 0
	if typ != nil {
		total = typ.size
	}
	for i := 0; i < len(r.queue) && !r.failed; i++ {
		def := r.queue[i]
		class := ""
		if r.lang == fullLua {
			class = def.name
		}
		d := r.render(fullChild{schema: def.schema, hint: def.name, class: class})
		if r.failed {
			break
		}
		switch {
		case r.lang == fullTS:
			doc := r.docOr(d)
			var desc any
			if rec, ok := tsAsRecord(def.schema); ok {
				desc, _ = rec.get("description")
			}
			r.decls = append(r.decls, tsNewDoc(tsText(tsDocLine(desc, 0)+"type "+def.name+" = "), tsSub(doc), tsText(";")))
		case d == nil || !fullIsLeaf(d, def.name):
			r.decls = append(r.decls, tsNewDoc(tsText("---@alias "+def.name+" "), tsSub(r.docOr(d))))
		}
	}
	for _, d := range r.decls {
		if d != nil {
			total += d.size
		}
	}
	if r.failed || total > fullMaxBytes {
		r.namer.release(r.claimed)
		return "", nil, false
	}
	decls := make([]string, 0, len(r.decls))
	for _, d := range r.decls {
		if d != nil {
			decls = append(decls, d.flatten())
		}
	}
	return r.docOr(typ).flatten(), decls, true
}

// render renders one schema node by node with an explicit stack. Nodes on
// the path from the root are tracked, so that a Go value containing itself
// renders as unknown where it recurs.
func (r *fullRenderer) render(c fullChild) *tsDoc {
	var frames []*fullFrame
	ancestors := map[uintptr]int{}
	var result *tsDoc
	deliver := func(d *tsDoc) {
		if d != nil && d.size > fullMaxBytes {
			r.failed = true
		}
		if len(frames) == 0 {
			result = d
			return
		}
		top := frames[len(frames)-1]
		top.docs = append(top.docs, d)
	}
	enter := func(c fullChild) {
		if r.visits++; r.visits > fullMaxNodes || 2*c.indent > fullMaxBytes {
			r.failed = true
			return
		}
		f, d := r.start(c, ancestors)
		if f == nil {
			deliver(d)
			return
		}
		ancestors[f.id]++
		frames = append(frames, f)
	}
	enter(c)
	for len(frames) > 0 && !r.failed {
		f := frames[len(frames)-1]
		if n := len(f.docs); n < len(f.children) {
			enter(f.children[n])
			continue
		}
		frames = frames[:len(frames)-1]
		if ancestors[f.id]--; ancestors[f.id] == 0 {
			delete(ancestors, f.id)
		}
		deliver(f.combine(f.docs))
	}
	return result
}

// fullRecordID identifies a schema object, to find one inside itself.
func fullRecordID(rec tsRecord) uintptr {
	if rec.o != nil {
		return reflect.ValueOf(rec.o).Pointer()
	}
	return reflect.ValueOf(rec.m).Pointer()
}

// start plans a node: either its type at once, or a frame whose children
// are rendered first.
func (r *fullRenderer) start(c fullChild, ancestors map[uintptr]int) (*fullFrame, *tsDoc) {
	rec, ok := tsAsRecord(c.schema)
	if !ok {
		if b, isBool := c.schema.(bool); isBool {
			if b {
				return nil, nil
			}
			return nil, r.never()
		}
		return nil, r.unknown()
	}
	if ref, ok := rec.get("$ref"); ok {
		return nil, r.ref(ref)
	}
	id := fullRecordID(rec)
	if ancestors[id] > 0 {
		return nil, r.unknown()
	}

	f := &fullFrame{id: id}
	add := func(schema any, indent int, hint string) int {
		if len(hint) > luaMaxClassName {
			// Past the bound a hint only grows, and a class takes the root's
			// name: keep any too-long hint, not one growing with the depth.
			hint = fullLongHint
		}
		f.children = append(f.children, fullChild{schema: schema, indent: indent, hint: hint})
		return len(f.children) - 1
	}
	var parts []func(docs []*tsDoc) *tsDoc
	// loose is the first oneOf or anyOf none of whose branches constrains:
	// it adds nothing beside other constraints (anyOf of required lists),
	// and alone it is written out as §1.8 writes it ("JsonValue | JsonValue").
	var loose *tsDoc

	cv, hasConst := rec.get("const")
	ev, hasEnum := rec.get("enum")
	switch {
	case hasConst:
		d := r.literal(cv)
		parts = append(parts, func([]*tsDoc) *tsDoc { return d })
	case hasEnum:
		d := r.enum(ev)
		parts = append(parts, func([]*tsDoc) *tsDoc { return d })
	default:
		if alts := r.typeAlternatives(rec); len(alts) > 0 {
			nullable, _ := rec.get("nullable")
			_, hasOneOf := rec.get("oneOf")
			_, hasAnyOf := rec.get("anyOf")
			_, hasAllOf := rec.get("allOf")
			solo := c.class != "" && len(alts) == 1 && alts[0] == "object" && nullable != true && !hasOneOf && !hasAnyOf && !hasAllOf
			var docs []func([]*tsDoc) *tsDoc
			for _, t := range alts {
				switch t {
				case "array":
					docs = append(docs, r.planArray(rec, c, add))
				case "object":
					class := ""
					if solo {
						class = c.class
					}
					docs = append(docs, r.planObject(rec, c, class, add))
				default:
					d := r.scalar(t)
					docs = append(docs, func([]*tsDoc) *tsDoc { return d })
				}
			}
			parts = append(parts, func(children []*tsDoc) *tsDoc {
				ds := make([]*tsDoc, len(docs))
				for i, part := range docs {
					ds[i] = part(children)
				}
				return r.union(ds)
			})
		}
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		v, ok := rec.get(k)
		if !ok {
			continue
		}
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			d := r.unknown()
			parts = append(parts, func([]*tsDoc) *tsDoc { return d })
			continue
		}
		from := len(f.children)
		for i, b := range list {
			add(b, c.indent, c.hint+"Variant"+strconv.Itoa(i+1))
		}
		to := len(f.children)
		parts = append(parts, func(children []*tsDoc) *tsDoc {
			d := r.union(children[from:to])
			if d == nil && loose == nil {
				loose = r.join(children[from:to])
			}
			return d
		})
	}
	if v, ok := rec.get("allOf"); ok {
		list, ok := v.([]any)
		if !ok || len(list) == 0 {
			d := r.unknown()
			parts = append(parts, func([]*tsDoc) *tsDoc { return d })
		}
		for i, b := range list {
			at := add(b, c.indent, c.hint+"Part"+strconv.Itoa(i+1))
			parts = append(parts, func(children []*tsDoc) *tsDoc { return children[at] })
		}
	}
	nullable, _ := rec.get("nullable")
	f.combine = func(children []*tsDoc) *tsDoc {
		ds := make([]*tsDoc, 0, len(parts))
		for _, part := range parts {
			ds = append(ds, part(children))
		}
		d := r.intersect(ds)
		if d == nil {
			d = loose
		}
		if d != nil && nullable == true {
			d = r.union([]*tsDoc{d, r.scalar("null")})
		}
		return d
	}
	if len(f.children) == 0 {
		return nil, f.combine(nil)
	}
	return f, nil
}

// typeAlternatives is the node's type names: its type (a string or an
// array of them), else object when it declares properties, else array
// when it declares items; none when it says nothing of its type.
func (r *fullRenderer) typeAlternatives(rec tsRecord) []string {
	if t, ok := rec.get("type"); ok {
		switch x := t.(type) {
		case string:
			return []string{x}
		case []any:
			alts := make([]string, 0, len(x))
			for _, v := range x {
				s, _ := v.(string) // not a string: "", an unknown type
				alts = append(alts, s)
			}
			if len(alts) == 0 {
				return []string{""}
			}
			return alts
		}
		return []string{""}
	}
	for _, k := range []string{"properties", "additionalProperties", "patternProperties"} {
		if _, ok := rec.get(k); ok {
			return []string{"object"}
		}
	}
	for _, k := range []string{"items", "prefixItems"} {
		if _, ok := rec.get(k); ok {
			return []string{"array"}
		}
	}
	return nil
}

// planArray plans an array alternative: T[] from items, JsonValue[] (any[])
// without, unknown[] for a draft-07 tuple (items as a list).
func (r *fullRenderer) planArray(rec tsRecord, c fullChild, add func(any, int, string) int) func([]*tsDoc) *tsDoc {
	items, ok := rec.get("items")
	if !ok {
		return func([]*tsDoc) *tsDoc { return r.array(nil) }
	}
	if _, isList := items.([]any); isList {
		return func([]*tsDoc) *tsDoc { return r.array(r.unknown()) }
	}
	at := add(items, c.indent, c.hint+"Item")
	return func(children []*tsDoc) *tsDoc { return r.array(children[at]) }
}

// planObject plans an object alternative: its properties, in declaration
// order, and a schema-valued additionalProperties.
func (r *fullRenderer) planObject(rec tsRecord, c fullChild, class string, add func(any, int, string) int) func([]*tsDoc) *tsDoc {
	var props tsRecord
	if pv, ok := rec.get("properties"); ok {
		var isRec bool
		if props, isRec = tsAsRecord(pv); !isRec {
			return func([]*tsDoc) *tsDoc { return r.unknown() }
		}
	}
	keys := props.keys()
	required := map[string]bool{}
	if rv, ok := rec.get("required"); ok {
		list, _ := rv.([]any)
		for _, n := range list {
			if s, ok := n.(string); ok {
				required[s] = true
			}
		}
	}
	_, patterns := rec.get("patternProperties")
	ap, _ := rec.get("additionalProperties")
	closed := ap == false && !patterns
	_, apRec := tsAsRecord(ap)
	apAt := -1

	// A Lua class is named before its children are planned, so classes are
	// declared in pre-order.
	slot := -1
	if r.lang == fullLua && (len(keys) > 0 || closed) {
		if class == "" {
			hint := c.hint
			if len(hint) > luaMaxClassName {
				hint = r.base
			}
			class = r.namer.claim(hint)
			r.claimed = append(r.claimed, class)
		}
		slot = len(r.decls)
		r.decls = append(r.decls, nil)
	}
	stem := c.hint
	if class != "" {
		stem = class
	}
	at := make([]int, len(keys))
	for i, k := range keys {
		child, _ := props.get(k)
		if r.lang == fullLua {
			key := luaPascal(k)
			if key == "" {
				key = "Field"
			}
			at[i] = add(child, c.indent+1, stem+key)
		} else {
			at[i] = add(child, c.indent+1, "")
		}
	}
	if apRec {
		apAt = add(ap, c.indent+1, stem+"Value")
	}
	return func(children []*tsDoc) *tsDoc {
		var index *tsDoc
		if apAt >= 0 {
			index = children[apAt]
		}
		if r.lang == fullLua {
			return r.luaObject(props, keys, at, required, closed, apAt >= 0, index, class, slot, children)
		}
		return r.tsObject(props, keys, at, required, closed, apAt >= 0, index, c.indent, children)
	}
}

// tsObject is an object alternative in TypeScript: the members as §1.8
// writes them, then "& Record<string, JsonValue>" when open, or
// "& { [key: string]: T }" for a schema-valued additionalProperties.
func (r *fullRenderer) tsObject(props tsRecord, keys []string, at []int, required map[string]bool, closed, indexed bool, index *tsDoc, indent int, children []*tsDoc) *tsDoc {
	var signature *tsDoc
	switch {
	case indexed && index != nil:
		signature = tsNewDoc(tsText("{ [key: string]: "), tsSub(index), tsText(" }"))
	case !closed:
		signature = tsLeaf("Record<string, JsonValue>")
	}
	if len(keys) == 0 {
		if signature == nil {
			return tsLeaf("Record<string, never>")
		}
		return signature
	}
	parts := []tsPart{tsText("{")}
	for i, k := range keys {
		key, ok := tsKey(k)
		if !ok {
			return r.unknown()
		}
		if prop, ok := tsAsRecord(mustGet(props, k)); ok {
			if desc, _ := prop.get("description"); desc != nil {
				if line := tsDocLine(desc, indent+1); line != "" {
					parts = append(parts, tsText("\n"+line[:len(line)-1]))
				}
			}
		}
		opt := "?"
		if required[k] {
			opt = ""
		}
		parts = append(parts, tsText("\n"+tsPad(indent+1)+key+opt+": "), tsSub(r.docOr(children[at[i]])), tsText(";"))
	}
	parts = append(parts, tsText("\n"+tsPad(indent)+"}"))
	declared := tsNewDoc(parts...)
	if signature == nil {
		return declared
	}
	return tsNewDoc(tsSub(declared), tsText(" & "), tsSub(signature))
}

// luaObject is an object alternative in Lua: a class as the subset's
// renderer writes it (extending table<string, T> for a schema-valued
// additionalProperties), or table<string, T> without properties.
func (r *fullRenderer) luaObject(props tsRecord, keys []string, at []int, required map[string]bool, closed, indexed bool, index *tsDoc, class string, slot int, children []*tsDoc) *tsDoc {
	value := r.docOr(index)
	if slot < 0 {
		return tsNewDoc(tsText("table<string, "), tsSub(value), tsText(">"))
	}
	head := []tsPart{tsText("---@class " + class)}
	if !closed {
		head = append(head, tsText(": table<string, "), tsSub(value), tsText(">"))
	}
	parts := head
	for i, k := range keys {
		key := k
		if !luaIsName(k) {
			key = "[" + luaQuote(k) + "]"
		}
		if !required[k] {
			key += "?"
		}
		parts = append(parts, tsText("\n---@field "+key+" "), tsSub(r.docOr(children[at[i]])))
		if prop, ok := tsAsRecord(mustGet(props, k)); ok {
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
	}
	r.decls[slot] = tsNewDoc(parts...)
	return tsLeaf(class)
}

func mustGet(r tsRecord, k string) any {
	v, _ := r.get(k)
	return v
}

// ref is a $ref's type: the named type of a "#/$defs/X" or
// "#/definitions/X" the root declares, queued for declaration the first
// time; unknown for any other reference.
func (r *fullRenderer) ref(v any) *tsDoc {
	id, schema, ok := r.resolve(v)
	if !ok {
		return r.unknown()
	}
	// A chain of entries that are only $refs and comes back to where it
	// started names no type at all (TypeScript rejects the aliases).
	seen := map[string]bool{id: true}
	for next := schema; ; {
		if r.visits++; r.visits > fullMaxNodes {
			r.failed = true
			return r.unknown()
		}
		rec, isRec := tsAsRecord(next)
		if !isRec {
			break
		}
		nv, isRef := rec.get("$ref")
		if !isRef {
			break
		}
		nid, nschema, ok := r.resolve(nv)
		if !ok {
			break
		}
		if seen[nid] {
			return r.unknown()
		}
		seen[nid] = true
		next = nschema
	}
	name, ok := r.defs[id]
	if !ok {
		name = r.namer.claim(r.base + "_" + fullDefIdent(id[strings.IndexByte(id, '/')+1:]))
		r.claimed = append(r.claimed, name)
		r.defs[id] = name
		r.queue = append(r.queue, fullDef{name: name, schema: schema})
	}
	return tsLeaf(name)
}

// resolve finds the entry a "#/$defs/X" or "#/definitions/X" names in the
// root: its id ("$defs/X") and schema.
func (r *fullRenderer) resolve(v any) (string, any, bool) {
	s, _ := v.(string)
	var container, key string
	for _, c := range []string{"$defs", "definitions"} {
		if rest, ok := strings.CutPrefix(s, "#/"+c+"/"); ok && !strings.Contains(rest, "/") {
			container, key = c, strings.NewReplacer("~1", "/", "~0", "~").Replace(rest)
			break
		}
	}
	if container == "" {
		return "", nil, false
	}
	defs, ok := tsAsRecord(mustGet(r.root, container))
	if !ok {
		return "", nil, false
	}
	schema, ok := defs.get(key)
	if !ok {
		return "", nil, false
	}
	return container + "/" + key, schema, true
}

// fullDefIdent is a $defs key as part of a name: each byte outside
// [A-Za-z0-9_] is "_", cut to fullMaxDefName bytes; "Def" when empty.
func fullDefIdent(key string) string {
	var b strings.Builder
	for i := 0; i < len(key) && b.Len() < fullMaxDefName; i++ {
		c := key[i]
		if c == '_' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
			b.WriteByte(c)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "Def"
	}
	return b.String()
}

func (r *fullRenderer) unknown() *tsDoc {
	if r.lang == fullLua {
		return tsLeaf("any")
	}
	return tsLeaf("unknown")
}

func (r *fullRenderer) never() *tsDoc {
	if r.lang == fullLua {
		return tsLeaf("nil")
	}
	return tsLeaf("never")
}

// docOr is d, or for no constraint JsonValue (any in Lua).
func (r *fullRenderer) docOr(d *tsDoc) *tsDoc {
	if d != nil {
		return d
	}
	if r.lang == fullLua {
		return tsLeaf("any")
	}
	return tsLeaf("JsonValue")
}

func (r *fullRenderer) scalar(t string) *tsDoc {
	switch t {
	case "string", "number", "boolean":
		return tsLeaf(t)
	case "integer":
		if r.lang == fullLua {
			return tsLeaf("integer")
		}
		return tsLeaf("number")
	case "null":
		if r.lang == fullLua {
			return tsLeaf(luaNullType)
		}
		return tsLeaf("null")
	}
	return r.unknown()
}

// literal is a scalar's literal type; unknown for an array or object.
func (r *fullRenderer) literal(v any) *tsDoc {
	switch v.(type) {
	case nil, bool, float64, string:
	default:
		return r.unknown()
	}
	var s string
	var ok bool
	if r.lang == fullLua {
		s, ok = luaLiteral(v)
	} else {
		s, ok = tsLiteral(v)
	}
	if !ok {
		return r.unknown()
	}
	return tsLeaf(s)
}

// enum is the union of its literals; unknown when it is not a non-empty list.
func (r *fullRenderer) enum(v any) *tsDoc {
	list, ok := v.([]any)
	if !ok || len(list) == 0 {
		return r.unknown()
	}
	ds := make([]*tsDoc, len(list))
	for i, x := range list {
		ds[i] = r.literal(x)
	}
	return r.union(ds)
}

func (r *fullRenderer) array(item *tsDoc) *tsDoc {
	item = r.docOr(item)
	if item.bar {
		return tsNewDoc(tsText("("), tsSub(item), tsText(")[]"))
	}
	return tsNewDoc(tsSub(item), tsText("[]"))
}

// union joins alternatives with " | " ("|" in Lua), as §1.8 joins oneOf
// (a branch without constraint is JsonValue). When no branch constrains,
// neither does the union (nil); an unknown branch makes it unknown.
func (r *fullRenderer) union(ds []*tsDoc) *tsDoc {
	unknown := r.unknown()
	var kept []*tsDoc
	constrained := false
	for _, d := range ds {
		if d != nil {
			constrained = true
			if fullIsLeaf(d, unknown.parts[0].s) {
				return unknown
			}
		}
		kept = append(kept, r.docOr(d))
	}
	if !constrained {
		return nil
	}
	return r.join(kept)
}

// join writes alternatives joined by " | " ("|" in Lua), no constraint as
// JsonValue [any]; one alternative is itself.
func (r *fullRenderer) join(ds []*tsDoc) *tsDoc {
	kept := make([]*tsDoc, len(ds))
	for i, d := range ds {
		kept[i] = r.docOr(d)
	}
	if len(kept) == 1 {
		return kept[0]
	}
	sep := " | "
	if r.lang == fullLua {
		sep = "|"
	}
	parts := make([]tsPart, 0, 2*len(kept))
	for i, d := range kept {
		if i > 0 {
			parts = append(parts, tsText(sep))
		}
		parts = append(parts, tsSub(d))
	}
	return tsNewDoc(parts...)
}

// intersect is the type every part constrains: the one part there is,
// else (TS) their " & ", a part holding "|" or "&" in parentheses; Lua has
// no intersection, so there it is any.
func (r *fullRenderer) intersect(ds []*tsDoc) *tsDoc {
	var kept []*tsDoc
	for _, d := range ds {
		if d != nil {
			kept = append(kept, d)
		}
	}
	switch {
	case len(kept) == 0:
		return nil
	case len(kept) == 1:
		return kept[0]
	case r.lang == fullLua:
		return tsLeaf("any")
	}
	parts := make([]tsPart, 0, 3*len(kept))
	for i, d := range kept {
		if i > 0 {
			parts = append(parts, tsText(" & "))
		}
		if d.bar {
			parts = append(parts, tsText("("), tsSub(d), tsText(")"))
		} else {
			parts = append(parts, tsSub(d))
		}
	}
	return tsNewDoc(parts...)
}

// fullIsLeaf reports whether d is exactly the text s.
func fullIsLeaf(d *tsDoc, s string) bool {
	return len(d.parts) == 1 && d.parts[0].d == nil && d.parts[0].s == s
}
