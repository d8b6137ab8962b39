package cli

import (
	"io"
	"strings"
	"testing"
)

// Every line the log writes is read back: a line it wrote cut to fit
// engine.MaxLogLine is read as written, and a line over the bound, which no
// dsh writes, is read through and left out with the rest of the log read.
func TestReadRecordsOfLongLines(t *testing.T) {
	const (
		call   = `{"id":"e1","type":"tool/call","agent":"main","callId":"c1","name":"a","arguments":{}}`
		cut    = `{"id":"e2","type":"tool/result","agent":"main","callId":"c1","content":[{"type":"text","text":"x… (truncated)"}],"isError":false,"callEvent":"e1","truncated":75497670}`
		call2  = `{"id":"e3","type":"tool/call","agent":"main","callId":"c2","name":"a","arguments":{}}`
		result = `{"id":"e4","type":"tool/result","agent":"main","callId":"c2","content":[],"isError":false,"callEvent":"e3"}`
	)
	t.Run("a line the log cut is read as written and named", func(t *testing.T) {
		log, err := readRecords(strings.NewReader(call+"\n"+cut+"\n"), "log")
		if err != nil {
			t.Fatal(err)
		}
		if len(log.recs) != 2 || len(log.shortened) != 1 || log.shortened[0].line != 2 || log.shortened[0].bytes != 75497670 {
			t.Fatalf("%d records, shortened %+v", len(log.recs), log.shortened)
		}
		if _, ok := log.recs[1].data.Get("truncated"); ok {
			t.Error("the marker is in the event's payload")
		}
	})
	t.Run("a line over 64 MiB is left out and the lines after it are read", func(t *testing.T) {
		r := io.MultiReader(strings.NewReader(call+"\n"+`{"id":"e2","type":"tool/result","content":"`),
			&repeatReader{c: 'x', n: maxLogLine}, strings.NewReader(`"}`+"\n"+call2+"\n"+result+"\n"))
		log, err := readRecords(r, "log")
		if err != nil {
			t.Fatal(err)
		}
		if len(log.recs) != 3 || len(log.skipped) != 1 || log.skipped[0].Line != 2 {
			t.Fatalf("%d records, skipped %+v", len(log.recs), log.skipped)
		}
		if got := log.skipped[0].Error(); got != "the line has 67108909 bytes, over the 67108864 a line may have: skipped" {
			t.Errorf("message %q", got)
		}
	})
	t.Run("a marker that is not a positive integer is an error", func(t *testing.T) {
		_, err := readRecords(strings.NewReader(call+"\n"+strings.Replace(cut, "75497670", `"x"`, 1)+"\n"), "log")
		if err == nil || err.Error() != `log:2: "truncated" must be a positive integer` {
			t.Errorf("err = %v", err)
		}
	})
}
