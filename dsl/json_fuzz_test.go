package dsl

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"strconv"
	"strings"
	"testing"
)

func FuzzUnmarshalMarshal(f *testing.F) {
	for _, seed := range []string{
		``, `null`, `true`, `0`, `-1.5e-7`, `1e+21`, `123e-20`, `9007199254740992`, `1e20`,
		`"a\"\\\/\b\f\n\r\t\u0000\u00e9\ud83d\ude00"`, "\"\u2028<&>\x7f\"",
		`[]`, `{}`, `[1,[2,[3,{}]]]`, `{"b":1,"a":{"c":[null,true,false]}}`,
		`{"a":1,"a":2}`, `[1,]`, `{"a" 1}`, `"\ud800"`, "\"\xff\"", "\xef\xbb\xbf1", `-0`, `1e400`, `1e-400`,
		`{"k0":0,"k1":1,"k2":2,"k3":3,"k4":4,"k5":5,"k6":6,"k7":7,"k8":8,"k9":9}`,
		" \t\n\r[ 1 , 2 ] ", `[[[[[[[[`, `{"":""}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Unmarshal(data)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %v is not a *SyntaxError", err)
			}
			if se.Offset < 0 || se.Offset > int64(len(data)) {
				t.Fatalf("offset %d outside the %d-byte input", se.Offset, len(data))
			}
			if v != nil {
				t.Fatalf("value %#v returned with the error", v)
			}
			return
		}
		if !json.Valid(data) {
			t.Fatalf("accepted %q, which encoding/json says is not JSON", data)
		}
		var theirs any
		if err := json.Unmarshal(data, &theirs); err != nil {
			t.Fatalf("encoding/json refuses %q: %v", data, err)
		}
		if !reflect.DeepEqual(jsonPlain(v), theirs) {
			t.Fatalf("read %#v, encoding/json reads %#v", jsonPlain(v), theirs)
		}

		text, err := Marshal(v)
		if err != nil {
			t.Fatalf("Marshal of a decoded value failed: %v", err)
		}
		// A snapshot is an equal, detached copy that writes the same text.
		snap, err := Snapshot(v)
		if err != nil {
			t.Fatalf("Snapshot of a decoded value failed: %v", err)
		}
		if !Equal(snap, v) {
			t.Fatalf("Snapshot differs from its input")
		}
		if snapText, err := Marshal(snap); err != nil || !bytes.Equal(snapText, text) {
			t.Fatalf("Marshal(Snapshot(v)) = %s, %v; Marshal(v) = %s", snapText, err, text)
		}
		v2, err := Unmarshal(text)
		if err != nil {
			t.Fatalf("Unmarshal(%s) of Marshal's output failed: %v", text, err)
		}
		text2, err := Marshal(v2)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(text, text2) {
			t.Fatalf("text changed on the second round trip:\n%s\n%s", text, text2)
		}
		if !Equal(v, v2) {
			t.Fatalf("values differ after a round trip through %s", text)
		}
	})
}

func FuzzMarshalNumber(f *testing.F) {
	for _, x := range []float64{
		0, 1, -1, 0.1, 0.5, 100, 1e20, 1e21, 1e-6, 1e-7, 1.5e-7, 123e-20, 5e-324,
		1 << 53, 1<<53 + 2, 1e300, math.MaxFloat64, -math.MaxFloat64, 2.2250738585072014e-308,
		123456789012345680000, math.Pi, math.NaN(), math.Inf(1), math.Inf(-1), math.Copysign(0, -1),
	} {
		f.Add(math.Float64bits(x))
	}
	f.Fuzz(func(t *testing.T, bits uint64) {
		x := math.Float64frombits(bits)
		text, err := Marshal(x)
		if math.IsNaN(x) || math.IsInf(x, 0) || x == 0 && math.Signbit(x) {
			var se *SnapshotError
			if !errors.As(err, &se) || se.Path != "value" || !strings.HasSuffix(se.Reason, " is not lossless JSON") {
				t.Fatalf("Marshal(%v) = %s, %v; want a refusal", x, text, err)
			}
			return
		}
		if err != nil {
			t.Fatalf("Marshal(%v): %v", x, err)
		}
		back, err := strconv.ParseFloat(string(text), 64)
		if err != nil || math.Float64bits(back) != bits {
			t.Fatalf("Marshal(%016x) = %s, which parses to %016x (%v)", bits, text, math.Float64bits(back), err)
		}
		// encoding/json also writes numbers as ECMAScript does.
		theirs, err := json.Marshal(x)
		if err != nil || !bytes.Equal(text, theirs) {
			t.Fatalf("Marshal(%v) = %s, encoding/json writes %s (%v)", x, text, theirs, err)
		}
		if v, err := Unmarshal(text); err != nil || v != x {
			t.Fatalf("Unmarshal(%s) = %v, %v; want %v", text, v, err, x)
		}
	})
}
