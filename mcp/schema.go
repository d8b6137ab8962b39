package mcp

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"regexp/syntax"
	"slices"
	"strconv"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

// An imported tool keeps its JSON Schema as the server sent it, in the
// dialect its "$schema" names (draft 2020-12 when it names none; draft-07,
// 2019-09, -06 and -04 as well): dsh checks its arguments with
// github.com/santhosh-tekuri/jsonschema/v6, compiled once per listing, and
// serves the schema unchanged. The bounds:
//
//   - a schema over MaxSchemaBytes of JSON text, or nesting objects and
//     arrays deeper than MaxSchemaDepth, is not compiled, and one whose
//     $refs unfold it into more than MaxSchemaApplications subschemas is
//     not kept: the tool is a Diagnostic;
//   - nothing is loaded from outside the schema: a "$ref" (or a "$schema")
//     to a URL other than the dialects' own metaschemas, which the library
//     embeds, makes the tool a Diagnostic, never a network or file read;
//   - a "pattern" (or "patternProperties" key, or "format": "regex") is
//     matched with Go's regexp, in time linear in the string: a pattern
//     that Go's syntax does not take (lookaround, backreferences), or that
//     compiles to more than maxPatternInsts instructions, is not checked
//     by dsh, and neither is a string for which instructions × bytes
//     exceeds maxPatternWork (about 0.7 s of matching at worst); the
//     server still checks its own arguments;
//   - "format" is asserted as the dialect says (draft-07 and older: yes;
//     2019-09 and 2020-12: an annotation), content keywords never;
//   - a call's violations are at most maxViolations, each on one line of
//     at most maxViolationText bytes.

// MaxSchemaBytes bounds an imported tool's schema, as JSON text.
const MaxSchemaBytes = 1 << 20

// MaxSchemaDepth bounds the nesting of an imported tool's schema: objects
// and arrays, the root at depth 1.
const MaxSchemaDepth = 64

// MaxSchemaApplications bounds an imported tool's schema unfolded: each
// "$ref" replaced by its target (a recursive one counted once, as it
// applies a level deeper in the value each time). It is the most
// subschemas one value of the arguments may be checked against: "allOf"
// of two "$ref"s to the next definition, 30 definitions deep, is 2 KiB of
// JSON and 2^31 checks of every value.
const MaxSchemaApplications = 50_000

const (
	// maxPatternInsts is the largest compiled pattern dsh matches.
	maxPatternInsts = 1000
	// maxPatternWork bounds one match: instructions × string bytes.
	maxPatternWork = 1 << 26
	// maxViolations is the most violations a call reports.
	maxViolations = 8
	// maxViolationText bounds one violation's text, in bytes.
	maxViolationText = 512
)

// schemaBase is the URL an imported schema is compiled as: a relative
// "$ref" to another document resolves against it, and is refused.
const schemaBase = "mem:///tool.json"

// argSchema is an imported tool's input schema, compiled.
type argSchema struct {
	schema *jsonschema.Schema
}

// importSchema reads a schema the SDK decoded: its JSON value for dsh
// (served and shown unchanged, "$schema" included) and, when compile is
// set, the schema compiled for validation.
func importSchema(schema any, compile bool) (any, *argSchema, error) {
	text, err := json.Marshal(schema)
	if err != nil {
		return nil, nil, err
	}
	if len(text) > MaxSchemaBytes {
		return nil, nil, fmt.Errorf("the schema is %d bytes of JSON, more than the %d dsh compiles", len(text), MaxSchemaBytes)
	}
	if depth := jsonDepth(text); depth > MaxSchemaDepth {
		return nil, nil, fmt.Errorf("the schema nests %d deep, more than the %d dsh compiles", depth, MaxSchemaDepth)
	}
	raw, err := dsl.Unmarshal(text)
	if err != nil {
		return nil, nil, err
	}
	if !compile {
		return raw, nil, nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(text))
	if err != nil {
		return nil, nil, err
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	c.UseLoader(noLoader{})
	c.UseRegexpEngine(boundedRegexp)
	if err := c.AddResource(schemaBase, doc); err != nil {
		return nil, nil, compileError(err)
	}
	compiled, err := c.Compile(schemaBase)
	if err != nil {
		return nil, nil, compileError(err)
	}
	if n := unfoldedSize(compiled); n > MaxSchemaApplications {
		return nil, nil, fmt.Errorf("its $refs expand it to more than %d subschemas, which validating one value could apply", MaxSchemaApplications)
	}
	return raw, &argSchema{schema: compiled}, nil
}

// errNoLoad is why a schema's reference to another document is refused.
var errNoLoad = errors.New("dsh loads no schema from a network or a file")

// noLoader refuses every URL: an imported schema is self-contained.
type noLoader struct{}

func (noLoader) Load(string) (any, error) { return nil, errNoLoad }

// compileError is the reason a schema does not compile, on one line.
func compileError(err error) error {
	var load *jsonschema.LoadURLError
	if errors.As(err, &load) {
		return fmt.Errorf("it refers to %s, outside the schema: %v", display.QuoteMax(load.URL, 256), errNoLoad)
	}
	var meta *jsonschema.SchemaValidationError
	if errors.As(err, &meta) {
		var ve *jsonschema.ValidationError
		if errors.As(meta.Err, &ve) {
			vs := violations(ve, "schema")
			return fmt.Errorf("not a valid JSON Schema: %s", strings.Join(vs, "; "))
		}
	}
	return errors.New(display.Line(err.Error(), display.MaxText))
}

// validate returns the violations of args (a dsh JSON value) against s,
// or none.
func (s *argSchema) validate(args any) []string {
	v, ok := instance(args)
	if !ok { // not in dsh's form: a snapshot is, or says why not
		snap, err := dsl.SnapshotAt("arguments", args)
		if err != nil {
			return []string{display.Line(err.Error(), maxViolationText)}
		}
		v, _ = instance(snap)
	}
	err := s.schema.Validate(v)
	if err == nil {
		return nil
	}
	var ve *jsonschema.ValidationError
	if !errors.As(err, &ve) {
		return []string{"arguments: " + display.Line(err.Error(), maxViolationText)}
	}
	return violations(ve, "arguments")
}

// instance is a dsh JSON value in the validator's form: objects as maps,
// arrays copied, numbers float64; false for a value that is not JSON.
func instance(v any) (any, bool) {
	switch v := v.(type) {
	case nil, bool, float64, string:
		return v, true
	case *dsl.Object:
		m := make(map[string]any, v.Len())
		for i := range v.Len() {
			k, x := v.At(i)
			c, ok := instance(x)
			if !ok {
				return nil, false
			}
			m[k] = c
		}
		return m, true
	case []any:
		a := make([]any, len(v))
		for i, x := range v {
			c, ok := instance(x)
			if !ok {
				return nil, false
			}
			a[i] = c
		}
		return a, true
	}
	return nil, false
}

// violations are the leaves of a validation error, each "ROOT/POINTER:
// reason" on one line, ordered by their instance location (the validator
// visits an object's properties in no set order), the same line once; at
// most maxViolations, the last then saying how many more there are.
func violations(ve *jsonschema.ValidationError, root string) []string {
	type leaf struct{ at, line string }
	var leaves []leaf
	var walk func(u *jsonschema.OutputUnit)
	walk = func(u *jsonschema.OutputUnit) {
		if u.Error != nil {
			line := display.Line(root+u.InstanceLocation+": "+u.Error.String(), maxViolationText)
			leaves = append(leaves, leaf{u.InstanceLocation, line})
		}
		for i := range u.Errors {
			walk(&u.Errors[i])
		}
	}
	walk(ve.DetailedOutput())
	slices.SortStableFunc(leaves, func(a, b leaf) int { return strings.Compare(a.at, b.at) })
	var out []string
	more := 0
	for i, l := range leaves {
		switch {
		case i > 0 && leaves[i-1].line == l.line:
		case len(out) < maxViolations:
			out = append(out, l.line)
		default:
			more++
		}
	}
	if len(out) == 0 { // not expected: every failure has a leaf
		out = append(out, root+": "+display.Line(ve.Error(), maxViolationText))
	}
	if more > 0 {
		out = append(out, "and "+strconv.Itoa(more)+" more")
	}
	return out
}

// unfoldedSize is the size of s with its references unfolded, a reference
// back to a schema being unfolded counting 1, and sizes above
// MaxSchemaApplications counting as MaxSchemaApplications+1.
func unfoldedSize(s *jsonschema.Schema) int {
	memo := map[*jsonschema.Schema]int{}
	open := map[*jsonschema.Schema]bool{}
	var size func(s *jsonschema.Schema) int
	size = func(s *jsonschema.Schema) int {
		if s == nil {
			return 0
		}
		if open[s] {
			return 1
		}
		if n, ok := memo[s]; ok {
			return n
		}
		open[s] = true
		n := 1
		add := func(subs ...*jsonschema.Schema) {
			for _, sub := range subs {
				n = min(n+size(sub), MaxSchemaApplications+1)
			}
		}
		addAny := func(v any) { // nil, a bool, a *Schema or a []*Schema
			switch v := v.(type) {
			case *jsonschema.Schema:
				add(v)
			case []*jsonschema.Schema:
				add(v...)
			}
		}
		add(s.Ref, s.RecursiveRef, s.Not, s.If, s.Then, s.Else, s.PropertyNames,
			s.UnevaluatedProperties, s.Contains, s.Items2020, s.UnevaluatedItems, s.ContentSchema)
		if s.DynamicRef != nil {
			add(s.DynamicRef.Ref)
		}
		add(s.AllOf...)
		add(s.AnyOf...)
		add(s.OneOf...)
		add(s.PrefixItems...)
		for _, sub := range s.Properties {
			add(sub)
		}
		for _, sub := range s.PatternProperties {
			add(sub)
		}
		for _, sub := range s.DependentSchemas {
			add(sub)
		}
		for _, dep := range s.Dependencies {
			addAny(dep)
		}
		addAny(s.AdditionalProperties)
		addAny(s.Items)
		addAny(s.AdditionalItems)
		delete(open, s)
		memo[s] = n
		return n
	}
	return size(s)
}

// jsonDepth is the deepest nesting of arrays and objects in the JSON text.
func jsonDepth(text []byte) int {
	depth, deepest := 0, 0
	in := false
	for i := 0; i < len(text); i++ {
		c := text[i]
		switch {
		case in && c == '\\':
			i++
		case c == '"':
			in = !in
		case in:
		case c == '{' || c == '[':
			depth++
			deepest = max(deepest, depth)
		case c == '}' || c == ']':
			depth--
		}
	}
	return deepest
}

// boundedRegexp is the regexp engine of imported schemas: Go's, linear in
// the string, bounded in the pattern's size. A pattern it cannot or will
// not match is not checked (it matches every string); it is never an error,
// so that a schema written for ECMAScript's regular expressions imports.
func boundedRegexp(pattern string) (jsonschema.Regexp, error) {
	re, err := regexp.Compile(pattern)
	if err != nil {
		return uncheckedRegexp(pattern), nil
	}
	insts := progSize(pattern)
	if insts < 0 || insts > maxPatternInsts {
		return uncheckedRegexp(pattern), nil
	}
	return &linearRegexp{re: re, insts: insts}, nil
}

// progSize is the number of instructions pattern compiles to, or -1.
func progSize(pattern string) int {
	re, err := syntax.Parse(pattern, syntax.Perl)
	if err != nil {
		return -1
	}
	prog, err := syntax.Compile(re.Simplify())
	if err != nil {
		return -1
	}
	return len(prog.Inst)
}

// linearRegexp matches a string when its cost is within maxPatternWork,
// and leaves a longer one unchecked.
type linearRegexp struct {
	re    *regexp.Regexp
	insts int
}

func (r *linearRegexp) String() string { return r.re.String() }

func (r *linearRegexp) MatchString(s string) bool {
	if r.insts > 0 && len(s) > maxPatternWork/r.insts {
		return true
	}
	return r.re.MatchString(s)
}

// uncheckedRegexp is a pattern dsh does not check: it matches every string.
type uncheckedRegexp string

func (r uncheckedRegexp) String() string { return string(r) }

func (uncheckedRegexp) MatchString(string) bool { return true }

// outputSchemas is an imported tool's output contract: the schema the
// engine checks values against (the tool's own, without "$schema", when it
// lies in dsh's enforced subset; else {"type": "object"} when the tool's
// says its values are objects, as MCP requires, so that dsh serve's
// structuredContent is one, or the open schema {}; the server answers for
// the rest) and the schema as declared, served unchanged (nil when the tool
// declares none).
func outputSchemas(schema any) (checked, declared any, err error) {
	if schema == nil {
		return dsl.NewObject(), nil, nil
	}
	if declared, _, err = importSchema(schema, false); err != nil {
		return nil, nil, err
	}
	checked, err = schemaValue(schema)
	if err != nil {
		return nil, nil, err
	}
	if _, err := dsl.Compile(checked); err != nil {
		checked = dsl.NewObject()
		if objectRooted(declared) {
			checked = dsl.NewObject(dsl.Member{Key: "type", Value: "object"})
		}
	}
	return checked, declared, nil
}

// servedOutput is the output schema dsh serve lists for def: the one its
// author declared (an imported tool's, unchanged), else the one the engine
// checks.
func servedOutput(def *engine.Definition) any { return def.Output.DeclaredSchema() }
