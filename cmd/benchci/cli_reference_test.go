package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// cliReference is docs/cli.md: each command's --help as the CLI prints it,
// under a heading, with a contents list.
func cliReference(t *testing.T) string {
	t.Helper()
	// help and completion as Execute adds them, so the root's list is
	// the one users see.
	root := rootCmd(nil, nil)
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	cmds := commands(root)
	var b strings.Builder
	b.WriteString("# benchci command-line reference\n\n" +
		"Each command's `--help`, as the CLI prints it. Generated from the command\n" +
		"tree: do not edit; `go test ./cmd/benchci -run TestCLIReference -update`\n" +
		"rewrites it, and CI fails when it is stale.\n\n")
	for _, c := range cmds {
		path := c.CommandPath()
		fmt.Fprintf(&b, "%s- [%s](#%s)\n", strings.Repeat("  ", strings.Count(path, " ")), path, strings.ReplaceAll(path, " ", "-"))
	}
	for _, c := range cmds {
		args := append(strings.Fields(c.CommandPath())[1:], "--help")
		code, stdout, stderr := runCLI(t, context.Background(), args...)
		if code != exitOK || stderr != "" {
			t.Fatalf("%v: exit %d, stderr %q", args, code, stderr)
		}
		fmt.Fprintf(&b, "\n## %s\n\n```text\n%s```\n", c.CommandPath(), stdout)
	}
	return b.String()
}

// docs/cli.md is what the command tree prints. Defaults taken from the
// environment ($GITHUB_OUTPUT...) are cleared so the text is the same on
// every machine.
func TestCLIReference(t *testing.T) {
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); k != "" {
			t.Setenv(k, "")
		}
	}
	got := cliReference(t)
	path := filepath.Join("..", "..", "docs", "cli.md")
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (go test ./cmd/benchci -run TestCLIReference -update writes it)", err)
	}
	if got == string(want) {
		return
	}
	g, w := strings.Split(got, "\n"), strings.Split(string(want), "\n")
	for i := 0; ; i++ {
		if i >= len(g) || i >= len(w) || g[i] != w[i] {
			line := func(l []string) string {
				if i < len(l) {
					return l[i]
				}
				return "(end of file)"
			}
			t.Fatalf("docs/cli.md is stale: run go test ./cmd/benchci -run TestCLIReference -update\nfirst difference at line %d:\n--- generated\n%s\n--- docs/cli.md\n%s", i+1, line(g), line(w))
		}
	}
}
