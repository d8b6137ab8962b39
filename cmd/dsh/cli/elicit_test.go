package cli

import (
	"context"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// askForm is the form the prompt tests ask.
func askForm(t *testing.T) engine.Elicitation {
	t.Helper()
	schema, err := dsl.Unmarshal([]byte(`{"type":"object","properties":{
		"name":{"type":"string","description":"Your name"},
		"agree":{"type":"boolean"},
		"age":{"type":"integer","default":30},
		"colour":{"type":"string","enum":["red","green"]},
		"tags":{"type":"array","items":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	return engine.Elicitation{Message: "Who are you?", Schema: schema}
}

func TestThePromptAsksAToolsQuestion(t *testing.T) {
	for _, tc := range []struct {
		name, input, want, prompts string
	}{
		{"yes fills the form, a property a line", "y\nAda\nyes\n36\nred\na, b\n",
			`{"action":"accept","content":{"name":"Ada","agree":true,"age":36,"colour":"red","tags":["a","b"]}}`,
			"dsh: a tool asks: Who are you?\nAnswer? [y/N]   name (string, Your name):   agree (boolean):   age (integer) [30]:   colour (string, one of red|green):   tags (array): "},
		{"an empty line leaves a property out", "yes\n\n\n\n\n\n", `{"action":"accept","content":{}}`, ""},
		{"a value not of its type is asked again", "y\nAda\nmaybe\nn\n3.5\n4\nblue\ngreen\n\n",
			`{"action":"accept","content":{"name":"Ada","agree":false,"age":4,"colour":"green"}}`,
			"  agree (boolean):   → answer y or n\n  agree (boolean):   age (integer) [30]:   → answer a whole number\n  age (integer) [30]:   colour (string, one of red|green):   → answer one of red|green\n"},
		{"anything but yes declines", "no\n", `{"action":"decline","content":null}`, ""},
		{"the end of the input cancels", "y\nAda\n", `{"action":"cancel","content":null}`, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			answers := newLineReader(strings.NewReader(tc.input))
			defer answers.close()
			a := approvalService(approvePrompt, answers, defaultApprovalTimeout, &stderr).(*promptApproval)
			res, err := a.elicit(context.Background(), askForm(t))
			if err != nil {
				t.Fatal(err)
			}
			got, _ := dsl.Marshal(dsl.NewObject(dsl.Member{Key: "action", Value: res.Action}, dsl.Member{Key: "content", Value: res.Content}))
			if string(got) != tc.want {
				t.Errorf("answer %s, want %s", got, tc.want)
			}
			if !strings.Contains(stderr.String(), tc.prompts) {
				t.Errorf("stderr %q, want it to hold %q", stderr.String(), tc.prompts)
			}
		})
	}
}

func TestThePromptCancelsAQuestionNobodyAnswers(t *testing.T) {
	r, w := io.Pipe() // nobody types, and the input stays open
	defer w.Close()
	answers := newLineReader(r)
	defer answers.close()
	var stderr strings.Builder
	a := approvalService(approvePrompt, answers, 50*time.Millisecond, &stderr).(*promptApproval)
	res, err := a.elicit(context.Background(), askForm(t))
	if err != nil || res.Action != "cancel" || res.Content != nil {
		t.Errorf("elicit = %+v, %v; want cancel", res, err)
	}
	if want := "Answer? [y/N] \n  → no answer within 50ms (--approval-timeout): cancelled\n"; !strings.HasSuffix(stderr.String(), want) {
		t.Errorf("stderr %q, want it to end with %q", stderr.String(), want)
	}
	w.CloseWithError(errors.New("done")) // lets the reader's goroutine end
}

func TestThePromptsQuestionEndsWithItsCall(t *testing.T) {
	r, w := io.Pipe() // nobody types
	defer w.Close()
	answers := newLineReader(r)
	defer answers.close()
	a := approvalService(approvePrompt, answers, defaultApprovalTimeout, io.Discard).(*promptApproval)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		time.Sleep(10 * time.Millisecond)
		cancel()
	}()
	if _, err := a.elicit(ctx, askForm(t)); !errors.Is(err, context.Canceled) {
		t.Errorf("elicit error %v, want context.Canceled", err)
	}
	w.CloseWithError(errors.New("done")) // lets the reader's goroutine end
}

func TestThePromptSendsTheUserToAURL(t *testing.T) {
	q := engine.Elicitation{Message: "Sign in", URL: "https://example.com/sign-in", ID: "e1"}
	for _, tc := range []struct{ name, input, want string }{
		{"yes accepts, without content", "y\n", "accept"},
		{"anything else declines", "later\n", "decline"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var stderr strings.Builder
			answers := newLineReader(strings.NewReader(tc.input))
			defer answers.close()
			a := approvalService(approvePrompt, answers, defaultApprovalTimeout, &stderr).(*promptApproval)
			res, err := a.elicit(context.Background(), q)
			if err != nil || res.Action != tc.want || res.Content != nil {
				t.Errorf("elicit = %+v, %v; want %s without content", res, err, tc.want)
			}
			if want := "dsh: a tool asks you to open a URL: Sign in\n  https://example.com/sign-in\nDone? [y/N] "; stderr.String() != want {
				t.Errorf("stderr %q, want %q", stderr.String(), want)
			}
		})
	}
}
