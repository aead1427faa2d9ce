package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/configdiff"
	"github.com/benchci/benchci/internal/errjoin"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/redact"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/report/htmlpage"
	"github.com/benchci/benchci/internal/variants"
)

type ciOptions struct {
	run       runOptions
	comment   commentOptions
	summary   string
	reportOut string
	htmlOut   string
	artifact  string
	// measured: the arguments are results files to gate, not suites to run.
	measured bool
	// ab, when set, is the revision each suite is also run at, on this
	// machine, interleaved: the candidate is judged against it.
	ab      string
	post    bool
	outputs string
	// baseRef is the revision baseline edits are shown against ("auto":
	// the pull request's base, from the Actions event).
	baseRef string
	// suiteFromResults: --measured judges SLOs from the definition the
	// results carry, not from the checkout's suite.
	suiteFromResults bool
}

func ciCmd() *cobra.Command {
	var o ciOptions
	var format *formatFlag
	cmd := &cobra.Command{
		Use:   "ci SUITE...",
		Short: "Run, compare with baselines, write the job summary and comment on the PR",
		Long: `ci is what the workflow calls: it runs the suites (as benchci run), compares
each with baselines/<suite>.json, writes the markdown report to --report and
to $GITHUB_STEP_SUMMARY, and updates the sticky pull-request comment when a
token, repository and pull request are known.

Exit code: 1 on a regression or SLO failure; 2 when a suite could not run
or be compared; 3 when nothing failed but a point was inconclusive (every
trial of it measured this machine rather than the server, even after
--reruns); 0 otherwise. The verdict does not depend on the comment: if posting fails
the error is printed and the exit code still tells the verdict.

--format sets how stdout shows the tables and verdicts (json: one document,
the other lines on stderr); the report files are markdown and HTML whatever
it is.`,
		Example: `  # What the workflow runs on a pull request.
  benchci ci suites/quickstart.jsonnet

  # Locally: no comment, the reports under results/.
  benchci ci --comment=false --summary "" suites/quickstart.jsonnet

  # Against the base branch built and run on this machine, interleaved.
  benchci ci --ab origin/main suites/gate.jsonnet

  # Gate results a sharded run measured and benchci merge joined.
  benchci ci --measured results/quickstart.json`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if o.htmlOut == "auto" {
				o.htmlOut = ""
				if o.reportOut != "" {
					o.htmlOut = strings.TrimSuffix(o.reportOut, ".md") + ".html"
				}
			}
			o.run.out = newOutput(cmd, format)
			var regressions int
			err := runCI(cmd, o, args, &regressions)
			err = o.run.out.done(err)
			if o.outputs != "" {
				if werr := writeOutputs(o.outputs, err, regressions, o.reportOut, o.htmlOut); werr != nil {
					fmt.Fprintln(cmd.ErrOrStderr(), "benchci: warning: step outputs:", werr)
				}
			}
			return err
		},
	}
	o.run.register(cmd)
	format = addFormat(cmd)
	o.comment.register(cmd)
	cmd.Flags().StringVar(&o.summary, "summary", os.Getenv("GITHUB_STEP_SUMMARY"), "file to append the markdown report to (default $GITHUB_STEP_SUMMARY)")
	cmd.Flags().StringVar(&o.reportOut, "report", layout.Results(layout.DefaultResults).Report(), "where to write the markdown report")
	cmd.Flags().StringVar(&o.htmlOut, "html", "auto", `where to write the self-contained HTML report ("auto": beside --report, as .html; "" for none)`)
	cmd.Flags().StringVar(&o.ab, "ab", "", "also run each suite as it is at this git revision (the PR's base, e.g. origin/main), interleaved point by point on this machine, and judge the candidate against it instead of the committed baseline (still reported)")
	cmd.Flags().StringVar(&o.baseRef, "base-ref", "auto", `revision whose baselines this change's are shown against: every figure an edited baseline moves is listed at the top of the report, and those that make the gate more lenient flagged ("auto": the pull request's base, or --ab's revision; "" for none)`)
	cmd.Flags().BoolVar(&o.suiteFromResults, "suite-from-results", false, "with --measured: judge SLOs from the suite definition the results carry, when the suite file is not in this checkout or is at another version (the results are then trusted as they are; a suite file that is here must still define the suite by that name)")
	cmd.Flags().BoolVar(&o.run.virtual, "virtual", false, "replay every point on the embedded simulator in virtual time (a simulated clock), to gate a plan of simulated configs: compared only with baselines recorded --virtual, never with measured ones")
	cmd.Flags().BoolVar(&o.measured, "measured", false, "the arguments are results files already measured (a merged sharded run, benchci merge): gate, report and comment on them without running")
	cmd.Flags().StringVar(&o.artifact, "artifact", "", "name of the workflow artifact the HTML report is uploaded in: the comment links the run's artifacts")
	cmd.Flags().StringVar(&o.outputs, "outputs", os.Getenv("GITHUB_OUTPUT"), "file to append verdict=, regressions= and report= lines to (default $GITHUB_OUTPUT)")
	cmd.Flags().BoolVar(&o.post, "comment", true, "update the pull-request comment when GITHUB_TOKEN, the repository and the PR are known")
	return cmd
}

// writeOutputs appends the step outputs a workflow reads: the verdict
// (pass, fail, or error when a suite could not run), the regressions
// counted, and the report's path.
func writeOutputs(path string, err error, regressions int, reportPath, htmlPath string) error {
	verdict := "pass"
	var ee *exitError
	switch {
	case err == nil:
	case errors.As(err, &ee) && ee.code == exitFailed:
		verdict = "fail"
	case errors.As(err, &ee) && ee.code == exitInconclusive:
		verdict = "inconclusive"
	default:
		verdict = "error"
	}
	return appendFile(path, fmt.Appendf(nil, "verdict=%s\nregressions=%d\nreport=%s\nhtml=%s\n", verdict, regressions, reportPath, htmlPath))
}

// runCI runs or reads the suites, gates them, writes and posts the report,
// and returns the verdict's error: a short sequence of steps, each below.
func runCI(cmd *cobra.Command, o ciOptions, paths []string, regressions *int) error {
	if o.run.timeout > 0 {
		// --timeout bounds the whole job, the comment included, so the
		// verdict's exit code always comes.
		ctx, cancel := context.WithTimeoutCause(cmd.Context(), o.run.timeout, fmt.Errorf("--timeout %v reached", o.run.timeout))
		defer cancel()
		cmd.SetContext(ctx)
		o.run.timeout = 0
	}
	// The gate's rules are the base's: each suite is judged by the
	// stricter of its base's rules and its own, and a loosening shows.
	opts, err := o.run.suites.options()
	if err != nil {
		return &exitError{exitUsage, err}
	}
	rules := newPolicyReviewer(cmd.Context(), resolvedBaseRef(o), o.run.baselines, opts)
	defer rules.close()
	rules.recordDefined(paths) // before the run writes files a suite may read
	abRuns, results, runErr := ciResults(cmd, o, paths)
	if results == nil && abRuns == nil {
		return runErr // nothing ran: the suites did not load
	}
	g, err := gateCI(cmd, o, rules, abRuns, results, runErr, regressions)
	if err != nil {
		return err
	}
	g.deleted = rules.deletedBaselines()
	md, err := ciMarkdown(cmd, o, g, results, abRuns)
	if err != nil {
		return err
	}
	if err := publishCI(cmd, o, md); err != nil {
		return err
	}
	if len(g.errs) > 0 {
		return &exitError{exitUsage, errjoin.Join(g.errs...)}
	}
	return gateExit(g.reports)
}

// ciResults runs the suites (at --ab's revision too), or reads --measured's
// results. An error with neither runs nor results means nothing ran.
func ciResults(cmd *cobra.Command, o ciOptions, paths []string) ([]abRun, []*result.File, error) {
	if err := o.run.check(); err != nil {
		return nil, nil, &exitError{exitUsage, err}
	}
	switch {
	case o.ab != "" && o.measured:
		return nil, nil, &exitError{exitUsage, errors.New("--ab runs the suites; --measured gates results already measured: choose one")}
	case o.ab != "":
		return runAB(cmd, o.run, o.ab, paths)
	case o.measured:
		results, err := readMeasuredAll(cmd, o, paths)
		return nil, results, err
	}
	results, err := runAll(cmd, o.run, paths)
	return nil, results, err
}

// readMeasuredAll reads --measured's results files, each with the note
// readMeasured has on it; nil at the first that cannot be gated.
func readMeasuredAll(cmd *cobra.Command, o ciOptions, paths []string) ([]*result.File, error) {
	opts, err := o.run.suites.options()
	if err != nil {
		return nil, &exitError{exitUsage, err}
	}
	var results []*result.File
	for _, p := range paths {
		f, note, err := readMeasured(p, opts, o.suiteFromResults)
		if err != nil {
			return nil, &exitError{exitUsage, err}
		}
		if note != "" {
			fmt.Fprintf(o.run.output(cmd).say(), "note: %s: %s\n", f.Suite.Name, note)
		}
		results = append(results, f)
	}
	return results, nil
}

// ciGate is what the gate judged: each run with its report, the reports
// the exit code follows, the committed baselines' verdicts under A/B
// (shown, not gated), and the errors that make the verdict an error.
type ciGate struct {
	runs      []htmlpage.Run
	reports   []*compare.Report
	committed []*compare.Report
	errs      []error
	// deleted names the baselines this change deleted, gated or not.
	deleted []string
}

// gateCI judges every run, printing each comparison, and counts the
// regressions.
func gateCI(cmd *cobra.Command, o ciOptions, rules *policyReviewer, abRuns []abRun, results []*result.File, runErr error, regressions *int) (ciGate, error) {
	var g ciGate
	if runErr != nil {
		g.errs = append(g.errs, runErr)
	}
	ran, err := judgeABByBaseRules(rules, abRuns)
	if err != nil {
		return g, err
	}
	// A/B: each candidate is judged against its base, measured in the
	// same run; the committed baseline's verdict is shown, not gated.
	for _, ab := range abRuns {
		if err := g.add(cmd, o, htmlpage.Run{File: ab.cand, Gate: ab.gate}, regressions); err != nil {
			return g, err
		}
		if ab.committed != nil {
			g.committed = append(g.committed, ab.committed)
			fmt.Fprintf(o.run.output(cmd).say(), "against the committed baseline (for reference; A/B decides): %s\n", report.OneLine(report.Headline([]*compare.Report{ab.committed})))
		}
	}
	for _, f := range results {
		ran = append(ran, f)
		r, err := gateByBaseRules(rules, o.run.baselines, f)
		if err != nil {
			// The report says so: a gate that judged nothing never reads ✅.
			g.errs = append(g.errs, err)
			r = compare.Refused(f, "could not be compared with its baseline: "+err.Error())
		}
		if err := g.add(cmd, o, htmlpage.Run{File: f, Gate: r}, regressions); err != nil {
			return g, err
		}
	}
	g.reports = gates(g.runs)
	// Suites that left while their baseline stays fail as missing.
	for _, r := range rules.goneSuites(ran) {
		g.reports = append(g.reports, r)
		*regressions += r.Count(compare.Missing)
		if err := printComparison(o.run.output(cmd), r, o.run.verbose); err != nil {
			return g, err
		}
	}
	return g, nil
}

// add records a judged run, counts its regressions and prints it.
func (g *ciGate) add(cmd *cobra.Command, o ciOptions, run htmlpage.Run, regressions *int) error {
	g.runs = append(g.runs, run)
	*regressions += run.Gate.Count(compare.Regression) + run.Gate.Count(compare.Missing)
	return printComparison(o.run.output(cmd), run.Gate, o.run.verbose)
}

// ciMarkdown is the markdown report, secrets redacted: the lead, the
// gate's tables, the committed baselines' under A/B, the variants'
// answers, and a link to the HTML report, which it writes.
func ciMarkdown(cmd *cobra.Command, o ciOptions, g ciGate, results []*result.File, abRuns []abRun) ([]byte, error) {
	var md bytes.Buffer
	edits := baselineEdits(cmd, o, results, abRuns, g.deleted)
	if err := writeLead(&md, o.run.output(cmd).say(), o.comment.key, g.reports, edits); err != nil {
		return nil, err
	}
	if err := report.Markdown(&md, "", g.reports); err != nil {
		return nil, err
	}
	if len(g.committed) > 0 {
		fmt.Fprintf(&md, "\n<details><summary>Against the committed baselines, for reference (A/B against %s decides): %s</summary>\n\n",
			report.Escape(o.ab), report.Escape(report.Headline(g.committed)))
		if err := report.Markdown(&md, "", g.committed); err != nil {
			return nil, err
		}
		md.WriteString("\n</details>\n")
	}
	// Suites with variants: the answer across them follows the gate.
	for _, r := range variantReports(results) {
		md.WriteString("\n")
		if err := report.VariantsMarkdown(&md, r); err != nil {
			return nil, err
		}
	}
	if link := writeCIHTML(cmd, o, g.runs, results); link != "" {
		md.WriteString("\n" + link + "\n")
	}
	// The report quotes servers (error bodies); no secret reaches the file,
	// the job summary or the comment.
	return redact.Bytes(md.Bytes()), nil
}

// writeCIHTML writes the HTML report to --html, and returns the line that
// links to it in the run's artifacts ("" for none).
func writeCIHTML(cmd *cobra.Command, o ciOptions, runs []htmlpage.Run, results []*result.File) string {
	if o.htmlOut == "" || len(runs) == 0 {
		return ""
	}
	if err := writeHTML(o.htmlOut, runs, results); err != nil {
		// The verdict stands without its pictures.
		fmt.Fprintln(cmd.ErrOrStderr(), "benchci: warning: html report:", err)
		return ""
	}
	fmt.Fprintln(o.run.output(cmd).say(), "html:", o.htmlOut)
	return artifactLink(o.artifact, filepath.Base(o.htmlOut))
}

// publishCI writes the report to --report and the job summary, and posts
// the pull-request comment. Only the report file's failure is an error:
// the verdict stands whatever happened to the summary or the comment.
func publishCI(cmd *cobra.Command, o ciOptions, md []byte) error {
	if o.reportOut != "" {
		// Atomically, and a link there is refused, not written through.
		if err := result.WriteFileAtomic(o.reportOut, md); err != nil {
			return err
		}
	}
	if o.summary != "" {
		if err := appendFile(o.summary, md); err != nil {
			fmt.Fprintln(cmd.ErrOrStderr(), "benchci: warning: job summary:", err)
		}
	}
	skip := commentSkipped(o)
	if o.post && skip != "" {
		fmt.Fprintln(cmd.ErrOrStderr(), "benchci: comment skipped:", skip)
	}
	if o.post && skip == "" {
		url, err := postComment(cmd, o.comment, string(md))
		if err != nil {
			// The verdict below stands whatever happened to the comment.
			fmt.Fprintln(cmd.ErrOrStderr(), "benchci: warning: could not update the pull-request comment:", err)
		} else {
			fmt.Fprintln(o.run.output(cmd).say(), "comment:", url)
		}
	}
	return nil
}

// artifactLink is the markdown line that points a reader of the comment
// to the HTML report in the workflow run's artifacts, or "" outside a
// workflow run or without an artifact name. The artifact's own URL is
// only known once it is uploaded, after the comment: the run's page
// lists it.
func artifactLink(artifact, file string) string {
	server, repo, run := os.Getenv("GITHUB_SERVER_URL"), os.Getenv("GITHUB_REPOSITORY"), os.Getenv("GITHUB_RUN_ID")
	if artifact == "" || server == "" || repo == "" || run == "" {
		return ""
	}
	url := fmt.Sprintf("%s/%s/actions/runs/%s#artifacts", server, repo, run)
	return fmt.Sprintf("📊 Charts, distributions and every figure: `%s` in the **%s** artifact of [this run](%s).", report.Escape(file), report.Escape(artifact), url)
}

func appendFile(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// commentSkipped says why the pull-request comment cannot be posted, or ""
// when it can.
func commentSkipped(o ciOptions) string {
	switch {
	case os.Getenv("GITHUB_TOKEN") == "" && strings.HasPrefix(os.Getenv("GITHUB_EVENT_NAME"), "pull_request"):
		return "no GITHUB_TOKEN (a pull request from a fork gets no token that can write; use benchci-fork-safe.yml with benchci-comment.yml)"
	case os.Getenv("GITHUB_TOKEN") == "":
		return "no GITHUB_TOKEN"
	case o.comment.repo == "":
		return "no repository (--repo or GITHUB_REPOSITORY)"
	case o.comment.pr == 0 && prFromEvent() == 0:
		return "no pull request (--pr, or a pull_request event)"
	}
	return ""
}

// variantReports compares the variants of each suite among results that
// has them, in the order the suites ran. A comparison that cannot be
// made is skipped: the gate above has judged every variant already.
func variantReports(results []*result.File) []*variants.Report {
	var order []string
	bySuite := map[string][]variants.Entry{}
	for _, f := range results {
		if f.Suite.Variant == "" {
			continue
		}
		base := strings.TrimSuffix(f.Suite.Name, suite.VariantSep+f.Suite.Variant)
		if _, ok := bySuite[base]; !ok {
			order = append(order, base)
		}
		bySuite[base] = append(bySuite[base], variants.Entry{Name: f.Suite.Variant, File: f})
	}
	var out []*variants.Report
	for _, base := range order {
		if r, err := variants.Compare(bySuite[base]); err == nil {
			out = append(out, r)
		}
	}
	return out
}

// configChanges is what cand's run changed in the serving config against
// base's, for the top of the comment.
func configChanges(base, cand *result.File) *compare.Config {
	c := &compare.Config{Changes: []string{}}
	for _, ch := range configdiff.Diff(base, cand) {
		c.Changes = append(c.Changes, ch.String())
	}
	return c
}

// judgeABByBaseRules re-judges each A/B candidate by the stricter of its
// base's rules and its own, and returns the candidates under their
// suites' own names (for goneSuites).
func judgeABByBaseRules(rules *policyReviewer, abRuns []abRun) ([]*result.File, error) {
	var ran []*result.File
	for i := range abRuns {
		ab := &abRuns[i]
		name := strings.TrimSuffix(ab.cand.Suite.Name, suite.VariantSep+abCandidate)
		pol, by, err := rules.review(name, ab.cand.Suite.Path, ab.cand, ab.base)
		if err == nil {
			err = judgeBy(by, ab.cand)
		}
		if err == nil {
			label := ab.gate.Suite
			ab.gate, err = compare.Compare(ab.base, ab.cand, by.Tolerance)
			if err == nil {
				ab.gate.Suite, ab.gate.Policy, ab.gate.Config = label, pol, configChanges(ab.base, ab.cand)
			}
		}
		if err != nil {
			return nil, &exitError{exitUsage, fmt.Errorf("%s: the gate's rules: %w", name, err)}
		}
		asSuite := *ab.cand
		asSuite.Suite.Name = name
		ran = append(ran, &asSuite)
	}
	return ran, nil
}

// gateByBaseRules judges f against its committed baseline by the
// stricter of its base's rules and its own, with the policy review and
// the config changes on the report.
func gateByBaseRules(rules *policyReviewer, baselines string, f *result.File) (*compare.Report, error) {
	pol, by, err := rules.review(f.Suite.Name, f.Suite.Path, f, nil)
	if err != nil {
		return nil, err
	}
	if err := judgeBy(by, f); err != nil {
		return nil, err
	}
	r, err := compareWithBaselineBy(baselines, f, by.Tolerance)
	if err != nil {
		return nil, err
	}
	r.Policy = pol
	if b := rules.configBase(f.Suite.Name, f.Suite.Path); b != nil {
		r.Config = configChanges(b, f)
	}
	return r, nil
}

// writeLead writes what leads the comment, after its marker: the rules the
// change loosened, what it changed in the serving config, and the
// baseline edits; what they change makes every verdict below mean
// something else. The terminal gets a line for each loosened rule and
// changed setting.
func writeLead(md *bytes.Buffer, say io.Writer, key string, reports []*compare.Report, edits []report.BaselineEdit) error {
	md.WriteString(report.Marker(key) + "\n")
	if report.HasPolicyChanges(reports) {
		if err := report.PolicyChanges(md, reports); err != nil {
			return err
		}
	}
	if err := report.ConfigChanges(md, reports); err != nil {
		return err
	}
	for _, r := range reports {
		if p := r.Policy; p != nil {
			for _, c := range p.Looser {
				fmt.Fprintf(say, "policy %s: looser than the base's: %s\n", r.Suite, report.OneLine(c))
			}
		}
		if c := r.Config; c != nil {
			for _, ch := range c.Changes {
				fmt.Fprintf(say, "changed %s: %s\n", r.Suite, report.OneLine(ch))
			}
		}
	}
	if len(edits) > 0 {
		return report.BaselineEdits(md, edits)
	}
	return nil
}
