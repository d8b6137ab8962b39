package eventloop

import "regexp"

// goja formats some of its own TypeErrors with Go's %v and %T of its
// internal objects ("Could not convert &{Object 0xc000… map[…] …}
// (*goja.baseObject) to primitive"): heap addresses and Go types that must
// not reach the model. goMessages lists each such message, as goja words
// it, with the JavaScript message it stands for (V8's where there is one).
var goMessages = []struct {
	re   *regexp.Regexp
	repl string
}{
	{regexp.MustCompile(`(?s)^Could not convert .* to primitive$`), "Cannot convert object to primitive value"},
	{regexp.MustCompile(`(?s)^(could not convert function call parameter \d+): .*$`), "$1"},
	{regexp.MustCompile(`(?s)^((?:Runtime|Compiler|Internal) bug: [^:]*):.*$`), "$1"},
	{regexp.MustCompile(`(?s)^('isExtensible' on proxy: trap result does not reflect extensibility of proxy target) \(which is .*\)$`), "$1"},
}

// jsMessage returns the message of an error named name as JavaScript words
// it: goja's own TypeErrors that carry Go internals (see goMessages) are
// reworded; every other message is returned unchanged, so that a script's
// own text is never altered.
func jsMessage(name, msg string) string {
	if name != "TypeError" {
		return msg
	}
	for _, m := range goMessages {
		if m.re.MatchString(msg) {
			return m.re.ReplaceAllString(msg, m.repl)
		}
	}
	return msg
}
