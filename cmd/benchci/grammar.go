package main

import (
	"io"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// The CLI's grammar, one spelling per meaning:
//
//   - -v is --verbose (run, ci); the version is --version only.
//   - a directory of baseline files is --baselines, of results --results.
//   - a file or directory an output is written to is named for what is
//     written there: --html PATH (an HTML page), --charts PATH (SVG).
//
// Spellings given up stay as hidden, deprecated aliases: they still work
// and print a note on stderr saying what to write instead.

// deprecatedAlias keeps old, a former spelling of cmd's flag name, working:
// it sets the same value, is left out of help, and prints a note on stderr
// when used.
func deprecatedAlias(cmd *cobra.Command, old, name string) {
	f := cmd.Flags().Lookup(name)
	if f == nil {
		panic("deprecatedAlias: " + cmd.Name() + " has no flag --" + name)
	}
	cmd.Flags().AddFlag(&pflag.Flag{
		Name:        old,
		Usage:       f.Usage,
		Value:       f.Value, // shared: either spelling sets the one value
		DefValue:    f.DefValue,
		NoOptDefVal: f.NoOptDefVal,
		Deprecated:  "use --" + name,
		Hidden:      true,
	})
}

// versionFlag gives the root --version without cobra's -v, which is
// --verbose wherever it is defined; -v at the root still prints the version,
// with a note.
func versionFlag(root *cobra.Command) {
	root.Flags().BoolP("version", "v", false, "version for "+root.Name())
	if err := root.Flags().MarkShorthandDeprecated("version", "use --version (-v is --verbose, on run and ci)"); err != nil {
		panic(err)
	}
}

// noticesToStderr sends pflag's deprecation notes to stderr for c and the
// commands under it. Cobra prints them through its out writer, which is
// stdout here, into output other programs read (JSON, markdown).
func noticesToStderr(c *cobra.Command, stderr io.Writer) {
	c.Flags().SetOutput(stderr)
	for _, sub := range c.Commands() {
		noticesToStderr(sub, stderr)
	}
}
