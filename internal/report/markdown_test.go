package report

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
)

func f64(v float64) *float64 { return &v }

func sampleReports() []*compare.Report {
	day := time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC)
	r := &compare.Report{
		Suite: "chat|8b", Comparable: true, Method: "the method",
		Baseline:  compare.Side{Target: "url llama-<8b>", Started: day, Complete: true},
		Candidate: compare.Side{Target: "url llama-8b-fp8 @team", Started: day.Add(48 * time.Hour), Complete: true},
		SLOs: []result.SLO{
			{Name: "ttft p99 < 500ms @ rate=8", Point: "rate=8", Measured: 612.5, Unit: "ms"},
			{Name: "error_rate <= 0.01", Point: "rate=2", Measured: 0, Unit: "fraction", Pass: true},
		},
		Rows: []compare.Row{
			{Point: "rate=2", Metric: "ttft.p99", Unit: "ms", Base: 120, Cand: 118, Delta: f64(-2.0 / 120), Band: "±10%", Verdict: compare.Pass},
			{Point: "rate=2", Metric: "cost", Unit: "$/1M out", Base: 4, Cand: 4.4, Delta: f64(0.1), Band: "±5%", Verdict: compare.Regression, Test: "band only (1 vs 1 trials; need 4 each for a test)"},
			{Point: "rate=8", Metric: "ttft.p99", Unit: "ms", Base: 300, Cand: 612.5, Delta: f64(612.5/300 - 1), Band: "±10%", Verdict: compare.Regression, Test: "99% CI 280–320 vs 590–640 (n=480, 480)"},
			{Point: "rate=8", Metric: "output_throughput", Unit: "tok/s", Base: 900, Cand: 980, Delta: f64(80.0 / 900), Band: "±5%", Verdict: compare.Noise, Test: "99% CI"},
			{Point: "rate=8", Metric: "cost", Unit: "$/1M out", Base: 1, Cand: 1.02, Delta: f64(0.02), Band: "±5%", Verdict: compare.Pass},
			{Point: "rate=8", Metric: "error_rate", Unit: "fraction", Base: 0.02, Cand: 0, Delta: f64(-1), Band: "±1 pp", Verdict: compare.Improvement, Test: "band only (1 vs 1 trials; need 4 each for a test)"},
			{Point: "rate=16", Metric: "*", Verdict: compare.Missing},
		},
	}
	fresh := &compare.Report{Suite: "new-suite", NoBaseline: true, Candidate: compare.Side{Target: "sim tiny", Started: day, Complete: false},
		SLOs: []result.SLO{{Name: "ttft p99 < 500ms", Point: "rate=4", Measured: 210, Unit: "ms", Pass: true}},
		Rows: []compare.Row{
			{Point: "rate=1", Metric: "ttft.p99", Unit: "ms", Cand: 95, Verdict: compare.New},
			{Point: "rate=1", Metric: "output_throughput", Unit: "tok/s", Cand: 120, Verdict: compare.New},
			{Point: "rate=4", Metric: "ttft.p99", Unit: "ms", Cand: 210, Verdict: compare.New},
			{Point: "rate=4", Metric: "output_throughput", Unit: "tok/s", Cand: 470, Verdict: compare.New},
		}}
	return []*compare.Report{r, fresh}
}

func TestMarkdownGolden(t *testing.T) {
	var b strings.Builder
	if err := Markdown(&b, Marker("suites"), sampleReports()); err != nil {
		t.Fatal(err)
	}
	golden(t, "testdata/report.md.golden", b.String())
}

func TestHeadline(t *testing.T) {
	t.Parallel()
	got := Headline(sampleReports())
	// The fresh suite's run is incomplete: that leads.
	// Of several suites, those that failed are named.
	want := "❌ 1 run failed or incomplete (new-suite), 2 regressions (chat|8b), 1 SLO failed (chat|8b), 1 point missing, 1 improvement, 1 within noise, cost +6.0% per 1M output tokens"
	if got != want {
		t.Errorf("headline %q, want %q", got, want)
	}
	complete := &compare.Report{Suite: "s", NoBaseline: true, Candidate: compare.Side{Complete: true}}
	if got := Headline([]*compare.Report{complete}); got != "✅ 0 regressions" {
		t.Errorf("complete run without baseline: %q", got)
	}
	if got := Headline(nil); got != "✅ 0 regressions" {
		t.Errorf("empty headline %q", got)
	}
}

// TestMarkdownFitsCommentLimit builds a report far over GitHub's limit and
// checks the output is cut down to fit, still starting with the marker and
// the headline.
func TestMarkdownFitsCommentLimit(t *testing.T) {
	t.Parallel()
	var reports []*compare.Report
	for range 40 {
		r := sampleReports()[0]
		for i := range 300 {
			r.Rows = append(r.Rows, compare.Row{Point: "rate=" + strings.Repeat("9", i%7+1), Metric: "e2e.p99", Unit: "ms", Base: 1, Cand: 2, Delta: f64(1), Band: "±10%", Verdict: compare.Regression, Test: "x"})
		}
		reports = append(reports, r)
	}
	var b strings.Builder
	if err := Markdown(&b, Marker("k"), reports); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	if len(s) > MaxComment {
		t.Fatalf("%d characters, limit %d", len(s), MaxComment)
	}
	if !strings.HasPrefix(s, Marker("k")+"\n## benchci: ❌") || !strings.Contains(s, "truncated") {
		t.Errorf("cut report starts %q, ends %q", s[:80], s[len(s)-120:])
	}
}

func TestEscape(t *testing.T) {
	t.Parallel()
	tests := map[string]string{
		"a|b":                        `a\|b`,
		"<script>alert(1)</script>":  "&lt;script&gt;alert(1)&lt;/script&gt;",
		"[x](http://evil) @everyone": `\[x\](http:` + "\u200b" + `//evil) @` + "\u200b" + "everyone",
		"meta-llama https://evil.example/x www.evil.example": "meta-llama https:\u200b//evil.example/x www\u200b.evil.example",
		"line\nbreak":    "line break",
		"`code` *b* _i_": "\\`code\\` \\*b\\* \\_i\\_",
	}
	// A point label that tries to leave the Mermaid block is not copied
	// into it: labels are rewritten from their numbers.
	evil := &compare.Report{Suite: "s", Comparable: true, Rows: []compare.Row{
		{Point: "rate\n```\n# injected=1", Metric: "ttft.p99", Base: 1, Cand: 2},
		{Point: "rate=2", Metric: "ttft.p99", Base: 1, Cand: 2},
	}}
	var md strings.Builder
	mermaidChart(&md, evil, "ttft.p99")
	if strings.Contains(md.String(), "injected") {
		t.Errorf("the chart copied an untrusted label:\n%s", md.String())
	}
	for in, want := range tests {
		if got := Escape(in); got != want {
			t.Errorf("Escape(%q) = %q, want %q", in, got, want)
		}
	}
}

// The terminal summary leads as the comment does: regressions worst
// first, failed SLOs, improvements, and a count of the rest.
func TestSummaryGolden(t *testing.T) {
	var b strings.Builder
	for _, r := range sampleReports() {
		if err := Summary(&b, r); err != nil {
			t.Fatal(err)
		}
	}
	golden(t, "testdata/summary.golden", b.String())
}

// Rows of the models of a mix stay out of the chart, which draws the
// points' own figures.
func TestMermaidSkipsModelRows(t *testing.T) {
	t.Parallel()
	r := &compare.Report{Suite: "s", Comparable: true, NoBaseline: true}
	for _, p := range []string{"rate=1", "rate=1 [lora]", "rate=2", "rate=2 [lora]"} {
		r.Rows = append(r.Rows, compare.Row{Point: p, Metric: "ttft.p99", Unit: "ms", Cand: 10})
	}
	var b strings.Builder
	mermaidChart(&b, r, "ttft.p99")
	if got := b.String(); !strings.Contains(got, `x-axis "rate" ["1", "2"]`) {
		t.Errorf("chart:\n%s", got)
	}
}

// A run whose launched server died leads the comment with that, before
// the advice for a busy machine its inconclusive verdicts would bring.
func TestMarkdownDeadServerLeads(t *testing.T) {
	r := &compare.Report{Suite: "launched", NoBaseline: true, Comparable: true,
		Candidate: compare.Side{Target: "launch vllm", Error: "suite launched: rate=8: the launched server exited during the run; its remaining points were not run"},
		SLOs:      []result.SLO{{Name: "ttft p99 < 500ms", Point: "rate=4", Inconclusive: true, Note: "inconclusive: the trial did not measure the server"}}}
	var b strings.Builder
	if err := Markdown(&b, "", []*compare.Report{r}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	dead, busy := strings.Index(md, "did not finish:** suite launched"), strings.Index(md, "Inconclusive.")
	if dead < 0 || (busy >= 0 && busy < dead) || !strings.HasPrefix(md, "## benchci: ❌") || !strings.Contains(md, "the launched server exited") {
		t.Errorf("comment:\n%s", md)
	}
}

// A first run whose points measured the machine shows no column of
// zeros named "*": each point's reason is said instead, and the
// comparison table shows "-" for figures it has not.
func TestNoBaselineInconclusiveShowsReasons(t *testing.T) {
	f := &result.File{Suite: result.Suite{Name: "first"}, Points: []result.Point{
		{Label: "rate=2", Mode: "rate", Rate: 2, Trial: 1, Validity: &result.Validity{Invalid: []string{"the machine stalled 1.20 s"}}},
	}}
	r := compare.WithoutBaseline(f)
	var b strings.Builder
	if err := Markdown(&b, "", []*compare.Report{r}); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	if strings.Contains(md, "| * |") || strings.Contains(md, "Measured (the candidate") || !strings.Contains(md, "`rate=2`: no figures, no trial measured the server") {
		t.Errorf("comment:\n%s", md)
	}
	var txt strings.Builder
	if err := Write(&txt, "text", Gate(r, true)); err != nil {
		t.Fatal(err)
	}
	for _, format := range []string{"text", "markdown", "json"} {
		var out strings.Builder
		if err := Write(&out, format, Doc{Tables: []*Table{diffTable(r)}}); err != nil {
			t.Fatal(err)
		}
		if regexp.MustCompile(`\*[\s|",:a-z]+0[\s|",]`).MatchString(out.String()) {
			t.Errorf("%s shows a zero figure for the marker row:\n%s", format, out.String())
		}
	}
}
