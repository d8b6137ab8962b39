package cli

import (
	"bufio"
	"context"
	"io"
	"strings"
	"testing"
)

// A line of "dsh serve"'s standard input over the SDK's 16 MiB frame bound is
// read through without being held and skipped with a warning: the session
// answers the next request (it used to end).
func TestServeSkipsAStdioLineOver16MiB(t *testing.T) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	stderr := &syncBuffer{}
	code := make(chan int, 1)
	go func() {
		code <- Run(context.Background(), []string{"--scripts", t.TempDir(), "--memory-limit", "0", "serve"}, inR, outW, stderr)
		outW.Close()
	}()
	go func() {
		_, _ = io.Copy(inW, io.MultiReader(
			strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n"+
				`{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n"+`{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"x":"`),
			&repeatReader{c: 'y', n: maxStdioLine},
			strings.NewReader(`"}}`+"\n"+`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`+"\n"),
		))
	}()
	var ids []string
	sc := bufio.NewScanner(outR)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.Index(line, `"id":`); i >= 0 {
			ids = append(ids, line[i:i+6])
		}
		if strings.Contains(line, `"id":2`) {
			inW.Close() // the client leaves once answered
		}
	}
	if strings.Join(ids, " ") != `"id":1 "id":2` {
		t.Errorf("answered %q, want ids 1 and 2", ids)
	}
	if c := <-code; c != exitOK {
		t.Errorf("exit status %d, want 0", c)
	}
	if want := "dsh: serving MCP on stdio: standard input line 3: the line has 16777280 bytes, over the 16777216 a line may have: skipped\n"; !strings.Contains(stderr.String(), want) {
		t.Errorf("stderr lacks %q:\n%s", want, stderr)
	}
}
