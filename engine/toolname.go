package engine

import (
	"fmt"

	"github.com/dsh-go/dsh/internal/display"
)

// MaxToolName is the longest tool name, in bytes: the bound model providers
// put on a function name.
const MaxToolName = 64

// CheckToolName reports whether name is a tool name dsh accepts: 1 to 64
// ASCII letters, digits, '_' or '-' (^[a-zA-Z0-9_-]{1,64}$, the rule model
// providers apply to function names). Registration refuses any other name,
// from a script, the Go API or an imported server, with
//
//	tool name "a.b" is invalid: a tool name is 1 to 64 ASCII letters, digits, '_' or '-'
//
// where the name is quoted by [display.Quote] (escaped, cut to 64 bytes
// with "…") and, when longer than that, followed by its length: `tool name
// "xxx…" (1048576 bytes) is invalid: …`.
func CheckToolName(name string) error {
	if ValidToolName(name) {
		return nil
	}
	size := ""
	if len(name) > MaxToolName {
		size = fmt.Sprintf(" (%d bytes)", len(name))
	}
	return fmt.Errorf("tool name %s%s is invalid: a tool name is 1 to %d ASCII letters, digits, '_' or '-'",
		display.Quote(name), size, MaxToolName)
}

// ValidToolName reports whether name matches ^[a-zA-Z0-9_-]{1,64}$.
func ValidToolName(name string) bool {
	if name == "" || len(name) > MaxToolName {
		return false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}
