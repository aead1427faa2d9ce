package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	intoto "github.com/in-toto/attestation/go/v1"
	"github.com/spf13/cobra"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/framework/suitefile"
	"github.com/benchci/benchci/internal/gitrev"
	"github.com/benchci/benchci/internal/inputfile"
	"github.com/benchci/benchci/internal/policy"
	"github.com/benchci/benchci/internal/report"
)

// maxStatementBytes bounds a statement read: actions/attest refuses
// predicates over 16 MiB, so no signed statement is larger.
const maxStatementBytes = 16 << 20

// verifyCheck is one check's outcome: passed, failed, or not run (skip,
// with why).
type verifyCheck struct {
	name    string
	failed  bool
	skipped bool
	summary string
	details []string
}

func verifyCmd() *cobra.Command {
	var against, checkout string
	var maxAge time.Duration
	var sf suiteFlags
	cmd := &cobra.Command{
		Use:   "verify STATEMENT",
		Short: "Check a statement benchci attest wrote against this checkout",
		Long: `verify checks an in-toto statement written by benchci attest against the
checkout (the git repository holding --checkout, the working directory by
default; outside a repository, that directory itself):

  statement  it is an in-toto Statement v1 with benchci's predicate type
  predicate  each suite definition it carries matches its digests
  files      each subject's SHA-256 matches the file at its path here (a
             results file absent here is not checked, and said so)
  SLOs       every SLO verdict passed (a suite with none proves nothing)
  policy     the rules the results were measured with are no looser than
             the suite's at --against (tolerances, SLOs, trials, sweep,
             goodput, sanity)
  age        it was made within --max-age (0: any age)

It cannot check the signature offline: gh attestation verify STATEMENT
--repo OWNER/REPO checks the GitHub artifact attestation that signs it.
Exit codes: 0 verified, 1 a check failed, 2 usage or an unreadable
statement.`,
		Example: `  benchci verify results/attestation.intoto.json
  benchci verify --against origin/main --max-age 168h attestation.intoto.json`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			opts, err := sf.options()
			if err != nil {
				return err
			}
			st, pred, err := readStatement(args[0])
			if err != nil {
				return &exitError{exitUsage, err}
			}
			root := repoRoot(checkout)
			var checks []verifyCheck
			checks = append(checks, verifyCheck{name: "statement", summary: fmt.Sprintf("in-toto Statement v1, predicate %s, %d subject(s), %d run(s), benchci %s at commit %s",
				sloPredicateType, len(st.GetSubject()), len(pred.Runs), pred.Benchci, shortCommit(pred.Commit))})
			checks = append(checks, checkPredicate(st, pred))
			checks = append(checks, checkSubjects(root, st))
			checks = append(checks, checkSLOs(pred))
			pc, err := checkPolicy(cmd.Context(), root, against, cmd.Flags().Changed("against"), opts, pred)
			if err != nil {
				return err
			}
			checks = append(checks, pc)
			checks = append(checks, checkAge(pred.MadeAt, attestNow(), maxAge))
			failed := printVerify(cmd.OutOrStdout(), args[0], pred, checks)
			if failed > 0 {
				return &exitError{exitFailed, fmt.Errorf("%s not verified: %d problem(s)", args[0], failed)}
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&against, "against", "HEAD", "the release branch's revision whose suites' rules the results must not loosen (e.g. origin/main)")
	cmd.Flags().StringVarP(&checkout, "checkout", "C", ".", "the checkout to check the statement against")
	cmd.Flags().DurationVar(&maxAge, "max-age", 720*time.Hour, "refuse a statement made longer ago than this (0: any age)")
	sf.register(cmd)
	return cmd
}

// readStatement reads a statement, bounded, as benchci's: an in-toto
// Statement v1 whose predicate is of benchci's type.
func readStatement(path string) (*intoto.Statement, *sloPredicate, error) {
	data, err := inputfile.ReadFile(path, maxStatementBytes)
	if err != nil {
		return nil, nil, fmt.Errorf("read the statement: %w", err)
	}
	var st intoto.Statement
	if err := protojson.Unmarshal(data, &st); err != nil {
		return nil, nil, fmt.Errorf("%s is not an in-toto statement: %w", path, err)
	}
	if err := st.Validate(); err != nil {
		return nil, nil, fmt.Errorf("%s is not a valid in-toto statement: %w", path, err)
	}
	if st.GetType() != intoto.StatementTypeUri {
		return nil, nil, fmt.Errorf("%s is a statement of type %q, not %s", path, report.OneLine(st.GetType()), intoto.StatementTypeUri)
	}
	if st.GetPredicateType() != sloPredicateType {
		return nil, nil, fmt.Errorf("%s has predicate type %q, not benchci's %s", path, report.OneLine(st.GetPredicateType()), sloPredicateType)
	}
	raw, err := protojson.Marshal(st.GetPredicate())
	if err != nil {
		return nil, nil, fmt.Errorf("%s: its predicate: %w", path, err)
	}
	var pred sloPredicate
	if err := json.Unmarshal(raw, &pred); err != nil {
		return nil, nil, fmt.Errorf("%s: its predicate is not benchci's: %w", path, err)
	}
	if len(pred.Runs) == 0 || pred.MadeAt.IsZero() {
		return nil, nil, fmt.Errorf("%s: its predicate holds no run, or no time it was made", path)
	}
	return &st, &pred, nil
}

// checkPredicate checks the predicate agrees with itself and the
// subjects: each definition hashes to its digest and its policy to the
// policy digest, and each run's files are subjects. An edit to one and
// not the other shows here; the signature covers the rest.
func checkPredicate(st *intoto.Statement, pred *sloPredicate) verifyCheck {
	c := verifyCheck{name: "predicate"}
	names := map[string]bool{}
	for _, s := range st.GetSubject() {
		names[s.GetName()] = true
	}
	for _, r := range pred.Runs {
		who := "suite " + report.OneLine(r.Suite.Name)
		if got := sha256Hex([]byte(r.Suite.Definition)); got != r.Suite.DefinitionSHA256 {
			c.details = append(c.details, fmt.Sprintf("%s: its definition hashes to %.12s, the predicate says %.12s", who, got, r.Suite.DefinitionSHA256))
			continue
		}
		s, err := suite.Decode([]byte(r.Suite.Definition))
		if err != nil {
			c.details = append(c.details, fmt.Sprintf("%s: its definition does not decode: %s", who, report.OneLine(err.Error())))
			continue
		}
		if pd, err := policyDigest(s); err != nil || pd != r.PolicySHA256 {
			c.details = append(c.details, fmt.Sprintf("%s: its policy hashes to %.12s, the predicate says %.12s", who, pd, r.PolicySHA256))
		}
		for _, n := range []string{r.Results, r.Suite.File} {
			if !names[n] {
				c.details = append(c.details, fmt.Sprintf("%s: %s is not a subject", who, report.OneLine(n)))
			}
		}
	}
	c.failed = len(c.details) > 0
	c.summary = "each suite's definition and policy match their digests"
	if c.failed {
		c.summary = "the predicate does not agree with itself"
	}
	return c
}

// checkSubjects hashes each subject's file in this checkout.
func checkSubjects(root string, st *intoto.Statement) verifyCheck {
	c := verifyCheck{name: "files"}
	matched, absent := 0, 0
	for _, s := range st.GetSubject() {
		name := s.GetName()
		want := s.GetDigest()["sha256"]
		rel := filepath.FromSlash(name)
		if !filepath.IsLocal(rel) || want == "" {
			c.details = append(c.details, fmt.Sprintf("%s: not a path in a checkout, or no sha256 digest", report.OneLine(name)))
			continue
		}
		got, err := fileSHA256(filepath.Join(root, rel))
		switch {
		case errors.Is(err, os.ErrNotExist) && s.GetAnnotations().GetFields()["role"].GetStringValue() == roleResults:
			// Results are outputs, not committed: a fresh checkout lacks them.
			absent++
			c.details = append(c.details, fmt.Sprintf("not checked: %s is not in this checkout (a results file: check it where it was kept)", report.OneLine(name)))
		case err != nil:
			c.details = append(c.details, fmt.Sprintf("%s: %s", report.OneLine(name), report.OneLine(err.Error())))
			c.failed = true
		case got != want:
			c.details = append(c.details, fmt.Sprintf("%s changed: sha256 %.12s → %.12s", report.OneLine(name), want, got))
			c.failed = true
		default:
			matched++
		}
	}
	if len(c.details) > absent {
		c.failed = true
	}
	c.summary = fmt.Sprintf("%d of %d subject(s) match this checkout", matched, len(st.GetSubject()))
	if absent > 0 {
		c.summary += fmt.Sprintf(" (%d results file(s) absent, not checked)", absent)
	}
	return c
}

// checkSLOs requires every verdict to have passed.
func checkSLOs(pred *sloPredicate) verifyCheck {
	c := verifyCheck{name: "SLOs"}
	n := 0
	for _, r := range pred.Runs {
		if len(r.SLOs) == 0 {
			c.details = append(c.details, fmt.Sprintf("suite %s declares no SLO: it proves nothing", report.OneLine(r.Suite.Name)))
		}
		for _, v := range r.SLOs {
			n++
			where := v.Point
			if v.Trial > 1 {
				where += fmt.Sprintf(" trial %d", v.Trial)
			}
			switch {
			case v.Inconclusive:
				c.details = append(c.details, fmt.Sprintf("INCONCLUSIVE  %s (%s)", report.OneLine(v.Name), report.OneLine(where)))
			case !v.Pass:
				c.details = append(c.details, fmt.Sprintf("FAILED  %s (%s): measured %g %s, limit %g", report.OneLine(v.Name), report.OneLine(where), v.Measured, report.OneLine(v.Unit), v.Limit))
			}
		}
	}
	c.failed = len(c.details) > 0
	c.summary = fmt.Sprintf("%d of %d verdict(s) passed", n-len(c.details), n)
	return c
}

// checkPolicy compares the rules each run was measured with against the
// suite's at the release branch: a looser one fails. Outside a git
// repository, with no --against given, there is no branch to compare with.
func checkPolicy(ctx context.Context, root, against string, explicit bool, opts suitefile.Options, pred *sloPredicate) (verifyCheck, error) {
	c := verifyCheck{name: "policy"}
	if _, err := gitrev.Root(root); err != nil && !explicit {
		c.skipped = true
		c.summary = "not checked: not in a git repository, so no release branch to compare the rules with (--against REV)"
		return c, nil
	}
	tmp, err := os.MkdirTemp("", "benchci-verify-")
	if err != nil {
		return c, err
	}
	defer os.RemoveAll(tmp)
	tree, err := gitrev.Write(root, against, tmp, gitrev.DefaultLimits)
	if err != nil {
		return c, &exitError{exitUsage, fmt.Errorf("--against: %w", err)}
	}
	at := fmt.Sprintf("%s (%.12s)", against, tree.Commit)
	for _, r := range pred.Runs {
		who := "suite " + report.OneLine(r.Suite.Name)
		cand, err := suite.Decode([]byte(r.Suite.Definition))
		if err != nil {
			c.details = append(c.details, fmt.Sprintf("%s: its definition does not decode", who))
			continue
		}
		rel := filepath.FromSlash(r.Suite.File)
		if !filepath.IsLocal(rel) {
			c.details = append(c.details, fmt.Sprintf("%s: %s is not a path in a checkout", who, report.OneLine(r.Suite.File)))
			continue
		}
		bp := filepath.Join(tree.Dir, rel)
		if _, err := os.Stat(bp); err != nil {
			c.details = append(c.details, fmt.Sprintf("%s: %s is not at %s: no rules to compare with", who, report.OneLine(r.Suite.File), at))
			continue
		}
		l, err := loadSuite(ctx, bp, opts)
		if err != nil {
			c.details = append(c.details, fmt.Sprintf("%s: %s at %s does not evaluate: %s", who, report.OneLine(r.Suite.File), at, firstLine(err)))
			continue
		}
		base := variantNamed(l, r.Suite.Name)
		if base == nil {
			c.details = append(c.details, fmt.Sprintf("%s: %s at %s does not define it", who, report.OneLine(r.Suite.File), at))
			continue
		}
		changes, err := policy.Diff(base, cand)
		if err != nil {
			c.details = append(c.details, fmt.Sprintf("%s: %s", who, report.OneLine(err.Error())))
			continue
		}
		for _, ch := range policy.Looser(changes) {
			c.details = append(c.details, fmt.Sprintf("%s: looser than at %s: %s", who, against, report.OneLine(ch.String())))
		}
	}
	c.failed = len(c.details) > 0
	c.summary = "the rules measured with are no looser than the suites' at " + at
	if c.failed {
		c.summary = "the rules measured with are not the release branch's, " + at
	}
	return c, nil
}

// checkAge refuses a statement older than maxAge, or made in the future
// (beyond a few minutes of clock skew).
func checkAge(made, now time.Time, maxAge time.Duration) verifyCheck {
	c := verifyCheck{name: "age"}
	age := now.Sub(made)
	c.summary = fmt.Sprintf("made %s, %s ago", made.UTC().Format(time.RFC3339), age.Round(time.Minute))
	switch {
	case age < -5*time.Minute:
		c.failed = true
		c.summary = fmt.Sprintf("made %s, in the future", made.UTC().Format(time.RFC3339))
	case maxAge > 0 && age > maxAge:
		c.failed = true
		c.summary += fmt.Sprintf(", older than --max-age %s", maxAge)
	case maxAge == 0:
		c.summary += " (no --max-age)"
	default:
		c.summary += fmt.Sprintf(" (--max-age %s)", maxAge)
	}
	return c
}

// printVerify writes the answer first, then every check, and returns how
// many failed.
func printVerify(w io.Writer, path string, pred *sloPredicate, checks []verifyCheck) int {
	failed := 0
	for _, c := range checks {
		if c.failed {
			failed++
		}
	}
	var suites []string
	for _, r := range pred.Runs {
		suites = append(suites, report.OneLine(r.Suite.Name))
	}
	var b bytes.Buffer
	if failed == 0 {
		fmt.Fprintf(&b, "✅ verified: %s (suite %s)\n", path, strings.Join(suites, ", "))
	} else {
		fmt.Fprintf(&b, "❌ not verified: %d problem(s) in %s (suite %s)\n", failed, path, strings.Join(suites, ", "))
	}
	for _, c := range checks {
		mark := "✅"
		switch {
		case c.failed:
			mark = "❌"
		case c.skipped:
			mark = "⚠️"
		}
		fmt.Fprintf(&b, "  %s %-9s  %s\n", mark, c.name, c.summary)
		for _, d := range c.details {
			fmt.Fprintf(&b, "       %s\n", d)
		}
	}
	fmt.Fprintf(&b, "  ⚠️ signature  not checked here: gh attestation verify %s --repo OWNER/REPO checks the GitHub artifact attestation that signs it\n", path)
	w.Write(b.Bytes())
	return failed
}

func shortCommit(c string) string {
	if c == "" {
		return "(none: not a git repository)"
	}
	return c[:min(12, len(c))]
}
