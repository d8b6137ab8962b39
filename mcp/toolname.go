package mcp

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/dsh-go/dsh/engine"
	"github.com/dsh-go/dsh/internal/display"
)

// hashSuffix is the length of the suffix that ends a shortened tool name:
// '_' and 8 hex digits of the SHA-256 of the server's name for the tool.
const hashSuffix = 1 + 8

// MaxShortenedServerName is the longest server name whose tools can be
// shortened: its prefix ("NAME__") and the hash suffix fill the 64 bytes
// of a tool name. A tool of a server with a longer name (up to
// [MaxServerName]) whose served name would pass 64 bytes is not imported.
const MaxShortenedServerName = engine.MaxToolName - len(Separator) - hashSuffix

// ToolName is the engine name of server's tool, the one name it has for
// policies, run_code programs, dsh call and dsh serve: server + "__" +
// tool, where each character of tool outside [a-zA-Z0-9_-] (a dot, a
// space, a control character, a non-ASCII letter, a byte of invalid
// UTF-8) becomes one '_', and a result over 64 bytes keeps its first 55
// bytes followed by '_' and the first 8 hex digits of the SHA-256 of tool
// (the server's own name, unmapped), so that the name is stable across
// runs and long names that share a prefix differ. The server's prefix
// must leave room for that suffix ([MaxShortenedServerName]); when it
// does not, the result is longer than 64 bytes and registration refuses
// it. The empty tool name gives "server__" and is refused before.
//
// Distinct tools can map to one name ("a.b" and "a b" are both
// "server__a_b"): [Connect] reports a collision as a [Diagnostic].
func ToolName(server, tool string) string { return servedName(server+Separator, tool) }

// servedName is ToolName with the prefix given whole: "NAME__", or nothing
// for a Bare server's items.
func servedName(prefix, tool string) string {
	var b strings.Builder
	b.WriteString(prefix)
	for _, r := range tool {
		if b.Len() > engine.MaxToolName {
			break // shortened below: the rest is in the hash only
		}
		if r < 0x80 && engine.ValidToolName(string(r)) {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() <= engine.MaxToolName || len(prefix) > MaxShortenedServerName+len(Separator) {
		return b.String()
	}
	sum := sha256.Sum256([]byte(tool))
	return b.String()[:engine.MaxToolName-hashSuffix] + "_" + hex.EncodeToString(sum[:4])
}

// servedNames is the name each tool of one listing of server is
// registered under (ToolName), "" for a tool not imported, with a
// diagnostic for each of those: a tool with the empty name, one whose name
// is too long for a server name that leaves no room to shorten it, and
// the tools whose names collide once mapped. In a collision, a tool whose
// name is served unchanged (server + "__" + its own name) keeps it and the
// mapped ones are not imported; when none is unchanged, none is imported.
// Either way the outcome does not depend on the order of the listing, so
// that a name never passes from one of the server's tools to another when
// the server lists them in another order.
func servedNames(server, prefix string, tools []*sdk.Tool) ([]string, []Diagnostic) {
	own := make([]string, len(tools))
	for i, t := range tools {
		own[i] = t.Name
	}
	names, reasons := mapNames(prefix, "tool", own)
	var diags []Diagnostic
	for i, reason := range reasons {
		if reason != "" {
			diags = append(diags, Diagnostic{Server: server, Tool: own[i], Reason: reason, Unnamed: own[i] == ""})
		}
	}
	return names, diags
}

// mapNames is servedNames for the names of any kind of item ("tool",
// "prompt"): the served name of each ("" for one not imported) and the
// reason each is not imported ("" for one that is).
func mapNames(prefix, kind string, own []string) ([]string, []string) {
	names := make([]string, len(own))
	reasons := make([]string, len(own))
	byName := map[string][]int{}
	for i, t := range own {
		if t == "" {
			reasons[i] = "not imported: " + engine.CheckToolName("").Error()
			continue
		}
		name := servedName(prefix, t)
		if err := engine.CheckToolName(name); err != nil {
			reasons[i] = fmt.Sprintf("not imported: %v (a server name over %d bytes leaves no room to shorten it)",
				err, MaxShortenedServerName)
			continue
		}
		names[i] = name
		byName[name] = append(byName[name], i)
	}
	for name, same := range byName {
		if len(same) < 2 {
			continue
		}
		keeper := -1
		for _, j := range same {
			if name == prefix+own[j] {
				if keeper >= 0 { // the server listed the name twice: none keeps it
					keeper = -1
					break
				}
				keeper = j
			}
		}
		for _, i := range same {
			switch {
			case i == keeper:
			case keeper >= 0:
				reasons[i] = fmt.Sprintf("not imported: its name maps to %s, the name of the %s %s",
					display.Quote(name), kind, display.Quote(own[keeper]))
			default:
				other := same[0] // the first other tool of the collision in listing order
				if other == i {
					other = same[1]
				}
				reasons[i] = fmt.Sprintf("not imported: its name maps to %s, as the %s %s's does",
					display.Quote(name), kind, display.Quote(own[other]))
			}
		}
	}
	for i, reason := range reasons {
		if reason != "" {
			names[i] = ""
		}
	}
	return names, reasons
}
