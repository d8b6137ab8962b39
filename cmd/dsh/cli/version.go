package cli

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/dsl"
)

func newVersionCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the dsh version",
		Long: `Version prints "dsh <version>". With --json it prints
{"version", "go", "os", "arch"} and, when the binary records the commit it
was built from, "revision", "revisionTime" and "modified".`,
		Args: cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			return printVersion(o.stdout, o.json)
		},
	}
}

// printVersion writes "dsh <version>", or with asJSON versionJSON's object
// as one line.
func printVersion(w io.Writer, asJSON bool) error {
	info, ok := debug.ReadBuildInfo()
	if asJSON {
		return writeJSONLine(w, versionJSON(info, ok))
	}
	_, err := fmt.Fprintf(w, "dsh %s\n", versionOf(info, ok))
	return err
}

// mainVersion returns the version of the main module recorded in the binary.
func mainVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionOf(info, ok)
}

// versionOf returns info's main module version: the release's, or the
// pseudo-version Go stamps from the commit. When the build records none
// ("(devel)") but records its commit, it is made from the commit as Go
// does: "v0.0.0-<commit time>-<12 hex digits of the revision>", with
// "+dirty" for a modified tree. Without either, as in test binaries and
// builds with -buildvcs=false, it is "(devel)". dsh serve reports the
// same version to clients (serverInfo.version).
func versionOf(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil {
		return "(devel)"
	}
	if v := info.Main.Version; v != "" && v != "(devel)" {
		return v
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	rev := settings["vcs.revision"]
	if rev == "" {
		return "(devel)"
	}
	v := "v0.0.0-"
	if t, err := time.Parse(time.RFC3339, settings["vcs.time"]); err == nil {
		v += t.UTC().Format("20060102150405") + "-"
	}
	v += rev[:min(len(rev), 12)]
	if settings["vcs.modified"] == "true" {
		v += "+dirty"
	}
	return v
}

// versionJSON is version's --json form: {"version", "go", "os", "arch"},
// then "revision", "revisionTime" and "modified" from the version control
// settings info records, when it does.
func versionJSON(info *debug.BuildInfo, ok bool) *dsl.Object {
	goVersion := runtime.Version()
	if ok && info != nil && info.GoVersion != "" {
		goVersion = info.GoVersion
	}
	v := dsl.NewObject(
		dsl.Member{Key: "version", Value: versionOf(info, ok)},
		dsl.Member{Key: "go", Value: goVersion},
		dsl.Member{Key: "os", Value: runtime.GOOS},
		dsl.Member{Key: "arch", Value: runtime.GOARCH},
	)
	if !ok || info == nil {
		return v
	}
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev, ok := settings["vcs.revision"]; ok {
		v.Set("revision", rev)
	}
	if t, ok := settings["vcs.time"]; ok {
		v.Set("revisionTime", t)
	}
	if m, ok := settings["vcs.modified"]; ok {
		v.Set("modified", m == "true")
	}
	return v
}
