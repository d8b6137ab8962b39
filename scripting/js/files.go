package js

import (
	"path"
	"regexp"
	"strings"
)

// moduleExts are the extensions of the files an import loads, in the order
// the host tries them.
var moduleExts = []string{".ts", ".js", ".mjs"}

// IsDeclaration reports whether the file at path is a TypeScript
// declaration file (*.d.ts): types for editors, not a plugin.
func (h *Host) IsDeclaration(path string) bool { return strings.HasSuffix(path, ".d.ts") }

// ModuleExtensions returns .ts, .js and .mjs.
func (h *Host) ModuleExtensions() []string { return append([]string(nil), moduleExts...) }

// The import forms Imports finds: require("./x"), import("./x"),
// import … from "./x", export … from "./x", import "./x". A call of require
// or import whose argument is not a literal is a dynamic import.
var (
	jsCallLit = regexp.MustCompile(`\b(?:require|import)\s*\(\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)'|` + "`([^`$\\\\\\n]*)`" + `)\s*\)`)
	jsCall    = regexp.MustCompile(`\b(?:require|import)\s*\(`)
	jsFrom    = regexp.MustCompile(`\b(?:from|import)\s*(?:"([^"\\\n]*)"|'([^'\\\n]*)')`)
)

// Imports lists the specifiers src's imports and requires name literally
// (host modules included), and reports whether a require or import() call
// has an argument that is not a literal. It scans the text (comments and
// strings alike), so it may find more imports than run, never fewer
// literal ones.
func (h *Host) Imports(rel string, src []byte) (specs []string, dynamic bool) {
	lits := jsCallLit.FindAllSubmatch(src, -1)
	for _, m := range lits {
		specs = append(specs, firstGroup(m))
	}
	for _, m := range jsFrom.FindAllSubmatch(src, -1) {
		specs = append(specs, firstGroup(m))
	}
	return specs, len(jsCall.FindAllIndex(src, -1)) > len(lits)
}

// firstGroup returns the first group of a match that matched.
func firstGroup(m [][]byte) string {
	for _, g := range m[1:] {
		if g != nil {
			return string(g)
		}
	}
	return ""
}

// ImportCandidates lists the files an import of spec by the file from may
// load, by the host's resolution: a relative path (".", "..", "./…",
// "../…") inside the scripts directory, tried as written, as x.ts for
// x.js, with each module extension appended and as a folder's index; a
// specifier ending in "/" only as a folder. Host modules ("dsh", "dsh/fs"),
// bare names and paths leading outside give none.
func (h *Host) ImportCandidates(from, spec string) []string {
	if spec != "." && spec != ".." && !strings.HasPrefix(spec, "./") && !strings.HasPrefix(spec, "../") {
		return nil
	}
	base := path.Join(path.Dir(from), spec)
	if base == ".." || strings.HasPrefix(base, "../") {
		return nil
	}
	var out []string
	if spec != "." && spec != ".." && !strings.HasSuffix(spec, "/") {
		out = append(out, base)
		if strings.HasSuffix(base, ".js") {
			out = append(out, strings.TrimSuffix(base, ".js")+".ts")
		}
		for _, ext := range moduleExts {
			out = append(out, base+ext)
		}
	}
	for _, ext := range moduleExts {
		out = append(out, path.Join(base, "index"+ext))
	}
	return out
}
