package capability_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/scripting/capability"
)

// testServer is an HTTP server on 127.0.0.1 with the routes the tests use.
type testServer struct {
	*httptest.Server
	arrived chan struct{} // a request reached /hang or /wait
	wrote   chan int64    // what /flood wrote before the client went away
}

func newServer(t *testing.T) *testServer {
	t.Helper()
	s := &testServer{arrived: make(chan struct{}, 16), wrote: make(chan int64, 1)}
	mux := http.NewServeMux()
	mux.HandleFunc("/hello", func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h["Date"] = nil
		h.Set("Content-Type", "text/plain")
		h.Set("X-B", "1")
		h.Add("X-A", "1")
		h.Add("X-A", "2")
		fmt.Fprint(w, "hi")
	})
	mux.HandleFunc("/echo", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.Header().Set("Content-Type", "text/plain")
		b, _ := io.ReadAll(r.Body)
		fmt.Fprintf(w, "%s %s %s %s", r.Method, r.Header.Get("X-Token"), r.Host, b)
	})
	mux.HandleFunc("/bytes", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Date"] = nil
		w.WriteHeader(http.StatusTeapot)
		_, _ = w.Write([]byte("a\xffb"))
	})
	mux.HandleFunc("/hang", func(w http.ResponseWriter, r *http.Request) {
		s.arrived <- struct{}{}
		<-r.Context().Done()
	})
	mux.HandleFunc("/wait", func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		s.arrived <- struct{}{}
		<-r.Context().Done()
	})
	mux.HandleFunc("/flood", func(w http.ResponseWriter, r *http.Request) {
		chunk := []byte(strings.Repeat("x", 1<<20))
		var n int64
		for n < 100<<20 {
			k, err := w.Write(chunk)
			n += int64(k)
			if err != nil {
				break
			}
		}
		s.wrote <- n
	})
	mux.HandleFunc("/cut", func(w http.ResponseWriter, r *http.Request) {
		conn, buf, err := w.(http.Hijacker).Hijack()
		if err != nil {
			return
		}
		_, _ = buf.WriteString("HTTP/1.1 200 OK\r\nContent-Length: 100\r\n\r\npartial")
		_ = buf.Flush()
		conn.Close()
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://example.com/", http.StatusFound)
	})
	mux.HandleFunc("/hops/{n}", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.PathValue("n"))
		if n == 0 {
			w.Header()["Date"] = nil
			fmt.Fprint(w, "arrived")
			return
		}
		http.Redirect(w, r, "/hops/"+strconv.Itoa(n-1), http.StatusFound)
	})
	s.Server = httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func TestFetch(t *testing.T) {
	srv := newServer(t)
	f := newFixture(t, capability.Config{MaxBodyBytes: 1 << 20})
	u := srv.URL
	tests := []struct {
		name, args, want string
	}{
		{"a GET returns status, sorted joined headers and body", `[` + quote(u+"/hello") + `]`,
			`{"status":200,"statusText":"OK","url":` + quote(u+"/hello") + `,"headers":{"content-length":"2","content-type":"text/plain","x-a":"1, 2","x-b":"1"},"body":"hi","truncated":false}`},
		{"method, headers and body are sent", `[` + quote(u+"/echo") + `,{"method":"post","headers":{"X-Token":"t1","Host":"svc.test"},"body":"payload"}]`,
			`{"status":200,"statusText":"OK","url":` + quote(u+"/echo") + `,"headers":{"content-length":"24","content-type":"text/plain"},"body":"POST t1 svc.test payload","truncated":false}`},
		{"bytes that are not UTF-8 are replaced", `[` + quote(u+"/bytes") + `]`,
			`{"status":418,"statusText":"I'm a teapot","url":` + quote(u+"/bytes") + `,"headers":{"content-length":"3","content-type":"text/plain; charset=utf-8"},"body":"a` + "\ufffd" + `b","truncated":false}`},
		{"five redirects are followed to the final url", `[` + quote(u+"/hops/5") + `]`,
			`{"status":200,"statusText":"OK","url":` + quote(u+"/hops/0") + `,"headers":{"content-length":"7","content-type":"text/plain; charset=utf-8"},"body":"arrived","truncated":false}`},
		{"localhost is loopback", `[` + quote(strings.Replace(u, "127.0.0.1", "localhost", 1)+"/hello") + `]`,
			`{"status":200,"statusText":"OK","url":` + quote(strings.Replace(u, "127.0.0.1", "localhost", 1)+"/hello") + `,"headers":{"content-length":"2","content-type":"text/plain","x-a":"1, 2","x-b":"1"},"body":"hi","truncated":false}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := f.ok(t, "http", "fetch", tt.args); got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
	t.Run("a huge body is capped and the client stops reading", func(t *testing.T) {
		got := f.ok(t, "http", "fetch", `[`+quote(u+"/flood")+`]`)
		if !strings.HasSuffix(got, `"truncated":true}`) || !strings.Contains(got, `"body":"`+strings.Repeat("x", 1<<20)+`"`) {
			t.Errorf("got %s...", got[:200])
		}
		select {
		case n := <-srv.wrote:
			if n >= 100<<20 {
				t.Errorf("the server wrote all %d bytes", n)
			}
			t.Logf("the server wrote %d MB before the client closed", n>>20)
		case <-time.After(10 * time.Second):
			t.Error("the server is still writing")
		}
	})
	errs := []struct {
		name, args, code, msg string
	}{
		{"a redirect loop is EREDIRECT", `[` + quote(u+"/loop") + `]`, "EREDIRECT", "EREDIRECT: fetch: more than 5 redirects: " + u + "/loop"},
		{"six redirects are EREDIRECT", `[` + quote(u+"/hops/6") + `]`, "EREDIRECT", "EREDIRECT: fetch: more than 5 redirects: " + u + "/hops/6"},
		{"a redirect off the allow-list is EHOSTDENIED", `[` + quote(u+"/away") + `]`, "EHOSTDENIED", "EHOSTDENIED: fetch: host not on the allow-list: example.com:80"},
		{"a host off the allow-list is EHOSTDENIED", `["https://example.com/x"]`, "EHOSTDENIED", "EHOSTDENIED: fetch: host not on the allow-list: example.com:443"},
		{"a private address is EHOSTDENIED", `["http://10.0.0.1:8080/"]`, "EHOSTDENIED", "EHOSTDENIED: fetch: host not on the allow-list: 10.0.0.1:8080"},
		{"a numeric trick is EHOSTDENIED", `["http://2130706433/"]`, "EHOSTDENIED", "EHOSTDENIED: fetch: host not on the allow-list: 2130706433:80"},
		{"a name under localhost is not localhost", `["http://evil.localhost/"]`, "EHOSTDENIED", "EHOSTDENIED: fetch: host not on the allow-list: evil.localhost:80"},
		{"another scheme is EINVAL", `["file:///etc/passwd"]`, "EINVAL", "EINVAL: fetch: url must be an http or https URL: file:///etc/passwd"},
		{"a relative url is EINVAL", `["/hello"]`, "EINVAL", "EINVAL: fetch: url must be an absolute http or https URL: /hello"},
		{"a bad method is EINVAL", `[` + quote(u) + `,{"method":"GE T"}]`, "EINVAL", "EINVAL: fetch: options.method must be an HTTP method name"},
		{"a header value that is not a string is EINVAL", `[` + quote(u) + `,{"headers":{"A":1}}]`, "EINVAL", `EINVAL: fetch: options.headers["A"] must be a string`},
		{"a header with a newline is EINVAL", `[` + quote(u) + `,{"headers":{"A":"x\r\nB: y"}}]`, "EINVAL", `EINVAL: fetch: options.headers["A"] must not contain CR, LF or NUL`},
		{"a bad header name is EINVAL", `[` + quote(u) + `,{"headers":{"A B":"x"}}]`, "EINVAL", `EINVAL: fetch: options.headers has a bad header name "A B"`},
		{"a body that is not a string is EINVAL", `[` + quote(u) + `,{"body":{}}]`, "EINVAL", "EINVAL: fetch: options.body must be a string"},
		{"a refused connection is EHTTP", `["http://127.0.0.1:1/"]`, "EHTTP", "EHTTP: fetch: dial tcp 127.0.0.1:1: connect: connection refused: http://127.0.0.1:1/"},
		{"a response cut short is EHTTP", `[` + quote(u+"/cut") + `]`, "EHTTP", "EHTTP: fetch: unexpected EOF: " + u + "/cut"},
		{"a server that never answers is ETIMEDOUT", `[` + quote(u+"/hang") + `,{"timeoutMs":100}]`, "ETIMEDOUT", "ETIMEDOUT: fetch: no complete response within 100 ms: " + u + "/hang"},
		{"a body that never ends is ETIMEDOUT", `[` + quote(u+"/wait") + `,{"timeoutMs":100}]`, "ETIMEDOUT", "ETIMEDOUT: fetch: no complete response within 100 ms: " + u + "/wait"},
	}
	for _, tt := range errs {
		t.Run(tt.name, func(t *testing.T) {
			e := f.fail(t, "http", "fetch", tt.args)
			if e.Code() != tt.code || e.Message != tt.msg {
				t.Errorf("got %s %q\nwant %s %q", e.Code(), e.Message, tt.code, tt.msg)
			}
		})
	}
	drain(srv.arrived)
	for _, path := range []string{"/hang", "/wait"} {
		t.Run("cancelling a fetch waiting on "+path+" is ECANCELED", func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-srv.arrived
				cancel()
			}()
			e := f.failCtx(ctx, t, "http", "fetch", `[`+quote(u+path)+`]`)
			if want := "ECANCELED: fetch was cancelled: " + u + path; e.Message != want {
				t.Errorf("got %q, want %q", e.Message, want)
			}
		})
	}
	t.Run("a pre-cancelled fetch is ECANCELED", func(t *testing.T) {
		e := f.failCtx(cancelledCtx(), t, "http", "fetch", `[`+quote(u+"/hello")+`]`)
		if want := "ECANCELED: fetch was cancelled: " + u + "/hello"; e.Message != want {
			t.Errorf("got %q, want %q", e.Message, want)
		}
	})
}

func drain(c chan struct{}) {
	for {
		select {
		case <-c:
		default:
			return
		}
	}
}

func TestFetchAllowList(t *testing.T) {
	srv := newServer(t)
	port := srv.URL[strings.LastIndexByte(srv.URL, ':')+1:]
	tests := []struct {
		name  string
		allow []string
		url   string
		code  string // "" for a success
	}{
		{"an explicit list without loopback refuses loopback", []string{"example.com"}, srv.URL + "/hello", "EHOSTDENIED"},
		{"an address entry allows that address", []string{"127.0.0.1"}, srv.URL + "/hello", ""},
		{"an address entry with the port allows it", []string{"127.0.0.1:" + port}, srv.URL + "/hello", ""},
		{"an address entry with another port refuses", []string{"127.0.0.1:1"}, srv.URL + "/hello", "EHOSTDENIED"},
		{"a CIDR entry allows its range", []string{"127.0.0.0/8"}, srv.URL + "/hello", ""},
		{"localhost with the port allows it", []string{"localhost:" + port}, "http://localhost:" + port + "/hello", ""},
		{"a wildcard does not allow the bare domain", []string{"*.example.com"}, "http://example.com/", "EHOSTDENIED"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, capability.Config{HTTPAllow: tt.allow})
			got, err := f.call(context.Background(), t, "http", "fetch", `[`+quote(tt.url)+`]`)
			switch {
			case tt.code == "" && err != nil:
				t.Errorf("got %v", err)
			case tt.code == "" && !strings.Contains(got, `"body":"hi"`):
				t.Errorf("got %s", got)
			case tt.code != "" && (err == nil || !strings.HasPrefix(err.Error(), tt.code+": ")):
				t.Errorf("got %s, %v; want %s", got, err, tt.code)
			}
		})
	}
	t.Run("malformed entries are refused by Modules", func(t *testing.T) {
		for _, bad := range []string{"", "a b", "host:0", "host:99999", "*.", "ex*ample.com"} {
			if _, err := capability.Modules(capability.Config{Workspace: t.TempDir(), HTTPAllow: []string{bad}}); err == nil {
				t.Errorf("%q was accepted", bad)
			}
		}
	})
}
