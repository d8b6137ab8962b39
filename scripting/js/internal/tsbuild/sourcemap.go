package tsbuild

import (
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
)

// SourceMap is a parsed version 3 source map, as esbuild writes it for one
// transformed file. Its positions are the format's own: 0-based lines and
// 0-based columns counted in UTF-16 code units. [Output.Original] converts
// from and to the 1-based byte positions goja and esbuild diagnostics use.
//
// A SourceMap is immutable after [ParseSourceMap] and safe for concurrent
// use.
type SourceMap struct {
	// Raw is the JSON text the map was parsed from (without sourcesContent:
	// [Transform] keeps the original source itself).
	Raw []byte
	// Sources are the original file names, as the map lists them.
	Sources []string
	// Names are the original identifiers the mappings refer to.
	Names []string

	lines [][]segment // per generated line, sorted by generated column
}

// segment is one decoded mapping. src is -1 for a segment that maps its
// generated column to no original position.
type segment struct {
	genCol, src, line, col, name int32
}

// Mapping is the original position of a generated one, in the source map's
// units (0-based line, 0-based UTF-16 column).
type Mapping struct {
	Source    string // the original file, from [SourceMap.Sources]
	Line, Col int
	Name      string // the original identifier, if the map names one
}

// ParseSourceMap parses a version 3 source map. Index maps (with
// "sections") are not supported: esbuild's transform never writes them.
func ParseSourceMap(raw []byte) (*SourceMap, error) {
	var j struct {
		Version  int             `json:"version"`
		Sources  []string        `json:"sources"`
		Names    []string        `json:"names"`
		Mappings string          `json:"mappings"`
		Sections json.RawMessage `json:"sections"`
	}
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	if j.Version != 3 {
		return nil, fmt.Errorf("source map: version %d, want 3", j.Version)
	}
	if j.Sections != nil {
		return nil, errors.New("source map: index maps (sections) are not supported")
	}
	lines, err := decodeMappings(j.Mappings, len(j.Sources), len(j.Names))
	if err != nil {
		return nil, err
	}
	return &SourceMap{Raw: raw, Sources: j.Sources, Names: j.Names, lines: lines}, nil
}

// Lookup returns the original position of the generated position (line,
// col), both 0-based, col in UTF-16 code units: that of the last mapping on
// the line at or before col, or of the line's first mapping when col lies
// before it (indentation). It reports false when the line has no mappings or
// the chosen one maps to nothing.
func (m *SourceMap) Lookup(line, col int) (Mapping, bool) {
	if m == nil || line < 0 || line >= len(m.lines) || len(m.lines[line]) == 0 {
		return Mapping{}, false
	}
	segs := m.lines[line]
	i := sort.Search(len(segs), func(i int) bool { return int(segs[i].genCol) > col }) - 1
	if i < 0 {
		i = 0
	}
	s := segs[i]
	if s.src < 0 {
		return Mapping{}, false
	}
	mp := Mapping{Source: m.Sources[s.src], Line: int(s.line), Col: int(s.col)}
	if s.name >= 0 {
		mp.Name = m.Names[s.name]
	}
	return mp, true
}

// decodeMappings decodes the "mappings" field: lines separated by ';',
// segments by ',', each segment 1, 4 or 5 base64 VLQ fields, every field
// relative to the same field of the previous segment (the generated column
// only within a line).
func decodeMappings(s string, nSources, nNames int) ([][]segment, error) {
	var (
		lines   [][]segment
		cur     []segment
		genCol  int64
		src     int64
		line    int64
		col     int64
		name    int64
		fields  [5]int64
		nfields int
		sorted  = true
	)
	bad := func(format string, args ...any) error {
		return fmt.Errorf("source map: mappings: "+format, args...)
	}
	endSegment := func() error {
		if nfields == 0 {
			return nil
		}
		if nfields != 1 && nfields != 4 && nfields != 5 {
			return bad("a segment has %d fields", nfields)
		}
		const maxPos = 1<<31 - 1
		genCol += fields[0]
		if genCol < 0 || genCol > maxPos {
			return bad("a generated column is out of range")
		}
		seg := segment{genCol: int32(genCol), src: -1, name: -1}
		if nfields >= 4 {
			src += fields[1]
			line += fields[2]
			col += fields[3]
			if src < 0 || src >= int64(nSources) || line < 0 || line > maxPos || col < 0 || col > maxPos {
				return bad("a segment points outside the sources")
			}
			seg.src, seg.line, seg.col = int32(src), int32(line), int32(col)
		}
		if nfields == 5 {
			name += fields[4]
			if name < 0 || name >= int64(nNames) {
				return bad("a segment points outside the names")
			}
			seg.name = int32(name)
		}
		if len(cur) > 0 && cur[len(cur)-1].genCol > seg.genCol {
			sorted = false
		}
		cur = append(cur, seg)
		nfields = 0
		return nil
	}
	endLine := func() {
		if !sorted {
			sort.SliceStable(cur, func(i, j int) bool { return cur[i].genCol < cur[j].genCol })
		}
		lines = append(lines, cur)
		cur, genCol, sorted = nil, 0, true
	}
	for i := 0; i < len(s); {
		switch s[i] {
		case ';':
			if err := endSegment(); err != nil {
				return nil, err
			}
			endLine()
			i++
			continue
		case ',':
			if err := endSegment(); err != nil {
				return nil, err
			}
			i++
			continue
		}
		v, n, err := decodeVLQ(s[i:])
		if err != nil {
			return nil, bad("%v at offset %d", err, i)
		}
		if nfields == len(fields) {
			return nil, bad("a segment has more than 5 fields")
		}
		fields[nfields] = v
		nfields++
		i += n
	}
	if err := endSegment(); err != nil {
		return nil, err
	}
	endLine()
	return lines, nil
}

// decodeVLQ decodes one base64 VLQ number from the start of s, returning it
// and the number of bytes it took. Each base64 digit carries 5 value bits and
// a continuation bit (0x20); the lowest bit of the first digit is the sign.
func decodeVLQ(s string) (int64, int, error) {
	var v uint64
	shift := uint(0)
	for i := 0; i < len(s); i++ {
		d := base64Value(s[i])
		if d < 0 {
			return 0, 0, fmt.Errorf("invalid base64 digit %q", s[i])
		}
		v |= uint64(d&0x1f) << shift
		if d&0x20 == 0 {
			n := int64(v >> 1)
			if v&1 != 0 {
				n = -n
			}
			return n, i + 1, nil
		}
		shift += 5
		if shift > 35 {
			return 0, 0, errors.New("number too large")
		}
	}
	return 0, 0, errors.New("truncated number")
}

// base64Value is the value of a base64 digit, or -1.
func base64Value(c byte) int {
	switch {
	case c >= 'A' && c <= 'Z':
		return int(c - 'A')
	case c >= 'a' && c <= 'z':
		return int(c-'a') + 26
	case c >= '0' && c <= '9':
		return int(c-'0') + 52
	case c == '+':
		return 62
	case c == '/':
		return 63
	}
	return -1
}

// insertion is text inserted into a generated line: n UTF-16 units at
// column col (0-based). A mapping that starts exactly at col stays where it
// is when the text opens the token there (after is false), and moves with
// the rest of the line when the text closes the token before it.
type insertion struct {
	col, n int
	after  bool
}

// withInsertions returns m for generated code into which the texts of ins
// (by 0-based generated line) were inserted: the mappings after each
// insertion move right, and Raw is written anew. m is left as it is.
func (m *SourceMap) withInsertions(ins map[int][]insertion) (*SourceMap, error) {
	lines := make([][]segment, len(m.lines))
	copy(lines, m.lines)
	for line, list := range ins {
		if line < 0 || line >= len(lines) {
			continue
		}
		segs := append([]segment(nil), lines[line]...)
		for i := range segs {
			col, delta := int(segs[i].genCol), 0
			for _, in := range list {
				if in.col < col || in.col == col && in.after {
					delta += in.n
				}
			}
			segs[i].genCol = int32(col + delta)
		}
		lines[line] = segs
	}
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(m.Raw, &fields); err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	mappings, err := json.Marshal(encodeMappings(lines))
	if err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	fields["mappings"] = mappings
	raw, err := json.Marshal(fields)
	if err != nil {
		return nil, fmt.Errorf("source map: %w", err)
	}
	return &SourceMap{Raw: raw, Sources: m.Sources, Names: m.Names, lines: lines}, nil
}

// encodeMappings is the inverse of decodeMappings.
func encodeMappings(lines [][]segment) string {
	var b strings.Builder
	var src, line, col, name int64
	for i, segs := range lines {
		if i > 0 {
			b.WriteByte(';')
		}
		var genCol int64
		for j, s := range segs {
			if j > 0 {
				b.WriteByte(',')
			}
			writeVLQ(&b, int64(s.genCol)-genCol)
			genCol = int64(s.genCol)
			if s.src < 0 {
				continue
			}
			writeVLQ(&b, int64(s.src)-src)
			writeVLQ(&b, int64(s.line)-line)
			writeVLQ(&b, int64(s.col)-col)
			src, line, col = int64(s.src), int64(s.line), int64(s.col)
			if s.name >= 0 {
				writeVLQ(&b, int64(s.name)-name)
				name = int64(s.name)
			}
		}
	}
	return b.String()
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// writeVLQ writes one base64 VLQ number (see decodeVLQ).
func writeVLQ(b *strings.Builder, n int64) {
	v := uint64(n) << 1
	if n < 0 {
		v = uint64(-n)<<1 | 1
	}
	for {
		d := v & 0x1f
		v >>= 5
		if v != 0 {
			d |= 0x20
		}
		b.WriteByte(base64Digits[d])
		if v == 0 {
			return
		}
	}
}
