package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

func baselineCmd() *cobra.Command {
	cmd := &cobra.Command{Use: "baseline", Short: "Manage committed baselines"}
	var dir, commit string
	update := &cobra.Command{
		Use:   "update RESULT...",
		Short: "Write baselines/<suite>.json from results, for review",
		Long: `update turns complete results files into baseline files, one per suite, with
provenance (tool version, date, commit, target, host). Commit them with the
change they measure; reviewers see the summary figures change in the diff.`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if commit == "" {
				commit = currentCommit()
			}
			for _, path := range args {
				r, err := result.Read(path)
				if err != nil {
					return err
				}
				b, err := baseline.FromResult(r, commit)
				if err != nil {
					return err
				}
				out := filepath.Join(dir, r.Suite.Name+".json")
				if err := baseline.Write(out, b); err != nil {
					return err
				}
				fmt.Fprintf(cmd.OutOrStdout(), "wrote %s (suite %s, %d points, from %s)\n", out, r.Suite.Name, len(b.Summary), path)
			}
			return nil
		},
	}
	update.Flags().StringVar(&dir, "dir", "baselines", "baselines directory")
	update.Flags().StringVar(&commit, "commit", "", "commit recorded in provenance (default: $GITHUB_SHA, else git HEAD)")
	cmd.AddCommand(update)
	return cmd
}

func currentCommit() string {
	if sha := os.Getenv("GITHUB_SHA"); sha != "" {
		return sha
	}
	out, err := exec.Command("git", "rev-parse", "HEAD").Output()
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(out))
}
