package tests

import (
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/internal/testtime"
)

// The txtar runners keep their fixtures as written and scale the budgets in
// them by the tests' time scale (internal/testtime, DSH_TEST_TIMESCALE): a
// fixture about a budget writes it as it means it ("timeoutMs: 50", "tool
// call timed out after 50ms"), and under a scale of 2 it runs with 100ms
// and expects "after 100ms". Fixtures run in this process (under the race
// detector in make test) take testtime.Scale; those run by the dsh binary
// the tests build (without it) take testtime.ScaleWithoutRace.

// budgetForm is a budget in milliseconds as fixtures write it in a plugin:
// timeoutMs: N in JavaScript, timeout_ms = N in Lua.
var budgetForm = regexp.MustCompile(`\b(timeoutMs: |timeout_ms = )(\d+)\b`)

// budgetFlags are the dsh flags whose value is a budget in milliseconds.
var budgetFlags = []string{"--ptc-compute-ms", "--ptc-wall-ms"}

// msText is a duration in whole milliseconds as messages show it ("250ms").
var msText = regexp.MustCompile(`\b(\d+)ms\b`)

// budgets are the budgets of one fixture: each as written, and scaled.
type budgets struct {
	scale  float64
	scaled map[int64]int64
}

// newBudgets returns the budgets of a fixture whose budgets are multiplied
// by scale.
func newBudgets(scale float64) *budgets {
	return &budgets{scale: scale, scaled: map[int64]int64{}}
}

// add records a budget of ms milliseconds and returns it scaled, rounded to
// the millisecond and at least 1ms (as testtime.Ms).
func (b *budgets) add(ms int64) int64 {
	b.scaled[ms] = max(1, int64(math.Round(float64(ms)*b.scale)))
	return b.scaled[ms]
}

// d returns a bound of the fixture (not a budget its messages show)
// scaled.
func (b *budgets) d(d time.Duration) time.Duration {
	return time.Duration(float64(d) * b.scale)
}

// source returns a plugin's text with each budget in it scaled, and
// records them.
func (b *budgets) source(text string) string {
	return budgetForm.ReplaceAllStringFunc(text, func(m string) string {
		g := budgetForm.FindStringSubmatch(m)
		ms, err := strconv.ParseInt(g[2], 10, 64)
		if err != nil {
			return m
		}
		return g[1] + strconv.FormatInt(b.add(ms), 10)
	})
}

// flags returns dsh arguments with the value of each budget flag scaled
// (--ptc-compute-ms 500 or --ptc-compute-ms=500), and records them.
func (b *budgets) flags(args []string) []string {
	out := slices.Clone(args)
	scale := func(v string) string {
		ms, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return v // dsh reports it
		}
		return strconv.FormatInt(b.add(ms), 10)
	}
	for i, a := range out {
		name, v, eq := strings.Cut(a, "=")
		if !slices.Contains(budgetFlags, name) {
			continue
		}
		switch {
		case eq:
			out[i] = name + "=" + scale(v)
		case i+1 < len(out):
			out[i+1] = scale(out[i+1])
		}
	}
	return out
}

// text returns an expectation (a result, a message or a regular expression
// for one) with every "Nms" whose N is a recorded budget scaled.
func (b *budgets) text(s string) string {
	return msText.ReplaceAllStringFunc(s, func(m string) string {
		ms, err := strconv.ParseInt(m[:len(m)-2], 10, 64)
		if err != nil {
			return m
		}
		if scaled, ok := b.scaled[ms]; ok {
			return strconv.FormatInt(scaled, 10) + "ms"
		}
		return m
	})
}

func TestBudgetsScaleFixtures(t *testing.T) {
	b := newBudgets(2)
	src := b.source(`defineTool({ name: "slow", timeoutMs: 50 }); dsh.define_tool { timeout_ms = 100 }; later(50)`)
	if want := `defineTool({ name: "slow", timeoutMs: 100 }); dsh.define_tool { timeout_ms = 200 }; later(50)`; src != want {
		t.Errorf("source:\ngot  %s\nwant %s", src, want)
	}
	args := b.flags([]string{"--ptc-compute-ms", "500", "--ptc-wall-ms=2000", "--ptc-max-output", "300"})
	if want := []string{"--ptc-compute-ms", "1000", "--ptc-wall-ms=4000", "--ptc-max-output", "300"}; !slices.Equal(args, want) {
		t.Errorf("flags: got %q, want %q", args, want)
	}
	for _, tt := range []struct{ in, want string }{
		{`tool call timed out after 50ms`, `tool call timed out after 100ms`},
		{`timed out after 100ms, then 50ms`, `timed out after 200ms, then 100ms`},
		{`^compute budget exhausted \(500ms busy\)$`, `^compute budget exhausted \(1000ms busy\)$`},
		{`wall-clock ceiling reached (2000ms)`, `wall-clock ceiling reached (4000ms)`},
		{`a sleep of 300ms and 500mss`, `a sleep of 300ms and 500mss`},
	} {
		if got := b.text(tt.in); got != tt.want {
			t.Errorf("text(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
	if got := b.d(10 * time.Second); got != 20*time.Second {
		t.Errorf("d(10s) = %v, want 20s", got)
	}
	if got := newBudgets(1.5).add(25); got != 38 {
		t.Errorf("25ms at a scale of 1.5 = %dms, want 38ms (rounded)", got)
	}
}

func TestTheRunnersTakeTheScaleOfWhereTheBudgetsRun(t *testing.T) {
	t.Setenv(testtime.EnvVar, "3")
	if got := newBudgets(testtime.ScaleWithoutRace()).add(100); got != 300 {
		t.Errorf("a budget of the dsh binary under DSH_TEST_TIMESCALE=3: %dms, want 300ms", got)
	}
	if got := newBudgets(testtime.Scale()).add(100); got != 300 {
		t.Errorf("a budget of this process under DSH_TEST_TIMESCALE=3: %dms, want 300ms", got)
	}
}
