package cli

import (
	"log/slog"

	"github.com/dsh-go/dsh/scripting"
	"github.com/dsh-go/dsh/scripting/js"
	"github.com/dsh-go/dsh/scripting/lua"
)

// language is one script language dsh mounts: the host that loads its
// plugins and the editor declarations "dsh types" writes for it.
type language struct {
	name string
	host scripting.Host
	// declFile is the file "dsh types" writes declarations to, and decls
	// returns them; nil writes none.
	declFile string
	decls    func() []byte
}

// languages lists the script languages dsh mounts, in one place: every
// command that loads plugins or writes declarations takes its hosts from
// here. Adding a language is adding its entry. memory, when not nil, bounds
// the memory the scripts of every language may use.
func languages(logger *slog.Logger, modules []scripting.Module, memory *scripting.MemoryGuard) []language {
	return []language{
		{
			name:     "JavaScript and TypeScript",
			host:     &js.Host{Logger: logger, Modules: modules, Memory: memory},
			declFile: "dsh.d.ts",
			decls:    js.Declarations,
		},
		{
			name:     "Lua",
			host:     &lua.Host{Logger: logger, Modules: modules, Memory: memory},
			declFile: "dsh.lua",
			decls:    lua.Declarations,
		},
	}
}

// hostsOf returns the languages' hosts.
func hostsOf(langs []language) []scripting.Host {
	hosts := make([]scripting.Host, len(langs))
	for i, l := range langs {
		hosts[i] = l.host
	}
	return hosts
}
