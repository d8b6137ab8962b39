package capability

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/scripting"
)

// maxResponseHeaderBytes caps a response's header block.
const maxResponseHeaderBytes = 1 << 20

// errFetchTimeout is the cause of a fetch's timeoutMs passing.
var errFetchTimeout = errors.New("fetch timed out")

// httpModule is dsh/http.
type httpModule struct {
	allow *allowList
	cfg   Config
}

func (m *httpModule) module() scripting.Module {
	return scripting.Module{Name: "http", Funcs: map[string]scripting.ModuleFunc{"fetch": m.fetch}}
}

// allowEntry is one host the operator allows.
type allowEntry struct {
	name         string       // lower-case host name; "" for address entries
	wildcard     bool         // name is a parent domain ("*.example.com")
	prefix       netip.Prefix // address entries (one address or a CIDR range)
	port         string       // "" allows every port
	loopbackOnly bool         // "localhost": must dial a loopback address
}

// allowList is the hosts fetch may reach.
type allowList struct {
	entries []allowEntry
}

// AllowListError is a malformed Config.HTTPAllow entry.
type AllowListError struct {
	Entry string // the entry as given
	Err   error  // what is wrong with it
}

func (e *AllowListError) Error() string {
	return fmt.Sprintf("capability: HTTPAllow entry %q: %v", e.Entry, e.Err)
}

// Unwrap returns what is wrong with the entry.
func (e *AllowListError) Unwrap() error { return e.Err }

// parseAllowList parses Config.HTTPAllow; empty allows loopback only.
func parseAllowList(list []string) (*allowList, error) {
	if len(list) == 0 {
		list = []string{"localhost", "127.0.0.0/8", "::1"}
	}
	a := &allowList{}
	for _, raw := range list {
		e, err := parseAllowEntry(raw)
		if err != nil {
			return nil, &AllowListError{Entry: raw, Err: err}
		}
		a.entries = append(a.entries, e)
	}
	return a, nil
}

func parseAllowEntry(raw string) (allowEntry, error) {
	s := strings.ToLower(strings.TrimSpace(raw))
	if s == "" {
		return allowEntry{}, errors.New("empty")
	}
	if p, err := netip.ParsePrefix(s); err == nil {
		return allowEntry{prefix: p.Masked()}, nil
	}
	host, port := s, ""
	if ip, err := netip.ParseAddr(s); err == nil {
		ip = ip.Unmap()
		return allowEntry{prefix: netip.PrefixFrom(ip, ip.BitLen())}, nil
	}
	if h, p, err := net.SplitHostPort(s); err == nil {
		n, err := strconv.Atoi(p)
		if err != nil || n < 1 || n > 65535 {
			return allowEntry{}, errors.New("bad port")
		}
		host, port = h, strconv.Itoa(n)
	}
	if ip, err := netip.ParseAddr(host); err == nil {
		ip = ip.Unmap()
		return allowEntry{prefix: netip.PrefixFrom(ip, ip.BitLen()), port: port}, nil
	}
	e := allowEntry{port: port}
	if rest, ok := strings.CutPrefix(host, "*."); ok {
		e.wildcard = true
		host = rest
	}
	host = strings.TrimSuffix(host, ".")
	if !validHostName(host) {
		return allowEntry{}, errors.New("not a host name, address or *.domain")
	}
	e.name = host
	e.loopbackOnly = host == "localhost"
	return e, nil
}

func validHostName(h string) bool {
	if h == "" || len(h) > 253 {
		return false
	}
	for _, label := range strings.Split(h, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for _, c := range label {
			if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// hostKey is a normalized host: an address, or a lower-case name.
type hostKey struct {
	name string
	addr netip.Addr
}

func newHostKey(host string) hostKey {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if ip, err := netip.ParseAddr(host); err == nil && ip.Zone() == "" {
		return hostKey{addr: ip.Unmap()}
	}
	return hostKey{name: host}
}

// matching returns the entries allowing host on port.
func (a *allowList) matching(h hostKey, port string) []allowEntry {
	var out []allowEntry
	for _, e := range a.entries {
		if e.port != "" && e.port != port {
			continue
		}
		switch {
		case e.name == "":
			if h.addr.IsValid() && e.prefix.Contains(h.addr) {
				out = append(out, e)
			}
		case h.name == "":
		case e.wildcard:
			if strings.HasSuffix(h.name, "."+e.name) {
				out = append(out, e)
			}
		case h.name == e.name:
			out = append(out, e)
		}
	}
	return out
}

// checkDial checks the address actually dialed for host: an address host
// is itself; a name must be allowed, and one allowed only as "localhost"
// must resolve to a loopback address.
func (a *allowList) checkDial(host string, dialed netip.Addr, port string) bool {
	h := newHostKey(host)
	dialed = dialed.Unmap()
	if h.addr.IsValid() {
		return h.addr == dialed && len(a.matching(h, port)) > 0
	}
	for _, e := range a.matching(h, port) {
		if !e.loopbackOnly || dialed.IsLoopback() {
			return true
		}
	}
	return false
}

func defaultPort(scheme string) string {
	if scheme == "https" {
		return "443"
	}
	return "80"
}

// checkURL checks a request's URL: http or https, to an allowed host.
func (a *allowList) checkURL(u *url.URL, raw string) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return invalid("fetch", "url must be an http or https URL: %s", raw)
	}
	if u.Hostname() == "" {
		return invalid("fetch", "url has no host: %s", raw)
	}
	port := u.Port()
	if port == "" {
		port = defaultPort(u.Scheme)
	}
	if len(a.matching(newHostKey(u.Hostname()), port)) == 0 {
		return newError(EHOSTDENIED, "fetch: host not on the allow-list: %s", net.JoinHostPort(u.Hostname(), port))
	}
	return nil
}

// fetchSpec is a validated fetch call.
type fetchSpec struct {
	url     *url.URL
	raw     string
	method  string
	headers []dsl.Member
	body    *string
	timeout time.Duration
}

func (m *httpModule) parseFetch(args []any) (*fetchSpec, error) {
	const op = "fetch"
	if err := arity(op, args, 2); err != nil {
		return nil, err
	}
	raw, err := stringArg(op, "url", args, 0)
	if err != nil {
		return nil, err
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() {
		return nil, invalid(op, "url must be an absolute http or https URL: %s", raw)
	}
	o, err := optionsArg(op, args, 1, "method", "headers", "body", "timeoutMs")
	if err != nil {
		return nil, err
	}
	spec := &fetchSpec{url: u, raw: raw}
	if spec.method, err = o.str("method", "GET"); err != nil {
		return nil, err
	}
	if !validToken(spec.method) {
		return nil, invalid(op, "options.method must be an HTTP method name")
	}
	switch up := strings.ToUpper(spec.method); up {
	case "DELETE", "GET", "HEAD", "OPTIONS", "POST", "PUT", "PATCH":
		spec.method = up
	}
	if spec.headers, err = o.stringMap("headers", false); err != nil {
		return nil, err
	}
	for _, h := range spec.headers {
		if !validToken(h.Key) {
			return nil, invalid(op, "options.headers has a bad header name %q", h.Key)
		}
		if strings.ContainsAny(h.Value.(string), "\r\n\x00") {
			return nil, invalid(op, "options.headers[%q] must not contain CR, LF or NUL", h.Key)
		}
	}
	if _, has := o.get("body"); has {
		b, err := o.str("body", "")
		if err != nil {
			return nil, err
		}
		spec.body = &b
	}
	ms, err := o.timeoutMs()
	if err != nil {
		return nil, err
	}
	spec.timeout = time.Duration(ms) * time.Millisecond
	return spec, nil
}

// validToken reports whether s is an RFC 9110 token.
func validToken(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

func (m *httpModule) fetch(ctx context.Context, args []any) (any, error) {
	spec, err := m.parseFetch(args)
	if err != nil {
		return nil, err
	}
	if err := m.allow.checkURL(spec.url, spec.raw); err != nil {
		return nil, err
	}
	if err := cancelled(ctx, "fetch", spec.raw); err != nil {
		return nil, err
	}
	callCtx := ctx
	if spec.timeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeoutCause(ctx, spec.timeout, errFetchTimeout)
		defer cancel()
	}
	var body io.Reader
	if spec.body != nil {
		body = strings.NewReader(*spec.body)
	}
	req, err := http.NewRequestWithContext(callCtx, spec.method, spec.url.String(), body)
	if err != nil {
		return nil, invalid("fetch", "%v", err)
	}
	for _, h := range spec.headers {
		if strings.EqualFold(h.Key, "Host") {
			req.Host = h.Value.(string)
			continue
		}
		req.Header.Add(h.Key, h.Value.(string))
	}
	tr := m.transport()
	defer tr.CloseIdleConnections()
	client := &http.Client{Transport: tr, CheckRedirect: m.checkRedirect}
	resp, err := client.Do(req)
	if err != nil {
		return nil, m.fetchError(ctx, callCtx, spec, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, m.cfg.MaxBodyBytes+1))
	if err != nil {
		return nil, m.fetchError(ctx, callCtx, spec, err)
	}
	truncated := int64(len(data)) > m.cfg.MaxBodyBytes
	if truncated {
		data = data[:m.cfg.MaxBodyBytes]
	}
	names := make([]string, 0, len(resp.Header))
	for k := range resp.Header {
		names = append(names, strings.ToLower(k))
	}
	slices.Sort(names)
	names = slices.Compact(names)
	headers := dsl.NewObject()
	for _, k := range names {
		headers.Set(k, strings.Join(resp.Header.Values(k), ", "))
	}
	statusText := strings.TrimSpace(strings.TrimPrefix(resp.Status, strconv.Itoa(resp.StatusCode)))
	if statusText == "" {
		statusText = http.StatusText(resp.StatusCode)
	}
	return dsl.NewObject(
		dsl.Member{Key: "status", Value: float64(resp.StatusCode)},
		dsl.Member{Key: "statusText", Value: statusText},
		dsl.Member{Key: "url", Value: resp.Request.URL.String()},
		dsl.Member{Key: "headers", Value: headers},
		dsl.Member{Key: "body", Value: strings.ToValidUTF8(string(data), "\uFFFD")},
		dsl.Member{Key: "truncated", Value: truncated},
	), nil
}

// transport is a one-call transport: no proxy, no keep-alive, every dialed
// address checked against the allow-list.
func (m *httpModule) transport() *http.Transport {
	return &http.Transport{
		Proxy:                  nil,
		DialContext:            m.dial,
		DisableKeepAlives:      true,
		MaxResponseHeaderBytes: maxResponseHeaderBytes,
		TLSHandshakeTimeout:    30 * time.Second,
	}
}

// dial connects to addr after checking its host, and checks each address it
// resolves to before connecting to it.
func (m *httpModule) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if len(m.allow.matching(newHostKey(host), port)) == 0 {
		return nil, newError(EHOSTDENIED, "fetch: host not on the allow-list: %s", addr)
	}
	d := &net.Dialer{Control: m.control(host, port)}
	return d.DialContext(ctx, network, addr)
}

// control returns the dialer's check of each address it connects to for
// host and port.
func (m *httpModule) control(host, port string) func(network, address string, c syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		ap, err := netip.ParseAddrPort(address)
		if err != nil {
			return err
		}
		if !m.allow.checkDial(host, ap.Addr(), port) {
			return newError(EHOSTDENIED, "fetch: %s resolves to %s, which is not on the allow-list", host, ap.Addr().Unmap())
		}
		return nil
	}
}

func (m *httpModule) checkRedirect(req *http.Request, via []*http.Request) error {
	if len(via) > m.cfg.MaxRedirects {
		return newError(EREDIRECT, "fetch: more than %d redirects: %s", m.cfg.MaxRedirects, via[0].URL)
	}
	return m.allow.checkURL(req.URL, req.URL.String())
}

// fetchError maps a transport or body error.
func (m *httpModule) fetchError(ctx, callCtx context.Context, spec *fetchSpec, err error) error {
	if e, ok := asError(err); ok {
		return e
	}
	switch {
	case ctx.Err() != nil:
		return canceledError(ctx, "fetch", spec.raw)
	case callCtx.Err() != nil && errors.Is(context.Cause(callCtx), errFetchTimeout):
		return wrapError(err, ETIMEDOUT, "fetch: no complete response within %d ms: %s", spec.timeout.Milliseconds(), spec.raw)
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	return wrapError(err, EHTTP, "fetch: %v: %s", err, spec.raw)
}
