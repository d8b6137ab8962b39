package engine_test

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// Every line a JSONLLog writes fits engine.MaxLogLine, the line bound of
// its reader: an event whose line would be longer is written cut, marked.
func TestJSONLLogCutsLinesToItsBound(t *testing.T) {
	agent := engine.NewAgent("main", nil)
	// A control character is escaped in six bytes: 12 MiB of them made a
	// 75 MB line.
	control := strings.Repeat("\x01", 12<<20)
	kept := strings.Repeat(`\u0001`, 64<<10) + "… (truncated)"
	block := strings.Repeat("\x01", 64<<10) // 384 KiB escaped
	many := make([]engine.Block, 200)       // 77 MB escaped, each string within 64 KiB
	for i := range many {
		many[i] = engine.Text(block)
	}
	for _, tc := range []struct {
		name    string
		content []engine.Block
		want    string // the line's payload, after the envelope; FULL is the whole line's size
	}{
		{"a long string keeps its first 64 KiB, marked", []engine.Block{engine.Text(control), engine.Text("short")},
			`"callId":"c1","content":[{"type":"text","text":"` + kept + `"},{"type":"text","text":"short"}],"isError":false,"callEvent":"e0","truncated":FULL`},
		{"an event still too long keeps its identity and says what was left out", many,
			`"callId":"c1","callEvent":"e0","isError":false,"content":[{"type":"text","text":"(left out of the log: the event's line had FULL bytes, over the log's 67108864)"}],"truncated":FULL`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := engine.NewJSONLLog(&buf)
			r := &engine.Result{Value: "v", Content: tc.content}
			if _, err := log.Append(context.Background(), engine.ToolResultEvent(agent, "c1", "e0", r)); err != nil {
				t.Fatal(err)
			}
			line := buf.String()
			if len(line) > engine.MaxLogLine {
				t.Fatalf("a %d-byte line", len(line))
			}
			// The size the line gives is that of the line the log would
			// have written whole.
			whole, err := dsl.Marshal(engine.ToolResultEvent(agent, "c1", "e0", r).Data)
			if err != nil {
				t.Fatal(err)
			}
			envelope := len(`{"id":"e1","type":"tool/result","agent":"main","time":"2006-01-02T15:04:05.000Z",` + "\n")
			full := strconv.Itoa(len(whole) + envelope - len("{"))
			m := regexp.MustCompile(`^\{"id":"e1","type":"tool/result","agent":"main","time":"[^"]+",(.*)\}\n$`).FindStringSubmatch(line)
			if want := strings.ReplaceAll(tc.want, "FULL", full); m == nil || m[1] != want {
				t.Errorf("line %.300q… (%d bytes); want the whole line's %s bytes", line, len(line), full)
			}
		})
	}
	t.Run("a line within the bound is written whole", func(t *testing.T) {
		var buf bytes.Buffer
		log := engine.NewJSONLLog(&buf)
		text := strings.Repeat("x", 60<<20)
		if _, err := log.Append(context.Background(), engine.ToolResultEvent(agent, "c1", "e0", &engine.Result{Value: "v", Content: []engine.Block{engine.Text(text)}})); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(buf.String(), `"text":"`+text+`"`) || strings.Contains(buf.String(), `"truncated"`) {
			t.Errorf("the line was cut")
		}
	})
}
