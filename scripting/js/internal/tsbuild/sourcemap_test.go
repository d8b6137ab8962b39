package tsbuild

import (
	"strings"
	"testing"
)

func TestVLQNumbersDecode(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		n    int
	}{
		{"A", 0, 1},
		{"C", 1, 1},
		{"D", -1, 1},
		{"e", 15, 1},
		{"f", -15, 1},
		{"gB", 16, 2},
		{"2H", 123, 2},
		{"3H", -123, 2},
		{"+/", 0, 0}, // '+' has the continuation bit, '/' too: truncated
		{"AC", 0, 1}, // only the first number
		{"ggggggC", 1 << 30, 7},
	}
	for _, c := range cases {
		got, n, err := decodeVLQ(c.in)
		if c.n == 0 {
			if err == nil {
				t.Errorf("decodeVLQ(%q) = %d, want an error", c.in, got)
			}
			continue
		}
		if err != nil || got != c.want || n != c.n {
			t.Errorf("decodeVLQ(%q) = %d, %d, %v; want %d, %d", c.in, got, n, err, c.want, c.n)
		}
	}
	for _, bad := range []string{"", "g", "!", "gggggggggC"} {
		if _, _, err := decodeVLQ(bad); err == nil {
			t.Errorf("decodeVLQ(%q) succeeded", bad)
		}
	}
}

func TestASourceMapDecodesIntoLookups(t *testing.T) {
	// Line 0: col 0 -> a.ts 0:0; col 4 -> a.ts 0:4 named "x"; col 8 unmapped.
	// Line 1: empty. Line 2: col 2 -> b.ts 5:1.
	raw := `{"version":3,"sources":["a.ts","b.ts"],"names":["x"],"mappings":"AAAA,IAAIA,I;;ECKH"}`
	m, err := ParseSourceMap([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		line, col int
		want      Mapping
		ok        bool
	}{
		{0, 0, Mapping{"a.ts", 0, 0, ""}, true},
		{0, 3, Mapping{"a.ts", 0, 0, ""}, true},
		{0, 4, Mapping{"a.ts", 0, 4, "x"}, true},
		{0, 7, Mapping{"a.ts", 0, 4, "x"}, true},
		{0, 8, Mapping{}, false},
		{0, 100, Mapping{}, false},
		{1, 0, Mapping{}, false},
		{2, 0, Mapping{"b.ts", 5, 1, ""}, true}, // before the first segment: that segment
		{2, 9, Mapping{"b.ts", 5, 1, ""}, true},
		{3, 0, Mapping{}, false},
		{-1, 0, Mapping{}, false},
	}
	for _, c := range cases {
		got, ok := m.Lookup(c.line, c.col)
		if ok != c.ok || got != c.want {
			t.Errorf("Lookup(%d, %d) = %+v, %v; want %+v, %v", c.line, c.col, got, ok, c.want, c.ok)
		}
	}
	if string(m.Raw) != raw || len(m.Sources) != 2 || len(m.Names) != 1 {
		t.Errorf("map fields: %+v", m)
	}
}

func TestSegmentsOutOfOrderAreSorted(t *testing.T) {
	m, err := ParseSourceMap([]byte(`{"version":3,"sources":["a"],"names":[],"mappings":"IAAC,HAAC"}`))
	if err != nil {
		t.Fatal(err)
	}
	// Segment 1: column 4 -> 0:1; segment 2: column 4-3 = 1 -> 0:2.
	if got, ok := m.Lookup(0, 1); !ok || got.Col != 2 {
		t.Errorf("Lookup(0, 1) = %+v, %v; want the segment at column 1", got, ok)
	}
	if got, ok := m.Lookup(0, 4); !ok || got.Col != 1 {
		t.Errorf("Lookup(0, 4) = %+v, %v; want the segment at column 4", got, ok)
	}
}

func TestBadSourceMapsAreRefused(t *testing.T) {
	cases := map[string]string{
		`not json`: "source map:",
		`{"version":2,"sources":[],"mappings":""}`:                            "version 2",
		`{"version":3,"sections":[],"sources":[],"mappings":""}`:              "index maps",
		`{"version":3,"sources":["a"],"names":[],"mappings":"AC"}`:            "2 fields",
		`{"version":3,"sources":["a"],"names":[],"mappings":"ACAAAA"}`:        "more than 5",
		`{"version":3,"sources":["a"],"names":[],"mappings":"ACAA"}`:          "outside the sources",
		`{"version":3,"sources":["a"],"names":[],"mappings":"AAAAC"}`:         "outside the names",
		`{"version":3,"sources":["a"],"names":[],"mappings":"AAAA,DAAA"}`:     "out of range",
		`{"version":3,"sources":["a"],"names":[],"mappings":"AA!A"}`:          "invalid base64",
		`{"version":3,"sources":["a"],"names":[],"mappings":"AAAg"}`:          "truncated",
		`{"version":3,"sources":["a"],"names":[],"mappings":"AAD"}`:           "3 fields",
		`{"version":3,"sources":["a"],"names":[],"mappings":"AAAA;AAAD;;AA"}`: "outside the sources",
	}
	for raw, want := range cases {
		_, err := ParseSourceMap([]byte(raw))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSourceMap(%s) error = %v, want one containing %q", raw, err, want)
		}
	}
}

func TestAnEmptyMappingsFieldIsAMapWithoutMappings(t *testing.T) {
	m, err := ParseSourceMap([]byte(`{"version":3,"sources":[],"names":[],"mappings":""}`))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Lookup(0, 0); ok {
		t.Errorf("an empty map maps a position")
	}
	var nilMap *SourceMap
	if _, ok := nilMap.Lookup(0, 0); ok {
		t.Errorf("a nil map maps a position")
	}
}
