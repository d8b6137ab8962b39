package engine_test

import (
	"strings"
	"testing"

	"github.com/dsh-go/dsh/dsl"
	"github.com/dsh-go/dsh/engine"
)

// Every card's JSON form, in the design's key order with optional keys absent.
func TestViewJSONForms(t *testing.T) {
	calls := []struct {
		view *engine.CallView
		want string
	}{
		{&engine.CallView{Card: engine.CardGeneric, Title: "Run"}, `{"card":"generic","title":"Run"}`},
		{&engine.CallView{Card: engine.CardGeneric, Title: "Read a.go", Kind: engine.KindRead, RawInput: "a.go",
			Content: []engine.Block{engine.Text("x")}, Locations: []engine.FileLocation{{Path: "a.go", Line: new(3)}, {Path: "b.go"}},
			Description: "ignored: not a generic key", Diffs: []engine.FileDiff{{Path: "ignored"}}},
			`{"card":"generic","title":"Read a.go","kind":"read","rawInput":"a.go","content":[{"type":"text","text":"x"}],` +
				`"locations":[{"path":"a.go","line":3},{"path":"b.go"}]}`},
		{&engine.CallView{Card: engine.CardGeneric, Title: "t", Content: []engine.Block{}, Locations: []engine.FileLocation{}},
			`{"card":"generic","title":"t","content":[],"locations":[]}`},
		{&engine.CallView{Card: engine.CardTerminal, Title: "ls -l", Description: "List files", Cwd: "/tmp", Kind: engine.KindExecute},
			`{"card":"terminal","title":"ls -l","description":"List files","cwd":"/tmp"}`},
		{&engine.CallView{Card: engine.CardTerminal, Title: "ls"}, `{"card":"terminal","title":"ls"}`},
		{&engine.CallView{Card: engine.CardDiff, Title: "Write a.txt",
			Diffs:     []engine.FileDiff{{Path: "a.txt", NewText: "hi"}, {Path: "b.txt", OldText: new("old"), NewText: "new"}},
			Locations: []engine.FileLocation{{Path: "a.txt"}}},
			`{"card":"diff","title":"Write a.txt","diffs":[{"path":"a.txt","oldText":null,"newText":"hi"},` +
				`{"path":"b.txt","oldText":"old","newText":"new"}],"locations":[{"path":"a.txt"}]}`},
		{&engine.CallView{Card: engine.CardDiff, Title: "Nothing"}, `{"card":"diff","title":"Nothing","diffs":[]}`},
		{&engine.CallView{Card: "mystery", Title: "t", Kind: engine.KindRead}, `{"card":"mystery","title":"t"}`},
	}
	for _, c := range calls {
		if got := dfMustJSON(t, c.view.JSON()); got != c.want {
			t.Errorf("call view\n got %s\nwant %s", got, c.want)
		}
	}
	results := []struct {
		view *engine.ResultView
		want string
	}{
		{&engine.ResultView{Card: engine.CardGeneric}, `{"card":"generic"}`},
		{&engine.ResultView{Card: engine.CardGeneric, Title: "Done", Content: []engine.Block{engine.Text("ok")}, Output: "ignored"},
			`{"card":"generic","title":"Done","content":[{"type":"text","text":"ok"}]}`},
		{&engine.ResultView{Card: engine.CardTerminal, Title: "ls", Output: "a\nb", ExitCode: new(0)},
			`{"card":"terminal","title":"ls","output":"a\nb","exitCode":0}`},
		{&engine.ResultView{Card: engine.CardTerminal, Signal: "SIGTERM"}, `{"card":"terminal","signal":"SIGTERM"}`},
		{&engine.ResultView{Card: engine.CardDiff, Title: "edit", Diffs: []engine.FileDiff{{Path: "a", OldText: new("x"), NewText: "y"}}},
			`{"card":"diff","title":"edit","diffs":[{"path":"a","oldText":"x","newText":"y"}]}`},
		{&engine.ResultView{Card: engine.CardSearch, Shape: engine.ShapeMatches, Title: "grep foo", Total: 3, Truncated: true,
			Files: []engine.SearchFileMatches{{Path: "a.go", Matches: []engine.SearchLineMatch{{LineNumber: 4, Line: "foo()"}}}},
			Paths: []string{"ignored"}},
			`{"card":"search","shape":"matches","title":"grep foo","files":[{"path":"a.go","matches":[{"lineNumber":4,"line":"foo()"}]}],` +
				`"truncated":true,"total":3}`},
		{&engine.ResultView{Card: engine.CardSearch, Shape: engine.ShapePaths, Paths: []string{"a", "b"}, Total: 2},
			`{"card":"search","shape":"paths","paths":["a","b"],"truncated":false,"total":2}`},
		{&engine.ResultView{Card: engine.CardRead, Title: "a.go", Path: "/w/a.go", Offset: 10, TotalLines: 99, Lang: "go",
			Lines:   []engine.ReadFileLine{{Number: 10, Text: "package a"}, {Number: 11, Text: ""}},
			Content: []engine.Block{engine.Text("package a")}},
			`{"card":"read","title":"a.go","path":"/w/a.go","offset":10,"lines":[{"number":10,"text":"package a"},{"number":11,"text":""}],` +
				`"totalLines":99,"lang":"go","content":[{"type":"text","text":"package a"}]}`},
		{&engine.ResultView{Card: engine.CardRead, Path: "e", Offset: 1}, `{"card":"read","path":"e","offset":1,"lines":[],"totalLines":0}`},
		{&engine.ResultView{Card: engine.CardWeb, Kind: engine.WebSearch, Title: "go generics", Answer: "Yes.",
			Sources: []engine.WebSource{{URL: "https://go.dev", Title: "Go", Snippet: "The Go language", PublishedAt: "2026-01-02"}, {URL: "https://x"}}},
			`{"card":"web","kind":"search","title":"go generics","sources":[{"url":"https://go.dev","title":"Go","snippet":"The Go language",` +
				`"publishedAt":"2026-01-02"},{"url":"https://x"}],"answer":"Yes.","truncated":false}`},
		{&engine.ResultView{Card: engine.CardWeb, Kind: engine.WebFetch, URL: "https://example.com", StatusCode: 200, Truncated: true},
			`{"card":"web","kind":"fetch","url":"https://example.com","statusCode":200,"truncated":true}`},
		{&engine.ResultView{Card: "mystery", Title: "t"}, `{"card":"mystery","title":"t"}`},
	}
	for _, c := range results {
		if got := dfMustJSON(t, c.view.JSON()); got != c.want {
			t.Errorf("result view\n got %s\nwant %s", got, c.want)
		}
		b, err := c.view.MarshalJSON()
		if err != nil || string(b) != c.want {
			t.Errorf("MarshalJSON: %s %v", b, err)
		}
	}
	var nilCall *engine.CallView
	var nilResult *engine.ResultView
	if nilCall.JSON() != nil || nilResult.JSON() != nil || nilCall.Validate() != nil || nilResult.Validate() != nil {
		t.Error("a nil view is no view")
	}
}

// Every well-formed view reads back to the same JSON.
func TestViewsRoundTripThroughJSON(t *testing.T) {
	calls := []string{
		`{"card":"generic","title":"Run"}`,
		`{"card":"generic","title":"Read","kind":"read","rawInput":{"path":"a","n":[1,null]},"content":[{"type":"text","text":"x"},{"type":"custom","v":1}],` +
			`"locations":[{"path":"a","line":1},{"path":"b"}]}`,
		`{"card":"generic","title":"t","kind":"other","content":[],"locations":[]}`,
		`{"card":"terminal","title":"ls","description":"List","cwd":"."}`,
		`{"card":"diff","title":"w","diffs":[{"path":"a","oldText":null,"newText":""},{"path":"b","oldText":"","newText":"x"}],"locations":[{"path":"a"}]}`,
	}
	for _, text := range calls {
		v, err := engine.CallViewFromJSON(dfParse(t, text))
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if got := dfMustJSON(t, v.JSON()); got != text {
			t.Errorf("round trip\n got %s\nwant %s", got, text)
		}
		if err := v.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", text, err)
		}
	}
	results := []string{
		`{"card":"generic"}`,
		`{"card":"generic","title":"t","content":[{"type":"text","text":"ok"}]}`,
		`{"card":"terminal","title":"ls","output":"a","exitCode":1}`,
		`{"card":"terminal","signal":"SIGKILL"}`,
		`{"card":"diff","diffs":[]}`,
		`{"card":"search","shape":"matches","title":"g","files":[{"path":"a","matches":[{"lineNumber":2,"line":"x"}]},{"path":"b","matches":[]}],"truncated":false,"total":1}`,
		`{"card":"search","shape":"paths","paths":["a"],"truncated":true,"total":40}`,
		`{"card":"read","path":"a","offset":1,"lines":[{"number":1,"text":"x"}],"totalLines":1,"lang":"ts","content":[]}`,
		`{"card":"web","kind":"search","sources":[{"url":"u","snippet":"s"}],"answer":"a","truncated":false}`,
		`{"card":"web","kind":"fetch","title":"get","url":"https://example.com","statusCode":404,"truncated":false}`,
	}
	for _, text := range results {
		v, err := engine.ResultViewFromJSON(dfParse(t, text))
		if err != nil {
			t.Errorf("%s: %v", text, err)
			continue
		}
		if got := dfMustJSON(t, v.JSON()); got != text {
			t.Errorf("round trip\n got %s\nwant %s", got, text)
		}
		if err := v.Validate(); err != nil {
			t.Errorf("%s: Validate: %v", text, err)
		}
	}

	// Go maps are read too; exitCode 0 and a null oldText are kept.
	v, err := engine.ResultViewFromJSON(map[string]any{"card": "terminal", "exitCode": 0})
	if err != nil || v.ExitCode == nil || *v.ExitCode != 0 {
		t.Errorf("exitCode 0: %+v %v", v, err)
	}
	cv, err := engine.CallViewFromJSON(dfParse(t, `{"card":"diff","title":"w","diffs":[{"path":"a","oldText":null,"newText":"n"}]}`))
	if err != nil || cv.Diffs[0].OldText != nil || cv.Locations != nil {
		t.Errorf("diff: %+v %v", cv, err)
	}
}

// null and undefined are no view; everything else must be a well-formed view.
func TestViewsFromJSONRefuseMalformedViews(t *testing.T) {
	for _, none := range []any{nil, dsl.Undefined{}} {
		if v, err := engine.CallViewFromJSON(none); v != nil || err != nil {
			t.Errorf("call view of %v: %v %v", none, v, err)
		}
		if v, err := engine.ResultViewFromJSON(none); v != nil || err != nil {
			t.Errorf("result view of %v: %v %v", none, v, err)
		}
	}
	callErrs := map[string]string{
		`"generic"`:                     `call view must be an object, not a string`,
		`{}`:                            `call view: missing "card"`,
		`{"card":1}`:                    `call view: "card" must be a string, not a number`,
		`{"card":"search","title":"t"}`: `call view: unknown card "search"`,
		`{"card":"generic"}`:            `generic call view: missing "title"`,
		`{"card":"generic","title":"t","kind":"think"}`:                                `generic call view: unknown kind "think"`,
		`{"card":"generic","title":"t","extra":1}`:                                     `generic call view: unknown key "extra"`,
		`{"card":"terminal","title":"t","locations":[]}`:                               `terminal call view: unknown key "locations"`,
		`{"card":"generic","title":"t","content":"text"}`:                              `generic call view: "content" must be an array of content blocks, not a string`,
		`{"card":"generic","title":"t","locations":[{"line":1}]}`:                      `generic call view: missing "locations[0].path"`,
		`{"card":"generic","title":"t","locations":[{"path":"a","line":1.5}]}`:         `generic call view: "locations[0].line" must be an integer, not a number`,
		`{"card":"generic","title":"t","locations":[{"path":"a","column":1}]}`:         `generic call view: unknown key "locations[0].column"`,
		`{"card":"generic","title":"t","locations":["a"]}`:                             `generic call view: "locations[0]" must be an object, not a string`,
		`{"card":"diff","title":"t"}`:                                                  `diff call view: missing "diffs"`,
		`{"card":"diff","title":"t","diffs":[{"path":"a","newText":"x"}]}`:             `diff call view: missing "diffs[0].oldText"`,
		`{"card":"diff","title":"t","diffs":[{"path":"a","oldText":1,"newText":"x"}]}`: `diff call view: "diffs[0].oldText" must be a string or null, not a number`,
		`{"card":"terminal","title":"t","cwd":null}`:                                   `terminal call view: "cwd" must be a string, not null`,
	}
	for text, want := range callErrs {
		v, err := engine.CallViewFromJSON(dfParse(t, text))
		if v != nil || err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v %v\nwant %s", text, v, err, want)
		}
	}
	resultErrs := map[string]string{
		`[]`:                                 `result view must be an object, not an array`,
		`{"card":"chart"}`:                   `result view: unknown card "chart"`,
		`{"card":"generic","title":3}`:       `generic result view: "title" must be a string, not a number`,
		`{"card":"terminal","exitCode":"1"}`: `terminal result view: "exitCode" must be an integer, not a string`,
		`{"card":"search","paths":[],"truncated":false,"total":0}`:                                                            `search result view: missing "shape"`,
		`{"card":"search","shape":"tree","truncated":false,"total":0}`:                                                        `search result view: unknown shape "tree"`,
		`{"card":"search","shape":"paths","paths":[1],"truncated":false,"total":1}`:                                           `search result view: "paths[0]" must be a string, not a number`,
		`{"card":"search","shape":"paths","paths":[],"files":[],"truncated":false,"total":0}`:                                 `search result view: unknown key "files"`,
		`{"card":"search","shape":"paths","paths":[],"total":0}`:                                                              `search result view: missing "truncated"`,
		`{"card":"search","shape":"matches","files":[{"path":"a","matches":[{"lineNumber":1}]}],"truncated":false,"total":1}`: `search result view: missing "files[0].matches[0].line"`,
		`{"card":"read","path":"a","offset":1,"lines":[{"number":1,"text":"x"}]}`:                                             `read result view: missing "totalLines"`,
		`{"card":"web","kind":"crawl","truncated":false}`:                                                                     `web result view: unknown kind "crawl"`,
		`{"card":"web","kind":"fetch","url":"u","truncated":false}`:                                                           `web result view: missing "statusCode"`,
		`{"card":"web","kind":"fetch","url":"u","statusCode":200,"truncated":false,"sources":[]}`:                             `web result view: unknown key "sources"`,
		`{"card":"web","kind":"search","sources":[{"title":"t"}],"truncated":false}`:                                          `web result view: missing "sources[0].url"`,
	}
	for text, want := range resultErrs {
		v, err := engine.ResultViewFromJSON(dfParse(t, text))
		if v != nil || err == nil || err.Error() != want {
			t.Errorf("%s:\n got %v %v\nwant %s", text, v, err, want)
		}
	}
	if _, err := engine.CallViewFromJSON(map[string]any{"card": "generic", "title": "t", "rawInput": func() {}}); err == nil ||
		!strings.HasPrefix(err.Error(), "call view: value.rawInput: ") {
		t.Errorf("non-lossless view: %v", err)
	}
}

// Validate refuses views with no JSON form the design allows.
func TestViewValidate(t *testing.T) {
	bad := map[string]error{
		`call view: unknown card "web"`:                                  (&engine.CallView{Card: engine.CardWeb, Title: "t"}).Validate(),
		`generic call view: unknown kind "think"`:                        (&engine.CallView{Card: engine.CardGeneric, Kind: "think"}).Validate(),
		`result view: unknown card ""`:                                   (&engine.ResultView{}).Validate(),
		`search result view: unknown shape ""`:                           (&engine.ResultView{Card: engine.CardSearch}).Validate(),
		`web result view: unknown kind "search!"`:                        (&engine.ResultView{Card: engine.CardWeb, Kind: "search!"}).Validate(),
		`generic call view: value.rawInput: func() is not lossless JSON`: (&engine.CallView{Card: engine.CardGeneric, RawInput: func() {}}).Validate(),
	}
	for want, err := range bad {
		if err == nil || err.Error() != want {
			t.Errorf("got %v, want %s", err, want)
		}
	}
	if err := (&engine.CallView{Card: engine.CardTerminal, Title: "ls", Kind: "ignored"}).Validate(); err != nil {
		t.Errorf("a terminal view does not read kind: %v", err)
	}
}
