package main

import (
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/site"
)

// siteNow is the time a site says it was written; tests set it.
var siteNow = time.Now

func siteCmd() *cobra.Command {
	var o siteOptions
	cmd := &cobra.Command{
		Use:   "site --out DIR [RESULTS...]",
		Short: "Write a static site of every suite's baseline over commits, its change points and release proofs",
		Long: `site writes a static website into --out: index.html, a card per suite with
its newest verdict, an arrow per gated figure (the newest committed version
against the one before it) and its last change point; and a page per suite
with each gated figure at each load point charted over the commits that
recorded its baseline, the change points (as benchci history finds them)
linked to their commits and to the pull requests their subjects name, and
the release proofs that measured it.

The history is the git history of --baselines along HEAD's first-parent
line: in CI check out with fetch-depth: 0. RESULTS are runs (the newest of
each suite) judged against the committed baselines for the verdict; a suite
with none shows its baseline's own SLO verdicts. --proofs names a directory
of statements benchci attest wrote (*.intoto.json, found at any depth);
they are copied into the site and linked, not verified. --repo-url links
commits and pull requests (https://github.com/OWNER/REPO).

The pages have no script and load nothing: inline CSS and inline SVG.
.github/workflows/site.yml publishes the site to GitHub Pages.`,
		Example: `  benchci site --out _site
  benchci site --out _site --repo-url https://github.com/benchci/benchci --proofs proofs results/quickstart.json`,
		RunE: func(cmd *cobra.Command, args []string) error {
			in, err := o.input(args)
			if err != nil {
				return err
			}
			return writeSite(cmd, in, o.out)
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "directory to write the site into")
	cmd.Flags().StringVar(&o.baselines, "baselines", layout.DefaultBaselines, "directory of baseline files (inside a git repository)")
	cmd.Flags().StringVar(&o.proofs, "proofs", "", "directory of release proofs (*.intoto.json) to publish and link")
	cmd.Flags().StringVar(&o.repoURL, "repo-url", "", "the repository's web address, for links to commits and pull requests")
	cmd.Flags().StringVar(&o.minChange, "min-change", "5%", "smallest move named a change point")
	return cmd
}

// siteOptions are site's flags.
type siteOptions struct {
	out, baselines, proofs, repoURL, minChange string
}

// input checks the flags and reads the results and proofs named.
func (o siteOptions) input(args []string) (site.Input, error) {
	if o.out == "" {
		return site.Input{}, &exitError{exitUsage, fmt.Errorf("site: --out DIR is required")}
	}
	shift, err := percent(o.minChange)
	if err != nil {
		return site.Input{}, &exitError{exitUsage, fmt.Errorf("--min-change: %w", err)}
	}
	in := site.Input{Baselines: o.baselines, RepoURL: o.repoURL, MinShift: shift, Tool: Version, Generated: siteNow()}
	for _, p := range args {
		f, err := result.Read(p)
		if err != nil {
			return site.Input{}, &exitError{exitUsage, err}
		}
		in.Results = append(in.Results, f)
	}
	if o.proofs != "" {
		if in.Proofs, err = readProofs(o.proofs); err != nil {
			return site.Input{}, &exitError{exitUsage, err}
		}
	}
	return in, nil
}

// writeSite builds the site from in and writes it into dir.
func writeSite(cmd *cobra.Command, in site.Input, dir string) error {
	ctx := cmd.Context()
	s, err := site.Build(ctx, in)
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		return &exitError{exitUsage, err}
	}
	files, err := s.Render()
	if err != nil {
		return err
	}
	if err := files.Write(dir); err != nil {
		return err
	}
	fmt.Fprintf(cmd.OutOrStdout(), "wrote %d files to %s: open %s\n", len(files), dir, filepath.Join(dir, "index.html"))
	for _, n := range s.Notes {
		fmt.Fprintln(cmd.ErrOrStderr(), "benchci: note:", n)
	}
	return nil
}

// readProofs reads every *.intoto.json under dir, links not followed,
// named by its path inside dir.
func readProofs(dir string) ([]site.Proof, error) {
	var out []site.Proof
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() || !strings.HasSuffix(path, ".intoto.json") {
			return nil
		}
		data, err := inputfile.ReadFile(path, maxStatementBytes)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, path)
		if err != nil {
			return err
		}
		p, err := site.ParseProof(filepath.ToSlash(rel), data)
		if err != nil {
			return err
		}
		out = append(out, p)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("--proofs: %w", err)
	}
	return out, nil
}
