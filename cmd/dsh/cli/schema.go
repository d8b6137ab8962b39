package cli

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"

	"github.com/spf13/cobra"

	"github.com/dsh-go/dsh/dsl"
)

func newSchemaCmd(o *options) *cobra.Command {
	cmd := &cobra.Command{
		Use:                        "schema",
		Short:                      "Check raw JSON Schemas and validate values against them",
		RunE:                       runGroup,
		SuggestionsMinimumDistance: 2,
	}
	cmd.AddCommand(uses(newSchemaCheckCmd(o), kindOutput), uses(newSchemaValidateCmd(o), kindOutput))
	return cmd
}

func newSchemaCheckCmd(o *options) *cobra.Command {
	return &cobra.Command{
		Use:   "check FILE...",
		Short: "Report every way each schema file leaves the supported subset",
		Long: `Check reads each FILE as a raw JSON Schema and prints one line
"FILE: <violation>" for every way it leaves the subset dsh enforces
(type/oneOf/properties/required/additionalProperties/items/enum/const and
the annotations description/title/default/examples) or the bounds every
JSON value keeps (at most 100000 levels of nesting): the verdict "dsh
schema validate" gives the same schema. A schema inside the subset prints
nothing. FILE may be "-" for standard input, once.

With --json it prints one line {"files": [{"file", "violations": [...]}]},
an entry for every file read (its violations empty when it is inside the
subset). A file that cannot be read or is not JSON is reported on standard
error either way.

Exit status: 0 all inside the subset, 1 violations reported, 2 a file that
cannot be read or is not JSON.`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) == 0 {
				return errors.New("schema check needs at least one FILE")
			}
			return oneStdin(args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			code := exitOK
			files := []any{}
			for _, name := range args {
				schema, err := readJSON(cmd.InOrStdin(), name)
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "dsh: %v\n", err)
					code = exitTrouble
					continue
				}
				// Compile, as validate does: one verdict for one schema
				// (the subset's rules, then the bounds a schema's value
				// must keep, its nesting among them).
				_, err = dsl.Compile(schema)
				violations, err := violationsOf(err)
				if err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "dsh: %s: %v\n", displayName(name), err)
					code = exitTrouble
					continue
				}
				if o.json {
					files = append(files, dsl.NewObject(
						dsl.Member{Key: "file", Value: displayName(name)},
						dsl.Member{Key: "violations", Value: stringsJSON(violations)}))
				} else {
					printViolations(cmd.OutOrStdout(), name, violations)
				}
				if len(violations) > 0 && code == exitOK {
					code = exitViolations
				}
			}
			if o.json {
				if err := writeJSONLine(cmd.OutOrStdout(), dsl.NewObject(dsl.Member{Key: "files", Value: files})); err != nil {
					return err
				}
			}
			if code != exitOK {
				return exitWith(code)
			}
			return nil
		},
	}
}

func newSchemaValidateCmd(o *options) *cobra.Command {
	var argsRoot bool
	cmd := &cobra.Command{
		Use:   "validate [--args] SCHEMA VALUE",
		Short: "Validate a JSON value against a schema",
		Long: `Validate reads a raw JSON Schema from SCHEMA and a JSON value from VALUE
and prints each violation on its own line. A valid value prints nothing.
Paths start at "value"; with --args, VALUE is a tool call's arguments and
paths start at the implicit root: properties by bare name
(missing required property "path"), the root itself as "arguments".
Either file may be "-" for standard input, not both.

With --json it prints one line {"violations": [...]}, empty for a valid
value. Trouble with the files or the schema is reported on standard error
either way.

Exit status: 0 valid, 1 violations reported, 2 a file that cannot be read
or is not JSON, or a schema outside the supported subset (its violations
are printed on standard error, as "dsh schema check" prints them).`,
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 2 {
				return fmt.Errorf("schema validate needs SCHEMA and VALUE, got %d argument(s)", len(args))
			}
			return oneStdin(args)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			schemaName, valueName := args[0], args[1]
			raw, err := readJSON(cmd.InOrStdin(), schemaName)
			if err != nil {
				return troublef("%v", err)
			}
			schema, err := dsl.Compile(raw)
			if err != nil {
				violations, err := violationsOf(err)
				if err != nil {
					return troublef("%s: %v", displayName(schemaName), err)
				}
				printViolations(cmd.ErrOrStderr(), schemaName, violations)
				return troublef("%s: the schema is outside the supported subset; nothing was validated", displayName(schemaName))
			}
			value, err := readJSON(cmd.InOrStdin(), valueName)
			if err != nil {
				return troublef("%v", err)
			}
			var violations []string
			if argsRoot {
				violations = schema.ValidateArgs(value)
			} else {
				violations = schema.Validate(value)
			}
			if o.json {
				if err := writeJSONLine(cmd.OutOrStdout(), dsl.NewObject(dsl.Member{Key: "violations", Value: stringsJSON(violations)})); err != nil {
					return err
				}
			} else {
				for _, v := range violations {
					fmt.Fprintln(cmd.OutOrStdout(), v)
				}
			}
			if len(violations) > 0 {
				return exitWith(exitViolations)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&argsRoot, "args", false, `VALUE is a tool call's arguments: report from the implicit "arguments" root`)
	return cmd
}

// stringsJSON is ss as a JSON array value.
func stringsJSON(ss []string) []any {
	out := make([]any, len(ss))
	for i, s := range ss {
		out[i] = s
	}
	return out
}

// violationsOf returns the violations of a *dsl.JsonSchemaError, as
// dsl.AssertSupported and dsl.Compile return it; nil for nil; any other error
// as is.
func violationsOf(err error) ([]string, error) {
	var se *dsl.JsonSchemaError
	if errors.As(err, &se) {
		return se.Violations, nil
	}
	return nil, err
}

// printViolations prints one "FILE: <violation>" line per violation, the
// schema check format.
func printViolations(w io.Writer, name string, violations []string) {
	for _, v := range violations {
		fmt.Fprintf(w, "%s: %s\n", displayName(name), v)
	}
}

// stdinName is the file argument that stands for standard input.
const stdinName = "-"

// displayName is how file arguments are named in messages.
func displayName(name string) string {
	if name == stdinName {
		return "<stdin>"
	}
	return name
}

// oneStdin rejects a command line that names standard input more than once:
// the second read would see nothing.
func oneStdin(args []string) error {
	n := 0
	for _, a := range args {
		if a == stdinName {
			n++
		}
	}
	if n > 1 {
		return fmt.Errorf("standard input (-) can be given only once")
	}
	return nil
}

// readJSON reads the file name, or stdin for "-", and decodes it with
// dsl.Unmarshal. Errors name the file: "<name>: <reason>".
func readJSON(stdin io.Reader, name string) (any, error) {
	var data []byte
	var err error
	if name == stdinName {
		data, err = io.ReadAll(stdin)
	} else {
		data, err = os.ReadFile(name)
	}
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the name is given once, in front
		}
		return nil, fmt.Errorf("%s: %w", displayName(name), err)
	}
	v, err := dsl.Unmarshal(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", displayName(name), err)
	}
	return v, nil
}
