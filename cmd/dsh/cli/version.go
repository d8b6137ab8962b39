package cli

import (
	"fmt"
	"runtime/debug"

	"github.com/spf13/cobra"
)

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the dsh version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			fmt.Fprintf(cmd.OutOrStdout(), "dsh %s\n", mainVersion())
			return nil
		},
	}
}

// mainVersion returns the version of the main module recorded in the binary.
func mainVersion() string {
	info, ok := debug.ReadBuildInfo()
	return versionOf(info, ok)
}

// versionOf returns info's main module version, or "(devel)" when there is
// no build information or it records no version (as in test binaries).
func versionOf(info *debug.BuildInfo, ok bool) string {
	if !ok || info == nil || info.Main.Version == "" {
		return "(devel)"
	}
	return info.Main.Version
}
