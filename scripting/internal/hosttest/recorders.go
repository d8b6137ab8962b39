package hosttest

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// Asker is an elicitation function (engine.WithElicit) recording the
// questions it gets, one line each: the message quoted, then the schema's
// Go type and JSON, or "none".
type Asker struct {
	mu    sync.Mutex
	asked []string
}

// Ctx returns a context whose questions a records and answers with answer,
// or with err.
func (a *Asker) Ctx(answer engine.ElicitResult, err error) context.Context {
	return engine.WithElicit(context.Background(), func(_ context.Context, q engine.Elicitation) (engine.ElicitResult, error) {
		a.Record(q)
		return answer, err
	})
}

// Record records q.
func (a *Asker) Record(q engine.Elicitation) {
	schema := "none"
	if q.Schema != nil {
		b, err := dsl.Marshal(q.Schema)
		if err != nil {
			panic(err)
		}
		schema = fmt.Sprintf("%T %s", q.Schema, b)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked = append(a.asked, fmt.Sprintf("%q %s", q.Message, schema))
}

// Take returns the questions recorded so far and forgets them.
func (a *Asker) Take() string {
	a.mu.Lock()
	defer a.mu.Unlock()
	out := strings.Join(a.asked, "\n")
	a.asked = nil
	return out
}

// Progress records the progress reports (engine.WithProgress) of calls,
// one line each: "<call>: <progress>/<total> <message quoted>".
type Progress struct {
	mu  sync.Mutex
	got []string
}

// Ctx returns a context whose reports p records under call.
func (p *Progress) Ctx(call string) context.Context {
	return engine.WithProgress(context.Background(), func(r engine.Progress) {
		p.mu.Lock()
		defer p.mu.Unlock()
		p.got = append(p.got, fmt.Sprintf("%s: %v/%v %q\n", call, r.Progress, r.Total, r.Message))
	})
}

// Take returns the reports recorded so far and forgets them.
func (p *Progress) Take() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := strings.Join(p.got, "")
	p.got = nil
	return out
}

// Within returns what ch delivers, and fails t when nothing comes within a
// bound against a hang (not a timing assertion).
func Within[T any](t *testing.T, what string, ch <-chan T) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never happened", what)
		panic("unreachable")
	}
}
