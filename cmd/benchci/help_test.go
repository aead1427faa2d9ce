package main

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/spf13/pflag"
)

// flagLine is a flag's line in a help's flag list: "  -J, --jpath ..." or
// "      --runs int ...".
var flagLine = regexp.MustCompile(`^\s+(?:-[A-Za-z], )?--([a-z0-9-]+)`)

// Each command's --help lists each of its flags exactly once: bands --help
// was reported printing its flags twice, and a flag listed twice (a second
// flag set, a usage template that prints local and inherited flags alike)
// reads as two settings.
func TestHelpListsEachFlagOnce(t *testing.T) {
	t.Parallel()
	root := rootCmd(nil, nil)
	for _, c := range commands(root) {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, stdout, stderr := runCLI(t, context.Background(), args...)
		if code != exitOK || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		seen := map[string]int{}
		for _, line := range strings.Split(stdout, "\n") {
			if m := flagLine.FindStringSubmatch(line); m != nil {
				seen[m[1]]++
			}
		}
		for name, n := range seen {
			if n != 1 {
				t.Errorf("%s --help lists --%s %d times:\n%s", c.CommandPath(), name, n, stdout)
			}
		}
		c.Flags().VisitAll(func(f *pflag.Flag) {
			if !f.Hidden && seen[f.Name] == 0 {
				t.Errorf("%s --help leaves out --%s", c.CommandPath(), f.Name)
			}
		})
	}
}
