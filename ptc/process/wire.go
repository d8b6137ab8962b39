package process

import (
	"bufio"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/ptc"
)

// The wire: frames of a 4-byte big-endian length and that many bytes of one
// JSON object, the message. Every message has a "t" member naming its type;
// each type has a fixed set of members, every one required unless said
// otherwise, and no others.
//
// Parent to child:
//
//	config  {t, language, computeMs, maxWallMs, maxOutputBytes, maxMemoryMB}
//	        once, first: the runtime the child builds
//	run     {t, program, bindings: [{global, errorClass, errorMember, names}]}
//	        one program; the child is idle
//	result  {t, id, ok, value} or {t, id, ok, error}
//	        the outcome of the child's call id: a value, or a failure's message
//
// Child to parent:
//
//	ready   {t}                              the runtime is built (after config)
//	call    {t, id, ns, name, args}          a binding call: ids count from 1 in a run
//	log     {t, entry}                       a log entry, as the program wrote it
//	done    {t, value} / {t} / {t, kind, message}
//	        the run's end: a completion value, none, or a failure
//	misuse  {t, error}                       the run was refused (contract misuse)
const (
	msgConfig = "config"
	msgRun    = "run"
	msgResult = "result"
	msgReady  = "ready"
	msgCall   = "call"
	msgLog    = "log"
	msgDone   = "done"
	msgMisuse = "misuse"
)

// frameHeader is the size of a frame's length prefix.
const frameHeader = 4

// maxFrameLimit is the largest frame the wire can carry (the length prefix
// is a uint32; a frame larger than this is refused before it is read).
const maxFrameLimit = math.MaxUint32

// ErrFrameTooLarge is wrapped by the error of a frame whose length passes
// the reader's limit.
var ErrFrameTooLarge = errors.New("frame too large")

// writeFrame writes one frame holding body.
func writeFrame(w io.Writer, body []byte) error {
	if uint64(len(body)) > maxFrameLimit {
		return fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, len(body))
	}
	buf := make([]byte, frameHeader, frameHeader+len(body))
	binary.BigEndian.PutUint32(buf, uint32(len(body)))
	_, err := w.Write(append(buf, body...))
	return err
}

// readFrame reads one frame's body, refusing one longer than limit bytes
// without reading (or allocating) it. At a clean end of input it returns
// io.EOF; a frame cut short is io.ErrUnexpectedEOF.
func readFrame(r *bufio.Reader, limit int64) ([]byte, error) {
	var h [frameHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(h[:]))
	if n > limit {
		return nil, fmt.Errorf("%w: %d bytes, the limit is %d", ErrFrameTooLarge, n, limit)
	}
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return body, nil
}

// config is what the parent tells a child to build.
type config struct {
	Language       string
	ComputeMs      float64
	MaxWallMs      float64
	MaxOutputBytes float64
	MaxMemoryMB    float64
}

// wireNamespace is a namespace as it crosses: its binding names only.
type wireNamespace struct {
	Global      string
	ErrorClass  string
	ErrorMember string
	Names       []string
}

// message is one decoded message of any type; only the fields of its type
// are meaningful.
type message struct {
	T string

	Config config // config

	Program  string          // run
	Bindings []wireNamespace // run

	ID       int64  // call, result
	NS       int    // call: the namespace's index in the run's bindings
	Name     string // call
	Args     any    // call
	OK       bool   // result
	Value    any    // result (ok), done (HasValue)
	HasValue bool   // done
	Error    string // result (!ok), misuse

	Entry string // log

	Kind    string // done (a failure)
	Message string // done (a failure)
}

// encode returns m's JSON text. Values (Args, Value) must be lossless JSON.
func (m *message) encode() ([]byte, error) {
	mem := []dsl.Member{{Key: "t", Value: m.T}}
	add := func(k string, v any) { mem = append(mem, dsl.Member{Key: k, Value: v}) }
	switch m.T {
	case msgConfig:
		add("language", m.Config.Language)
		add("computeMs", m.Config.ComputeMs)
		add("maxWallMs", m.Config.MaxWallMs)
		add("maxOutputBytes", m.Config.MaxOutputBytes)
		add("maxMemoryMB", m.Config.MaxMemoryMB)
	case msgRun:
		add("program", m.Program)
		ns := make([]any, len(m.Bindings))
		for i, b := range m.Bindings {
			names := make([]any, len(b.Names))
			for j, n := range b.Names {
				names[j] = n
			}
			ns[i] = dsl.NewObject(
				dsl.Member{Key: "global", Value: b.Global},
				dsl.Member{Key: "errorClass", Value: b.ErrorClass},
				dsl.Member{Key: "errorMember", Value: b.ErrorMember},
				dsl.Member{Key: "names", Value: names},
			)
		}
		add("bindings", ns)
	case msgResult:
		add("id", float64(m.ID))
		add("ok", m.OK)
		if m.OK {
			add("value", m.Value)
		} else {
			add("error", textValue(m.Error))
		}
	case msgReady:
	case msgCall:
		add("id", float64(m.ID))
		add("ns", float64(m.NS))
		add("name", m.Name)
		add("args", m.Args)
	case msgLog:
		add("entry", textValue(m.Entry))
	case msgDone:
		switch {
		case m.Kind != "":
			add("kind", m.Kind)
			add("message", textValue(m.Message))
		case m.HasValue:
			add("value", m.Value)
		}
	case msgMisuse:
		add("error", textValue(m.Error))
	default:
		return nil, fmt.Errorf("process: no message type %q", m.T)
	}
	return dsl.Marshal(dsl.NewObject(mem...))
}

// decode parses one message and checks its shape: the members of its type,
// each of the right JSON type, and no others. Values arrive as lossless JSON
// (dsl.Unmarshal refuses anything else). from says which side sent it:
// "child" or "parent", whose types it may carry.
func decode(body []byte, fromChild bool) (*message, error) {
	v, err := dsl.Unmarshal(body)
	if err != nil {
		return nil, fmt.Errorf("not JSON: %v", shortSyntaxError(err))
	}
	obj, ok := v.(*dsl.Object)
	if !ok {
		return nil, errors.New("not a JSON object")
	}
	t, ok := getString(obj, "t")
	if !ok {
		return nil, errors.New(`no string member "t"`)
	}
	m := &message{T: t}
	var want []string // the members the type has, besides t
	switch {
	case fromChild && t == msgReady:
	case fromChild && t == msgCall:
		want = []string{"id", "ns", "name", "args"}
		if m.ID, ok = getID(obj, "id"); !ok {
			return nil, badMember(t, "id", "a positive integer")
		}
		ns, ok := getID(obj, "ns")
		if !ok && !isZero(obj, "ns") {
			return nil, badMember(t, "ns", "a namespace index")
		}
		if ns > math.MaxInt32 {
			return nil, badMember(t, "ns", "a namespace index")
		}
		m.NS = int(ns)
		if m.Name, ok = getString(obj, "name"); !ok {
			return nil, badMember(t, "name", "a string")
		}
		m.Args, _ = obj.Get("args")
	case fromChild && t == msgLog:
		want = []string{"entry"}
		if m.Entry, ok = getText(obj, "entry"); !ok {
			return nil, badMember(t, "entry", "a string")
		}
	case fromChild && t == msgDone:
		switch {
		case obj.Has("kind"):
			want = []string{"kind", "message"}
			if m.Kind, ok = getString(obj, "kind"); !ok || !knownKind(m.Kind) {
				return nil, badMember(t, "kind", "a failure kind")
			}
			if m.Message, ok = getText(obj, "message"); !ok {
				return nil, badMember(t, "message", "a string")
			}
		case obj.Has("value"):
			want = []string{"value"}
			m.Value, _ = obj.Get("value")
			m.HasValue = true
		}
	case fromChild && t == msgMisuse:
		want = []string{"error"}
		if m.Error, ok = getText(obj, "error"); !ok {
			return nil, badMember(t, "error", "a string")
		}
	case !fromChild && t == msgConfig:
		want = []string{"language", "computeMs", "maxWallMs", "maxOutputBytes", "maxMemoryMB"}
		c := &m.Config
		if c.Language, ok = getString(obj, "language"); !ok {
			return nil, badMember(t, "language", "a string")
		}
		for _, f := range []struct {
			key string
			dst *float64
		}{{"computeMs", &c.ComputeMs}, {"maxWallMs", &c.MaxWallMs}, {"maxOutputBytes", &c.MaxOutputBytes}, {"maxMemoryMB", &c.MaxMemoryMB}} {
			x, ok := getNumber(obj, f.key)
			if !ok {
				return nil, badMember(t, f.key, "a number")
			}
			*f.dst = x
		}
	case !fromChild && t == msgRun:
		want = []string{"program", "bindings"}
		if m.Program, ok = getString(obj, "program"); !ok {
			return nil, badMember(t, "program", "a string")
		}
		raw, _ := obj.Get("bindings")
		list, ok := raw.([]any)
		if !ok {
			return nil, badMember(t, "bindings", "an array")
		}
		for _, item := range list {
			nsObj, ok := item.(*dsl.Object)
			if !ok || nsObj.Len() != 4 {
				return nil, badMember(t, "bindings", "an array of namespaces")
			}
			var ns wireNamespace
			g, ok1 := getString(nsObj, "global")
			c, ok2 := getString(nsObj, "errorClass")
			e, ok3 := getString(nsObj, "errorMember")
			names, ok4 := nsObj.Get("names")
			nameList, ok5 := names.([]any)
			if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
				return nil, badMember(t, "bindings", "an array of namespaces")
			}
			ns.Global, ns.ErrorClass, ns.ErrorMember = g, c, e
			for _, n := range nameList {
				s, ok := n.(string)
				if !ok {
					return nil, badMember(t, "bindings", "an array of namespaces")
				}
				ns.Names = append(ns.Names, s)
			}
			m.Bindings = append(m.Bindings, ns)
		}
	case !fromChild && t == msgResult:
		if m.ID, ok = getID(obj, "id"); !ok {
			return nil, badMember(t, "id", "a positive integer")
		}
		ok1, isBool := getBool(obj, "ok")
		if !isBool {
			return nil, badMember(t, "ok", "a boolean")
		}
		m.OK = ok1
		if m.OK {
			want = []string{"id", "ok", "value"}
			m.Value, _ = obj.Get("value")
		} else {
			want = []string{"id", "ok", "error"}
			if m.Error, ok = getText(obj, "error"); !ok {
				return nil, badMember(t, "error", "a string")
			}
		}
	default:
		return nil, fmt.Errorf("unexpected message type %s", quote(t))
	}
	if obj.Len() != len(want)+1 {
		return nil, fmt.Errorf("%s message has %d members, want %d", t, obj.Len(), len(want)+1)
	}
	for _, k := range want {
		if !obj.Has(k) {
			return nil, fmt.Errorf("%s message has no member %s", t, quote(k))
		}
	}
	return m, nil
}

func badMember(t, key, want string) error {
	return fmt.Errorf("%s message: member %s must be %s", t, quote(key), want)
}

// maxSyntaxMsg is the longest description of a JSON syntax error an error
// of decode carries: dsl quotes a duplicate key whole, and a child chooses
// its keys.
const maxSyntaxMsg = 128

// shortSyntaxError returns err with its description cut to maxSyntaxMsg
// bytes (between characters).
func shortSyntaxError(err error) error {
	var se *dsl.SyntaxError
	if !errors.As(err, &se) || len(se.Msg) <= maxSyntaxMsg {
		return err
	}
	msg := se.Msg[:maxSyntaxMsg]
	for len(msg) > 0 && !utf8.RuneStart(se.Msg[len(msg)]) {
		msg = msg[:len(msg)-1]
	}
	return &dsl.SyntaxError{Offset: se.Offset, Msg: msg + "…"}
}

// quote quotes s for a message, cut to 64 bytes.
func quote(s string) string {
	if len(s) > 64 {
		s = s[:64] + "…"
	}
	return strconv.Quote(s)
}

func getString(o *dsl.Object, k string) (string, bool) {
	v, _ := o.Get(k)
	s, ok := v.(string)
	return s, ok
}

// textValue is how a text that may not be UTF-8 crosses (a log entry, a
// failure's message: a JavaScript string with a lone surrogate is WTF-8): a
// JSON string when it is valid UTF-8, else {"base64": its bytes}.
func textValue(s string) any {
	if utf8.ValidString(s) {
		return s
	}
	return dsl.NewObject(dsl.Member{Key: "base64", Value: base64.StdEncoding.EncodeToString([]byte(s))})
}

// getText reads what textValue wrote. The base64 form must be canonical, as
// textValue writes it: padded, its padding bits zero, no line breaks.
func getText(o *dsl.Object, k string) (string, bool) {
	v, _ := o.Get(k)
	switch x := v.(type) {
	case string:
		return x, true
	case *dsl.Object:
		b64, ok := getString(x, "base64")
		if !ok || x.Len() != 1 || strings.ContainsAny(b64, "\r\n") {
			return "", false
		}
		b, err := base64.StdEncoding.Strict().DecodeString(b64)
		if err != nil || utf8.Valid(b) {
			return "", false // valid UTF-8 always crosses as a string
		}
		return string(b), true
	}
	return "", false
}

func getBool(o *dsl.Object, k string) (bool, bool) {
	v, _ := o.Get(k)
	b, ok := v.(bool)
	return b, ok
}

func getNumber(o *dsl.Object, k string) (float64, bool) {
	v, _ := o.Get(k)
	x, ok := v.(float64)
	return x, ok
}

// getID reads a positive safe integer.
func getID(o *dsl.Object, k string) (int64, bool) {
	x, ok := getNumber(o, k)
	if !ok || x < 1 || x > 1<<53-1 || x != math.Trunc(x) {
		return 0, false
	}
	return int64(x), true
}

func isZero(o *dsl.Object, k string) bool {
	x, ok := getNumber(o, k)
	return ok && x == 0
}

// knownKind reports whether k is a failure kind of §3.1.
func knownKind(k string) bool {
	switch ptc.Kind(k) {
	case ptc.KindException, ptc.KindTimeout, ptc.KindAbort, ptc.KindWorkerExit, ptc.KindInvalidOutput, ptc.KindOutputLimit:
		return true
	}
	return false
}
