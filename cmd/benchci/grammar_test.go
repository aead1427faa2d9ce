package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// parseOnly parses args as the CLI does, stopping at help (nothing runs),
// and returns the command they reached with its stdout and stderr.
func parseOnly(t *testing.T, args ...string) (*cobra.Command, string, string) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	root := rootCmd(&stdout, &stderr)
	root.SetArgs(append(args, "--help"))
	c, err := root.ExecuteC()
	if err != nil {
		t.Fatalf("%v: %v", args, err)
	}
	return c, stdout.String(), stderr.String()
}

// Each spelling given up still sets the flag that replaced it and says so
// on stderr (never stdout, which programs read); the new spelling says
// nothing.
func TestDeprecatedSpellings(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		old, now []string // the same setting, spelled the old way and the new
		flag     string   // the flag both set
		want     string   // its value
		note     string   // what the old spelling prints
	}{
		{[]string{"baseline", "update", "--dir", "b2"}, []string{"baseline", "update", "--baselines", "b2"}, "baselines", "b2", "Flag --dir has been deprecated, use --baselines"},
		{[]string{"history", "--chart", "h.svg"}, []string{"history", "--charts", "h.svg"}, "charts", "h.svg", "Flag --chart has been deprecated, use --charts"},
		{[]string{"history", "--chart="}, []string{"history", "--charts="}, "charts", "", "Flag --chart has been deprecated, use --charts"},
	} {
		for i, args := range [][]string{tc.old, tc.now} {
			c, stdout, stderr := parseOnly(t, args...)
			if got := c.Flags().Lookup(tc.flag).Value.String(); got != tc.want {
				t.Errorf("%v: --%s is %q, want %q", args, tc.flag, got, tc.want)
			}
			if strings.Contains(stdout, "deprecated") {
				t.Errorf("%v: deprecation note on stdout:\n%s", args, stdout)
			}
			if old := i == 0; old != strings.Contains(stderr, tc.note) {
				t.Errorf("%v: stderr %q; want the note %q only for the old spelling", args, stderr, tc.note)
			}
		}
	}
}

// -v is --verbose wherever it is defined; at the root it still prints the
// version, with a note saying to write --version.
func TestVerboseAndVersion(t *testing.T) {
	t.Parallel()
	for _, cmd := range []string{"run", "ci"} {
		c, _, stderr := parseOnly(t, cmd, "-v")
		if v, err := c.Flags().GetBool("verbose"); err != nil || !v || stderr != "" {
			t.Errorf("%s -v: verbose %v (%v), stderr %q", cmd, v, err, stderr)
		}
	}
	for _, tc := range []struct {
		arg, note string
	}{{"--version", ""}, {"-v", "Flag shorthand -v has been deprecated, use --version"}} {
		code, stdout, stderr := runCLI(t, context.Background(), tc.arg)
		if code != exitOK || stdout != "benchci version "+Version+"\n" {
			t.Errorf("%s: exit %d, stdout %q", tc.arg, code, stdout)
		}
		if (tc.note == "" && stderr != "") || !strings.Contains(stderr, tc.note) {
			t.Errorf("%s: stderr %q, want %q", tc.arg, stderr, tc.note)
		}
	}
	if _, stdout, _ := parseOnly(t); strings.Contains(stdout, "-v, --version") {
		t.Errorf("root help still offers -v for the version:\n%s", stdout)
	}
}

// Every command says what it does at length and shows how it is called.
func TestEveryCommandHasHelp(t *testing.T) {
	t.Parallel()
	for _, c := range commands(rootCmd(nil, nil)) {
		if c.Long == "" || c.Example == "" {
			t.Errorf("%q: Long %d bytes, Example %d bytes; want both", c.CommandPath(), len(c.Long), len(c.Example))
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			// A sentinel default such as -1ns reads as a real one.
			if !f.Hidden && strings.HasPrefix(f.DefValue, "-") {
				t.Errorf("%s --%s shows the default %s", c.CommandPath(), f.Name, f.DefValue)
			}
		})
	}
}

// commands is c and every command under it that help lists, depth first in
// help's order.
func commands(c *cobra.Command) []*cobra.Command {
	out := []*cobra.Command{c}
	for _, sub := range c.Commands() {
		if sub.IsAvailableCommand() {
			out = append(out, commands(sub)...)
		}
	}
	return out
}
