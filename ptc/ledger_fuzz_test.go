package ptc

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
)

// modelStringSize is §3.3's string rule written the slow way, one character
// at a time, with the documented costs for bytes that are not UTF-8.
func modelStringSize(s string) int {
	n := 2
	for len(s) > 0 {
		if len(s) >= 3 && s[0] == 0xED && s[1]&0xE0 == 0xA0 && s[2]&0xC0 == 0x80 {
			n, s = n+6, s[3:]
			continue
		}
		r, w := utf8.DecodeRuneInString(s)
		switch {
		case r == utf8.RuneError && w == 1:
			n += 6
		case r == '"' || r == '\\' || r == '\b' || r == '\t' || r == '\n' || r == '\f' || r == '\r':
			n += 2
		case r < 0x20:
			n += 6
		default:
			n += w
		}
		s = s[w:]
	}
	return n
}

func FuzzJSONStringSize(f *testing.F) {
	for _, s := range []string{"", "abc", "€", "😀\"\\\n", "\x00\x1f\x7f", "\u2028", "\xed\xa0\x80", "\xff\xe2\x82", "a\xed\xbf"} {
		f.Add(s, int64(7))
	}
	f.Fuzz(func(t *testing.T, s string, limit int64) {
		n := JSONStringSize(s)
		if m := modelStringSize(s); n != m {
			t.Fatalf("JSONStringSize(%q) = %d, model %d", s, n, m)
		}
		if utf8.ValidString(s) {
			b, err := dsl.Marshal(s)
			if err != nil || len(b) != n {
				t.Fatalf("JSONStringSize(%q) = %d, JSON.stringify gives %d bytes (%v)", s, n, len(b), err)
			}
		}
		if limit < 0 {
			limit = -limit
		}
		limit %= int64(n) + 8
		got, ok := jsonStringSizeUpTo(s, limit)
		if ok != (int64(n) <= limit) || (ok && got != int64(n)) {
			t.Fatalf("jsonStringSizeUpTo(%q, %d) = %d, %v; size %d", s, limit, got, ok, n)
		}
		p := truncateJSONString(s, limit)
		if !strings.HasPrefix(s, p) {
			t.Fatalf("truncateJSONString(%q, %d) = %q is not a prefix", s, limit, p)
		}
		if p != "" && int64(JSONStringSize(p)) > limit {
			t.Fatalf("truncateJSONString(%q, %d) = %q costs %d", s, limit, p, JSONStringSize(p))
		}
		if utf8.ValidString(s) && !utf8.ValidString(p) {
			t.Fatalf("truncateJSONString(%q, %d) = %q cuts a character", s, limit, p)
		}
		if p != s && limit >= 2 {
			w, c := jsonUnit(s, len(p))
			if int64(JSONStringSize(p)+c) <= limit {
				t.Fatalf("truncateJSONString(%q, %d) = %q stops before a fitting character (%d bytes)", s, limit, p, w)
			}
		}
	})
}

func FuzzJSONValueSize(f *testing.F) {
	for _, s := range []string{`null`, `true`, `[1,2.5,-3e-7,1e21]`, `{"a":{"b":["€","😀"]},"\n":false}`, `"\u2028\u0000"`, `[[],{}]`} {
		f.Add([]byte(s), int64(10))
	}
	f.Fuzz(func(t *testing.T, data []byte, limit int64) {
		v, err := dsl.Unmarshal(data)
		if err != nil {
			return
		}
		b, err := dsl.Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of an Unmarshal result: %v", err)
		}
		n := JSONValueSize(v)
		if n != len(b) {
			t.Fatalf("JSONValueSize(%s) = %d, JSON.stringify gives %d", b, n, len(b))
		}
		if limit < 0 {
			limit = -limit
		}
		limit %= int64(n) + 8
		got, st := jsonValueSizeUpTo(v, limit)
		if (st == sizeFits) != (int64(n) <= limit) || st == sizeInvalid || (st == sizeFits && got != int64(n)) {
			t.Fatalf("jsonValueSizeUpTo(%s, %d) = %d, %v; size %d", b, limit, got, st, n)
		}

		// The ledger's result never counts more than its cap, and a value
		// that fits is kept as it is.
		logCap := max(limit, MinOutputBytes)
		r := NewLedger(logCap).Finish(Result{Logs: []string{string(data)}, Value: v, HasValue: true})
		checkWithinCap(t, r, logCap)
		fits := int64(modelStringSize(string(data))+2+n) <= logCap
		if fits != (r.Err == nil) {
			t.Fatalf("cap %d, fits %v: %s", logCap, fits, show(r))
		}
	})
}
