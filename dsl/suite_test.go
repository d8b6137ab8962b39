package dsl_test

// The official JSON-Schema-Test-Suite (draft 2020-12 files copied to
// ../shared/testdata/json-schema-test-suite) run against the enforced subset:
// a case whose schema (without its root $schema) passes AssertSupported must
// validate every test exactly as the suite says; the other cases are counted
// as outside the subset. The counts are printed after the run (TestMain), so
// they show without -v whenever go test shows the binary's output (package
// directory mode, -v, or a failure).

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
)

// suiteSummary is printed by TestMain after the tests ran.
var suiteSummary string

func TestMain(m *testing.M) {
	code := m.Run()
	if suiteSummary != "" {
		fmt.Println(suiteSummary)
	}
	os.Exit(code)
}

// suiteDir is the suite folder, relative to this package directory.
var suiteDir = filepath.Join("..", "..", "shared", "testdata", "json-schema-test-suite")

// deliberateDifferences lists suite tests ("file/case/test") where our
// verdict differs from the suite's on purpose, with the reason. Each entry
// must still differ (a stale entry fails the test). None so far: the
// documented differences (-0 is not a number, type-less values must be
// lossless) cannot arise from plain JSON test data.
var deliberateDifferences = map[string]string{}

type suiteCase struct {
	Description string          `json:"description"`
	Schema      json.RawMessage `json:"schema"`
	Tests       []struct {
		Description string          `json:"description"`
		Data        json.RawMessage `json:"data"`
		Valid       bool            `json:"valid"`
	} `json:"tests"`
}

// fromSuiteJSON decodes JSON text with encoding/json (UseNumber) and converts
// it to the dsl Go form itself, independently of dsl.Unmarshal. Object keys
// are sorted (encoding/json does not keep them; no suite verdict depends on
// key order). Numbers that are not lossless (§1.8: -0, overflow, non-zero
// underflow, integer literals beyond ±2^53) are an error.
func fromSuiteJSON(raw []byte) (any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return fromSuiteValue(v)
}

var errNotLossless = errors.New("not lossless")

func fromSuiteValue(v any) (any, error) {
	switch v := v.(type) {
	case nil, bool, string:
		return v, nil
	case json.Number:
		s := v.String()
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || math.IsInf(f, 0) {
			return nil, fmt.Errorf("number %s: %w", s, errNotLossless)
		}
		mantissa, _, _ := strings.Cut(strings.ToLower(s), "e")
		if f == 0 && (math.Signbit(f) || strings.ContainsAny(mantissa, "123456789")) {
			return nil, fmt.Errorf("number %s: %w", s, errNotLossless)
		}
		if !strings.ContainsAny(s, ".eE") {
			// An integer literal must be exact: parse it as an integer, not
			// through float64, which rounds 2^53+1 down to 2^53.
			n, err := strconv.ParseInt(s, 10, 64)
			if err != nil || n > 1<<53 || n < -(1<<53) {
				return nil, fmt.Errorf("integer %s beyond ±2^53: %w", s, errNotLossless)
			}
		}
		return f, nil
	case []any:
		out := make([]any, len(v))
		for i, e := range v {
			c, err := fromSuiteValue(e)
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	case map[string]any:
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		o := dsl.NewObject()
		for _, k := range keys {
			c, err := fromSuiteValue(v[k])
			if err != nil {
				return nil, err
			}
			o.Set(k, c)
		}
		return o, nil
	default:
		return nil, fmt.Errorf("unexpected %T", v)
	}
}

func TestJSONSchemaTestSuite(t *testing.T) {
	files, err := filepath.Glob(filepath.Join(suiteDir, "*.json"))
	if err != nil || len(files) == 0 {
		suiteSummary = "JSON-Schema-Test-Suite: skipped, no *.json in " + suiteDir + " (the suite sits beside the checkout, in ../shared, for developers and CI only)"
		t.Skip(suiteSummary)
	}
	var total, inSubset, rejected, rejectedNumbers, tests, skippedData, deliberate int
	seen := map[string]bool{}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		var cases []suiteCase
		if err := json.Unmarshal(raw, &cases); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		base := strings.TrimSuffix(filepath.Base(file), ".json")
		for _, c := range cases {
			total++
			caseName := base + "/" + c.Description
			schema, err := fromSuiteJSON(c.Schema)
			if err != nil {
				rejected++
				rejectedNumbers++
				t.Logf("outside the subset: %s: schema %v", caseName, err)
				continue
			}
			if o, ok := schema.(*dsl.Object); ok {
				o.Delete("$schema")
			}
			if err := dsl.AssertSupported(schema); err != nil {
				rejected++
				t.Logf("outside the subset: %s: %v", caseName, err)
				continue
			}
			inSubset++
			compiled, err := dsl.Compile(schema)
			if err != nil {
				t.Errorf("%s: AssertSupported accepted the schema but Compile failed: %v", caseName, err)
				continue
			}
			for _, test := range c.Tests {
				name := caseName + "/" + test.Description
				data, err := fromSuiteJSON(test.Data)
				if err != nil {
					skippedData++
					t.Logf("not run: %s: data %v", name, err)
					continue
				}
				tests++
				got := compiled.Validate(data)
				valid := len(got) == 0
				reason, listed := deliberateDifferences[name]
				seen[name] = true
				switch {
				case valid == test.Valid && listed:
					t.Errorf("%s: listed as a deliberate difference (%s) but agrees with the suite; remove the entry", name, reason)
				case valid != test.Valid && listed:
					deliberate++
					t.Logf("deliberate difference: %s: %s", name, reason)
				case valid != test.Valid:
					t.Errorf("%s: schema %s, data %s: suite says valid=%v, got violations %q", name, c.Schema, test.Data, test.Valid, got)
				}
			}
		}
	}
	for name := range deliberateDifferences {
		if !seen[name] {
			t.Errorf("deliberate difference %q names no test that ran", name)
		}
	}
	suiteSummary = fmt.Sprintf("JSON-Schema-Test-Suite (draft 2020-12, %d files): %d cases; %d in the enforced subset (%d tests run, %d deliberate differences, %d tests not run for non-lossless data); %d rejected as outside the subset (%d of them for non-lossless numbers)",
		len(files), total, inSubset, tests, deliberate, skippedData, rejected, rejectedNumbers)
	t.Log(suiteSummary)
	if inSubset == 0 {
		t.Error("no suite case is in the subset; the conversion or the assertion is broken")
	}
}

func TestSuiteNumberConversion(t *testing.T) {
	// The converter above is test code; check it before trusting its counts.
	cases := []struct {
		text string
		ok   bool
	}{
		{"1", true}, {"1.0", true}, {"-2.5e3", true}, {"0", true}, {"0.0", true}, {"0e10", true},
		{"9007199254740992", true}, {"-9007199254740992", true}, {"9007199254740992.0", true},
		{"9007199254740993", false}, {"12345678910111213141516171819202122232425262728293031", false},
		{"-0", false}, {"-0.0", false}, {"1e400", false}, {"-1e400", false}, {"1e-400", false},
	}
	for _, tc := range cases {
		t.Run(tc.text, func(t *testing.T) {
			_, err := fromSuiteJSON([]byte(tc.text))
			if (err == nil) != tc.ok {
				t.Errorf("fromSuiteJSON(%s) error %v; want ok=%v", tc.text, err, tc.ok)
			}
		})
	}
}
