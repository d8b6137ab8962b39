package dsl_test

// The official JSON-Schema-Test-Suite (its draft 2020-12 files) run against
// the enforced subset: a case whose schema (without its root $schema) passes
// AssertSupported must validate every test exactly as the suite says; the
// other cases are counted as outside the subset. The suite is not part of the
// repository: the folder holding its *.json files is named by the environment
// variable DSH_JSON_SCHEMA_TEST_SUITE (.ci/run sets it), and the test skips
// when the variable is unset. The counts, or why the suite was skipped, are
// printed after the run (TestMain), so they show without -v whenever go test
// shows the binary's output (package directory mode, -v, or a failure).

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

// suiteEnv names the environment variable that holds the suite's folder.
const suiteEnv = "DSH_JSON_SCHEMA_TEST_SUITE"

// suiteFiles returns the suite's *.json files in the folder named by the
// environment variable suiteEnv, as getenv reads it. An unset or empty
// variable gives no files and the reason to skip; a folder without *.json
// files is an error, since the variable was set to run the suite.
func suiteFiles(getenv func(string) string) (files []string, skip string, err error) {
	dir := getenv(suiteEnv)
	if dir == "" {
		return nil, "JSON-Schema-Test-Suite: skipped, " + suiteEnv + " is not set (set it to a folder of the suite's draft 2020-12 *.json files to run it)", nil
	}
	files, err = filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, "", fmt.Errorf("%s=%s: %v", suiteEnv, dir, err)
	}
	if len(files) == 0 {
		return nil, "", fmt.Errorf("%s=%s: no *.json files in that folder", suiteEnv, dir)
	}
	return files, "", nil
}

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
	files, skip, err := suiteFiles(os.Getenv)
	if err != nil {
		suiteSummary = "JSON-Schema-Test-Suite: " + err.Error()
		t.Fatal(err)
	}
	if skip != "" {
		suiteSummary = skip
		t.Skip(skip)
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

func TestSuiteFilesComeFromTheEnvironment(t *testing.T) {
	// Where the suite is found is test code too; check it before trusting a
	// skip or a count.
	withJSON := t.TempDir()
	for _, name := range []string{"type.json", "enum.json", "README.md"} {
		if err := os.WriteFile(filepath.Join(withJSON, name), []byte("[]"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	empty := t.TempDir()
	cases := []struct {
		name      string
		value     string
		wantFiles []string
		wantSkip  string
		wantErr   string
	}{
		{
			name:     "an unset variable skips the suite and says which variable to set",
			wantSkip: "JSON-Schema-Test-Suite: skipped, DSH_JSON_SCHEMA_TEST_SUITE is not set (set it to a folder of the suite's draft 2020-12 *.json files to run it)",
		},
		{
			name:    "a folder without json files is an error naming the folder",
			value:   empty,
			wantErr: "DSH_JSON_SCHEMA_TEST_SUITE=" + empty + ": no *.json files in that folder",
		},
		{
			name:      "a folder of json files gives those files and no others",
			value:     withJSON,
			wantFiles: []string{filepath.Join(withJSON, "enum.json"), filepath.Join(withJSON, "type.json")},
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			getenv := func(k string) string {
				if k != suiteEnv {
					t.Errorf("read the variable %q, want %q", k, suiteEnv)
				}
				return tc.value
			}
			files, skip, err := suiteFiles(getenv)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			if gotErr != tc.wantErr || skip != tc.wantSkip || !slices.Equal(files, tc.wantFiles) {
				t.Errorf("suiteFiles() = %q, skip %q, error %q; want %q, skip %q, error %q", files, skip, gotErr, tc.wantFiles, tc.wantSkip, tc.wantErr)
			}
		})
	}
}
