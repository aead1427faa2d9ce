package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/gitrev"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/report"
)

// baselineEdits compares each gated suite's baseline with its version at
// the base revision, and returns the suites whose baseline this change
// added, edited or deleted, with the baselines deleted of suites the job
// did not gate (deleted: a suite renamed along with deleting its old
// baseline leaves the gate so, and the owners of baselines/ must see
// it). A terminal line says each; nothing is returned outside a pull
// request (no base revision known) or when --base-ref is "".
func baselineEdits(cmd *cobra.Command, o ciOptions, results []*result.File, abRuns []abRun, deleted []string) []report.BaselineEdit {
	rev := resolvedBaseRef(o)
	if rev == "" {
		return nil
	}
	seen := map[string]bool{}
	var names []string
	for _, f := range results {
		names = append(names, f.Suite.Name)
	}
	for _, ab := range abRuns {
		names = append(names, ab.cand.Suite.Name)
	}
	names = append(names, deleted...)
	var edits []report.BaselineEdit
	for _, name := range names {
		if seen[name] {
			continue
		}
		seen[name] = true
		path := layout.Baselines(o.run.baselines).Baseline(name)
		now, err := result.ReadBytes(path)
		if errors.Is(err, os.ErrNotExist) {
			// Deleting a baseline turns the gate off for the suite: as
			// loud as loosening it.
			if _, commit, err := gitrev.ReadFile(path, rev, result.MaxFileBytes); err == nil {
				edits = append(edits, report.BaselineEdit{Suite: name, Base: commit, Removed: true})
				fmt.Fprintf(o.run.output(cmd).say(), "baseline %s: deleted here; the gate no longer compares it\n", name)
			}
			continue
		}
		if err != nil {
			continue // unreadable here: the gate says why
		}
		e, ok := baselineEdit(name, path, rev, now)
		if !ok {
			continue
		}
		edits = append(edits, e)
		out := o.run.output(cmd).say()
		switch {
		case e.Err != "":
			fmt.Fprintf(out, "baseline %s: changed here; its version at %s could not be read: %s\n", name, rev, report.OneLine(e.Err))
		case e.Added:
			fmt.Fprintf(out, "baseline %s: added here\n", name)
		case e.Edit.WorkloadChanged:
			fmt.Fprintf(out, "baseline %s: re-recorded for a changed workload\n", name)
		default:
			fmt.Fprintf(out, "baseline %s: edited here, %d gated figures moved, %d make the gate more lenient\n", name, len(e.Edit.Moves), e.Edit.Lenient())
		}
	}
	return edits
}

// baselineEdit reads the baseline at rev and diffs it with now; false
// when the file is the same at both.
func baselineEdit(name, path, rev string, now []byte) (report.BaselineEdit, bool) {
	e := report.BaselineEdit{Suite: name}
	old, commit, err := gitrev.ReadFile(path, rev, result.MaxFileBytes)
	e.Base = commit
	switch {
	case errors.Is(err, os.ErrNotExist):
		e.Added = true
		return e, true
	case err != nil:
		e.Err = err.Error()
		return e, true
	case bytes.Equal(old, now):
		return e, false
	}
	before, err := baseline.Parse(old)
	if err != nil {
		e.Err = fmt.Sprintf("the base's version does not read: %v", err)
		return e, true
	}
	after, err := baseline.Parse(now)
	if err != nil {
		e.Err = fmt.Sprintf("this version does not read: %v", err)
		return e, true
	}
	e.Edit = baseline.Diff(before, after)
	return e, true
}

// resolvedBaseRef is --base-ref, "auto" resolved.
func resolvedBaseRef(o ciOptions) string {
	if o.baseRef == "auto" {
		return autoBaseRef(o.ab)
	}
	return o.baseRef
}

// autoBaseRef is the revision a pull request is merged into: --ab's when
// given, else the base commit in the Actions event, else the base branch
// as fetched ($GITHUB_BASE_REF); "" outside a pull request.
func autoBaseRef(ab string) string {
	if ab != "" {
		return ab
	}
	if sha := readEvent().baseSHA; isHex(sha) {
		return sha
	}
	if ref := os.Getenv("GITHUB_BASE_REF"); ref != "" {
		return "origin/" + ref
	}
	return ""
}

func isHex(s string) bool {
	if len(s) < 7 || len(s) > 64 {
		return false
	}
	for _, c := range s {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
