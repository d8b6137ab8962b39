package capability

import (
	"net/netip"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestGlobMatcher(t *testing.T) {
	tests := []struct {
		pattern, path string
		want          bool
	}{
		{"*", "a", true},
		{"*", "a/b", false},
		{"*", ".hidden", true},
		{"a*b", "ab", true},
		{"a*b", "axxb", true},
		{"a*b", "axxbc", false},
		{"a*b*c", "abxbxc", true},
		{"?", "é", true},
		{"??", "é", false},
		{"[abc]", "b", true},
		{"[abc]", "d", false},
		{"[a-c]x", "bx", true},
		{"[!a-c]", "d", true},
		{"[^a-c]", "a", false},
		{"[]]", "]", true},
		{"[é-ê]", "ê", true},
		{`\*`, "*", true},
		{`\*`, "a", false},
		{`[\]]`, "]", true},
		{"**", "a/b/c", true},
		{"**", "a", true},
		{"a/**", "a", true},
		{"a/**/b", "a/b", true},
		{"a/**/b", "a/x/y/b", true},
		{"a/**/b", "a/x/y/c", false},
		{"**/b", "b", true},
		{"**/b", "x/b", true},
		{"**/*.go", "x/y/z.go", true},
		{"**/*.go", "x/y/z.ts", false},
		{"**/**/**/x", "a/b/c/d/x", true},
		{"{a,b}/c", "b/c", true},
		{"{a,b}/c", "d/c", false},
		{"{a,{b,c}d}", "cd", true},
		{"x{,y}", "x", true},
		{"{a/b,c}", "a/b", true},
		{"*.{go,ts}", "m.ts", true},
		{"a/*/c", "a/b/c", true},
		{"a/*/c", "a/b/d/c", false},
		{"./a", "a", true},
		{"a//b", "a/b", true},
	}
	for _, tt := range tests {
		t.Run(tt.pattern+" against "+tt.path, func(t *testing.T) {
			g, err := compileGlob(tt.pattern)
			if err != nil {
				t.Fatal(err)
			}
			if got := g.match(tt.path); got != tt.want {
				t.Errorf("match = %v, want %v", got, tt.want)
			}
		})
	}
	t.Run("many stars against a long name stay quick", func(t *testing.T) {
		g, err := compileGlob(strings.Repeat("*a", 50) + "b")
		if err != nil {
			t.Fatal(err)
		}
		if g.match(strings.Repeat("a", 2000)) {
			t.Error("matched")
		}
		g, err = compileGlob(strings.Repeat("**/", 100) + "x")
		if err != nil {
			t.Fatal(err)
		}
		if g.match(strings.Repeat("a/", 500) + "y") {
			t.Error("matched")
		}
	})
	t.Run("a directory no match can lie under is not alive", func(t *testing.T) {
		g, _ := compileGlob("src/**/*.go")
		st := g.step(g.start(), "docs")
		if g.alive(st) {
			t.Error("docs is alive")
		}
		if st = g.step(g.start(), "src"); !g.alive(st) {
			t.Error("src is not alive")
		}
	})
}

func TestDialCheck(t *testing.T) {
	loop := &httpModule{}
	var err error
	if loop.allow, err = parseAllowList(nil); err != nil {
		t.Fatal(err)
	}
	listed := &httpModule{}
	if listed.allow, err = parseAllowList([]string{"example.com", "*.corp.test:8443", "10.1.0.0/16"}); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name          string
		m             *httpModule
		host, dialed  string
		port          string
		wantSucceeded bool
	}{
		{"localhost resolving to loopback is allowed", loop, "localhost", "127.0.0.1", "80", true},
		{"localhost resolving to ::1 is allowed", loop, "localhost", "::1", "80", true},
		{"localhost resolving elsewhere is refused", loop, "localhost", "93.184.216.34", "80", false},
		{"localhost resolving to a private address is refused", loop, "localhost", "10.0.0.5", "80", false},
		{"a loopback address is allowed", loop, "127.0.0.9", "127.0.0.9", "1234", true},
		{"an address dialed as another is refused", loop, "127.0.0.1", "10.0.0.1", "80", false},
		{"a listed name may resolve anywhere", listed, "example.com", "93.184.216.34", "443", true},
		{"a subdomain on its port is allowed", listed, "a.corp.test", "10.9.9.9", "8443", true},
		{"a subdomain on another port is refused", listed, "a.corp.test", "10.9.9.9", "443", false},
		{"an address in a listed range is allowed", listed, "10.1.2.3", "10.1.2.3", "80", true},
		{"a mapped IPv4 address counts as IPv4", listed, "10.1.2.3", "::ffff:10.1.2.3", "80", true},
		{"an unlisted name is refused", listed, "evil.test", "10.1.2.3", "80", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := netip.AddrPortFrom(netip.MustParseAddr(tt.dialed), 80).String()
			err := tt.m.control(tt.host, tt.port)("tcp", addr, nil)
			if (err == nil) != tt.wantSucceeded {
				t.Errorf("control = %v", err)
			}
			if err != nil && !strings.HasPrefix(err.Error(), "EHOSTDENIED: fetch: "+tt.host+" resolves to ") {
				t.Errorf("message %q", err)
			}
		})
	}
}

// FuzzGlob checks that compiling and matching any pattern against any path
// never panics, and that an escaped literal pattern matches itself.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"**/*.go", "{a,b}/[!c-d]?*", `\[x\]`, "[]]", "{{a,b},c}", "a/**/b/**", "[", "{", `\`} {
		f.Add(s, "a/b/c.go")
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if g, err := compileGlob(pattern); err == nil {
			g.match(path)
			g.alive(g.step(g.start(), path))
		}
		if !utf8.ValidString(path) || path == "" || strings.Contains(path, "//") || strings.HasPrefix(path, "/") || strings.HasSuffix(path, "/") {
			return
		}
		for _, seg := range strings.Split(path, "/") {
			if seg == "." || seg == ".." {
				return
			}
		}
		var lit strings.Builder
		for _, r := range path {
			if r != '/' {
				lit.WriteByte('\\')
			}
			lit.WriteRune(r)
		}
		g, err := compileGlob(lit.String())
		if err != nil {
			if len(lit.String()) > maxPatternLen || strings.ContainsRune(path, 0) {
				return
			}
			t.Fatalf("the literal pattern %q: %v", lit.String(), err)
		}
		if !g.match(path) {
			t.Fatalf("the literal pattern %q does not match %q", lit.String(), path)
		}
	})
}

// FuzzPathResolution checks that a path the workspace accepts never lies
// outside it, and that dsh/path's join and relative never lead out of it
// from paths inside it.
func FuzzPathResolution(f *testing.F) {
	for _, s := range [][2]string{{"a/b", "c"}, {"..", "x"}, {"a/../..", "b"}, {"/ws/a", "/ws/b"}, {"/etc", "passwd"}, {"./", "../.."}} {
		f.Add(s[0], s[1])
	}
	ws := &workspace{real: "/ws", abs: "/alias/ws"}
	f.Fuzz(func(t *testing.T, a, b string) {
		for _, p := range []string{a, Join(a, b), Normalize(a), Dirname(a), Resolve("/ws", a, b)} {
			rel, err := ws.rel("op", "path", p)
			if err != nil {
				if !strings.HasPrefix(err.Error(), "EOUTSIDE: ") && !strings.HasPrefix(err.Error(), "EINVAL: ") {
					t.Fatalf("rel(%q): %v", p, err)
				}
				continue
			}
			full := filepath.Join("/ws", rel)
			if full != "/ws" && !strings.HasPrefix(full, "/ws/") {
				t.Fatalf("rel(%q) = %q, which is outside", p, rel)
			}
			if rel != "." && (strings.HasPrefix(rel, "/") || rel == ".." || strings.HasPrefix(rel, "../")) {
				t.Fatalf("rel(%q) = %q", p, rel)
			}
		}
		if strings.HasPrefix(a, "/alias") || strings.HasPrefix(b, "/alias") {
			return // relative is path arithmetic: it does not know the alias
		}
		fromRel, err1 := ws.rel("op", "from", a)
		toRel, err2 := ws.rel("op", "to", b)
		if err1 != nil || err2 != nil {
			return
		}
		r := Relative("/ws", a, b)
		back, err := ws.rel("op", "path", Join(fromRel, r))
		if err != nil || back != toRel {
			t.Fatalf("join(%q, relative(%q, %q) = %q) = %q (%v), want %q", fromRel, a, b, r, back, err, toRel)
		}
		if Normalize(Normalize(a)) != Normalize(a) {
			t.Fatalf("normalize is not idempotent on %q", a)
		}
		_ = Basename(a, b)
		_ = Ext(a)
	})
}
