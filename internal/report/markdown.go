package report

import (
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
)

// MaxComment is GitHub's limit on a comment body, in characters.
const MaxComment = 65536

// Marker returns the hidden HTML comment that identifies benchci's sticky
// comment for a set of suites, so reruns update it instead of adding more.
func Marker(key string) string { return "<!-- benchci:" + Escape(key) + " -->" }

// Headline summarizes reports in one line, e.g.
// "❌ 2 regressions, 1 SLO failed · cost +9% per 1M output tokens".
func Headline(reports []*compare.Report) string { return headline(reports, OneLine) }

// headline is Headline with the suite names it quotes passed through
// name: escaped for markdown, or made one line for a terminal.
func headline(reports []*compare.Report, name func(string) string) string {
	var regs, imps, noise, slo, refused, missing, incomplete, inconclusive int
	var costDeltas, capDeltas []float64
	// With several suites (or variants), the headline names the ones that
	// failed, so the reader knows where to look before reading on.
	var regSuites, sloSuites, incSuites, loosened []string
	for _, r := range reports {
		if r.Policy.Blocks() {
			loosened = append(loosened, name(r.Suite))
		}
		if !r.Candidate.Complete {
			incomplete++
			incSuites = append(incSuites, name(r.Suite))
		}
		if r.Count(compare.Regression) > 0 {
			regSuites = append(regSuites, name(r.Suite))
		}
		if r.SLOFailures() > 0 {
			sloSuites = append(sloSuites, name(r.Suite))
		}
		regs += r.Count(compare.Regression)
		imps += r.Count(compare.Improvement)
		noise += r.Count(compare.Noise)
		missing += r.Count(compare.Missing)
		slo += r.SLOFailures()
		inconclusive += r.Count(compare.Inconclusive) + r.SLOInconclusive()
		if !r.Comparable && !r.NoBaseline {
			refused++
		}
		for _, row := range r.Rows {
			if row.Metric == metric.CostPerMOutput && row.Delta != nil {
				costDeltas = append(costDeltas, *row.Delta)
			}
			if row.Metric == metric.Capacity && row.Delta != nil {
				capDeltas = append(capDeltas, *row.Delta)
			}
		}
	}
	failed := regs+slo+refused+missing+incomplete+len(loosened) > 0
	var parts []string
	if len(loosened) > 0 {
		// The verdicts below were given by rules this change tried to
		// loosen: that is the news, before any figure.
		parts = append(parts, "policy loosened"+which(reports, loosened))
	}
	if incomplete > 0 {
		// First: a run that failed or was stopped is the news.
		parts = append(parts, Plural(incomplete, "run")+" failed or incomplete"+which(reports, incSuites))
	}
	parts = append(parts, Plural(regs, "regression")+which(reports, regSuites))
	if slo > 0 {
		parts = append(parts, Plural(slo, "SLO")+" failed"+which(reports, sloSuites))
	}
	if refused > 0 {
		parts = append(parts, Plural(refused, "suite")+" not comparable")
	}
	if missing > 0 {
		parts = append(parts, Plural(missing, "point")+" missing")
	}
	if inconclusive > 0 && failed {
		parts = append(parts, fmt.Sprintf("%d inconclusive", inconclusive))
	}
	if imps > 0 {
		parts = append(parts, Plural(imps, "improvement"))
	}
	if noise > 0 {
		parts = append(parts, fmt.Sprintf("%d within noise", noise))
	}
	if len(capDeltas) > 0 {
		parts = append(parts, fmt.Sprintf("capacity %s", Pct(mean(capDeltas))))
	}
	if len(costDeltas) > 0 {
		parts = append(parts, fmt.Sprintf("cost %s per 1M output tokens", Pct(mean(costDeltas))))
	}
	icon := "✅"
	switch {
	case failed:
		icon = "❌"
	case inconclusive > 0:
		// Not a pass: part of the verdict could not be given. It leads.
		return fmt.Sprintf("⚠️ inconclusive: %d %s not given (the trials measured this machine, not the server); ", inconclusive, pluralWord(inconclusive, "verdict")) +
			strings.Join(parts, ", ")
	}
	return icon + " " + strings.Join(parts, ", ")
}

// pluralWord is word, with an s unless n is 1.
func pluralWord(n int, word string) string {
	if n == 1 {
		return word
	}
	return word + "s"
}

// Inconclusive is what the report tells a reader to do about verdicts
// that could not be given.
const Inconclusive = "Part of this run measured the machine it ran on rather than the server " +
	"(a stalled process, a client behind its schedule, stolen CPU), and was measured again up to --reruns times without a valid trial, " +
	"or a latency moved by no more than the server's extra wait for a CPU beside the runner's other work. " +
	"Those figures judge nothing: no regression, no pass. Rerun the job; if it stays inconclusive, " +
	"give the runner fewer neighbours (a dedicated or larger runner) or raise --reruns."

// which names the suites among several reports, " (a, b, +2 more)"; ""
// for a single report, whose suite the report names anyway.
func which(reports []*compare.Report, suites []string) string {
	if len(reports) < 2 || len(suites) == 0 {
		return ""
	}
	const show = 3
	if len(suites) > show {
		return fmt.Sprintf(" (%s, +%d more)", strings.Join(suites[:show], ", "), len(suites)-show)
	}
	return " (" + strings.Join(suites, ", ") + ")"
}

// Markdown writes the PR comment / job summary for reports. It stays under
// GitHub's comment limit: when the full version is too long it drops the
// folded details, then the per-figure table rows, saying so.
func Markdown(w io.Writer, marker string, reports []*compare.Report) error {
	for _, detail := range []int{2, 1, 0} {
		var b strings.Builder
		markdown(&b, marker, reports, detail)
		if b.Len() <= MaxComment || detail == 0 {
			s := b.String()
			if len(s) > MaxComment {
				cut := MaxComment - 200
				for cut > 0 && !isRuneStart(s[cut]) {
					cut--
				}
				s = s[:cut] + "\n\n…truncated to fit GitHub's comment limit; the full report is in the job summary and artifacts.\n"
			}
			_, err := io.WriteString(w, s)
			return err
		}
	}
	return nil
}

func isRuneStart(b byte) bool { return b&0xC0 != 0x80 }

// markdown renders at a detail level: 2 everything, 1 without folded
// details, 0 headline, SLOs and changed figures only.
func markdown(b *strings.Builder, marker string, reports []*compare.Report, detail int) {
	if marker != "" {
		b.WriteString(marker + "\n")
	}
	fmt.Fprintf(b, "## benchci: %s\n\n", headline(reports, Escape))
	// A run that ended early (its launched server died) is the news: it
	// leads, before any advice about a busy machine.
	for _, r := range reports {
		if !r.Candidate.Complete && r.Candidate.Error != "" {
			fmt.Fprintf(b, "> ❌ **`%s` did not finish:** %s\n\n", Escape(r.Suite), Escape(OneLine(r.Candidate.Error)))
		}
	}
	if inconclusive(reports) {
		fmt.Fprintf(b, "> ⚠️ **Inconclusive.** %s\n\n", Inconclusive)
	}
	for _, r := range reports {
		fmt.Fprintf(b, "### Suite `%s`\n\n", Escape(r.Suite))
		if r.NoBaseline {
			if r.Candidate.Virtual {
				fmt.Fprintf(b, "No baseline (candidate: %s, a virtual-time run, which is not made a baseline).\n\n", Escape(r.Candidate.Target))
			} else {
				fmt.Fprintf(b, "No baseline yet (candidate: %s). To start gating, commit one: `benchci baseline update results/%s.json`\n\n", Escape(r.Candidate.Target), Escape(r.Suite))
			}
		} else if r.Gone != "" {
			fmt.Fprintf(b, "Baseline: %s (%s) · candidate: not run\n\n", Escape(r.Baseline.Target), r.Baseline.Started.Format("2006-01-02"))
		} else if r.Baseline.Target != "" {
			fmt.Fprintf(b, "Baseline: %s (%s) · candidate: %s (%s)\n\n",
				Escape(r.Baseline.Target), r.Baseline.Started.Format("2006-01-02"), Escape(r.Candidate.Target), r.Candidate.Started.Format("2006-01-02"))
		}
		if n := VirtualNote(r); n != "" {
			fmt.Fprintf(b, "> ℹ️ **%s**\n\n", Escape(n))
		}
		if r.Gone != "" {
			fmt.Fprintf(b, "> ⛔ **%s**\n\n", Escape(r.Gone))
		}
		if !r.Candidate.Complete {
			b.WriteString("> ⚠️ The candidate run is incomplete.\n\n")
		}
		if r.RequestsDiffer != "" {
			fmt.Fprintf(b, "> ⚠️ %s\n\n", Escape(r.RequestsDiffer))
		}
		if n := NotGatedNote(r); n != "" {
			fmt.Fprintf(b, "> ℹ️ %s\n\n", Escape(n))
		}
		if r.DefinitionsDiffer != "" && r.Comparable {
			fmt.Fprintf(b, "> ⚠️ %s\n\n", Escape(r.DefinitionsDiffer))
		}
		if !r.Comparable && !r.NoBaseline {
			fmt.Fprintf(b, "> ❌ **Not compared:** %s\n\n", Escape(r.Refusal))
		}
		if r.NoBaseline {
			slos := r.SLOs
			if !r.Candidate.Complete {
				slos = slices.DeleteFunc(slices.Clone(slos), func(x result.SLO) bool { return x.Pass })
			}
			sloTable(b, "SLOs", slos, result.SeveralTrials(r.SLOs))
			candidateTable(b, r)
			if detail > 0 {
				mermaidChart(b, r, metric.TTFT+".p99")
			}
			continue
		}
		// What fails the gate leads, worst first, each with the test that
		// decided it; then failed SLOs, then what improved. Passes and
		// noise are folded: they are the bulk and rarely the news.
		ranked := r.Ranked()
		changeTable(b, "**Regressed**, worst first", ranked)
		var failedSLOs, passedSLOs, unjudgedSLOs []result.SLO
		for _, x := range r.SLOs {
			switch {
			case x.Pass:
				passedSLOs = append(passedSLOs, x)
			case x.Inconclusive:
				unjudgedSLOs = append(unjudgedSLOs, x)
			default:
				failedSLOs = append(failedSLOs, x)
			}
		}
		sloTable(b, "**SLOs failed**", failedSLOs, result.SeveralTrials(r.SLOs))
		if rows := filter(r.Rows, func(row compare.Row) bool { return row.Verdict == compare.Inconclusive }); len(rows) > 0 {
			b.WriteString("**Inconclusive** (what was measured was the machine's doing, not the server's):\n\n| point | figure | evidence |\n|---|---|---|\n")
			for _, row := range rows {
				figure := row.Metric
				if figure == "*" {
					figure = "all"
				}
				fmt.Fprintf(b, "| %s | %s | %s |\n", Escape(row.Point), Escape(figure), Escape(row.Test))
			}
			b.WriteString("\n")
		}
		sloTable(b, "**SLOs not judged** (their trial did not measure the server)", unjudgedSLOs, result.SeveralTrials(r.SLOs))
		changeTable(b, "**Improved**", filter(r.Rows, func(row compare.Row) bool { return row.Verdict == compare.Improvement }))
		if len(ranked) == 0 && r.Comparable {
			b.WriteString("No figure regressed.\n\n")
		}
		if detail == 0 || !r.Comparable || !r.Candidate.Complete {
			// A run that failed, or was not compared, passed nothing: what
			// it measured is in its results, not shown here as passing.
			continue
		}
		chartMetric := metric.TTFT + ".p99"
		for _, row := range ranked {
			if row.Metric != "*" {
				chartMetric = row.Metric // the worst figure that can be drawn
				break
			}
		}
		mermaidChart(b, r, chartMetric)
		if detail < 2 {
			continue
		}
		noise, pass := r.Count(compare.Noise), r.Count(compare.Pass)
		fmt.Fprintf(b, "<details><summary>Passing: %s, %d within noise, %d inside their bands (all %d figures)</summary>\n\n",
			Plural(len(passedSLOs), "SLO"), noise, pass, len(r.Rows))
		sloTable(b, "SLOs passed", passedSLOs, result.SeveralTrials(r.SLOs))
		b.WriteString("| metric @ point | baseline | candidate | Δ | band | verdict | test |\n|---|---:|---:|---:|---|---|---|\n")
		for _, row := range r.Rows {
			rowMarkdown(b, row, true)
		}
		b.WriteString("\n</details>\n\n")
		fmt.Fprintf(b, "<details><summary>Method</summary>\n\n%s\n\n</details>\n\n", Escape(r.Method))
	}
}

// changeTable writes the regressed or improved rows under title, with the
// test that decided each; nothing when there are none.
func changeTable(b *strings.Builder, title string, rows []compare.Row) {
	if len(rows) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n| metric @ point | baseline → candidate | Δ | band | decided by |\n|---|---:|---:|---|---|\n", title)
	for _, row := range rows {
		if row.Metric == "*" {
			fmt.Fprintf(b, "| all @ %s | missing from the candidate | | | the point was not measured |\n", Escape(row.Point))
			continue
		}
		delta := "—"
		if row.Delta != nil {
			delta = Pct(*row.Delta)
		}
		test := row.Test
		if test == "" {
			test = "band"
		}
		fmt.Fprintf(b, "| %s @ %s | %s → %s %s | %s | %s | %s |\n", Escape(row.Metric), Escape(row.Point),
			Num(row.Base), Num(row.Cand), row.Unit, delta, Escape(row.Band), Escape(test))
	}
	b.WriteString("\n")
}

// candidateTable shows a run without a baseline: its gated figures, one
// row per point, so the first report already says what was measured.
func candidateTable(b *strings.Builder, r *compare.Report) {
	if len(r.Rows) == 0 {
		return
	}
	var points, cols, unjudged []string
	val := map[[2]string]compare.Row{}
	for _, row := range r.Rows {
		if row.Verdict == compare.Inconclusive {
			// A marker of a point with no figure ("*"), not a figure: its
			// reason is said below the table, never a column of zeros.
			unjudged = append(unjudged, fmt.Sprintf("- `%s`: no figures, %s\n", Escape(row.Point), Escape(row.Test)))
			continue
		}
		if !slices.Contains(points, row.Point) {
			points = append(points, row.Point)
		}
		if !slices.Contains(cols, row.Metric) {
			cols = append(cols, row.Metric)
		}
		val[[2]string{row.Point, row.Metric}] = row
	}
	defer func() {
		if len(unjudged) > 0 {
			b.WriteString("Not measured:\n\n" + strings.Join(unjudged, "") + "\n")
		}
	}()
	if len(points) == 0 {
		return
	}
	b.WriteString("Measured (the candidate's gated figures):\n\n| point |")
	for _, c := range cols {
		fmt.Fprintf(b, " %s |", Escape(c))
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(cols)) + "\n")
	for _, p := range points {
		fmt.Fprintf(b, "| %s |", Escape(p))
		for _, c := range cols {
			if row, ok := val[[2]string{p, c}]; ok {
				fmt.Fprintf(b, " %s %s |", Num(row.Cand), row.Unit)
			} else {
				b.WriteString(" |")
			}
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

// sloTable lists SLO verdicts; trials names each one's trial (the run had
// several, each judged on its own).
func sloTable(b *strings.Builder, title string, slos []result.SLO, trials bool) {
	if len(slos) == 0 {
		return
	}
	fmt.Fprintf(b, "%s:\n\n| SLO | point | measured | verdict |\n|---|---|---:|---|\n", title)
	for _, s := range slos {
		v := "✅ pass"
		switch {
		case s.Inconclusive:
			v = "⚠️ inconclusive"
		case !s.Pass:
			v = "❌ fail"
		}
		measured := fmt.Sprintf("%s %s", Num(s.Measured), s.Unit)
		if s.Note != "" {
			measured = Escape(s.Note)
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", Escape(s.Name), Escape(s.Where(trials)), measured, v)
	}
	b.WriteString("\n")
}

var verdictIcon = map[compare.Verdict]string{
	compare.Pass: "✅ pass", compare.Regression: "❌ regression", compare.Improvement: "🚀 improvement",
	compare.Noise: "〰️ noise", compare.Missing: "❌ missing", compare.New: "🆕 new",
	compare.Inconclusive: "⚠️ inconclusive",
}

// inconclusive reports whether any report has a verdict it could not give.
func inconclusive(reports []*compare.Report) bool {
	for _, r := range reports {
		if r.Inconclusive() {
			return true
		}
	}
	return false
}

func rowMarkdown(b *strings.Builder, row compare.Row, withTest bool) {
	if row.Metric == "*" {
		fmt.Fprintf(b, "| all @ %s | | | | | %s |", Escape(row.Point), verdictIcon[row.Verdict])
	} else {
		delta := "—"
		if row.Delta != nil {
			delta = Pct(*row.Delta)
		}
		fmt.Fprintf(b, "| %s @ %s | %s | %s | %s | %s | %s |", Escape(row.Metric), Escape(row.Point),
			Num(row.Base)+" "+row.Unit, Num(row.Cand)+" "+row.Unit, delta, Escape(row.Band), verdictIcon[row.Verdict])
	}
	if withTest {
		fmt.Fprintf(b, " %s |", Escape(row.Test))
	}
	b.WriteString("\n")
}

// mermaidChart draws one figure against load, baseline and candidate, as a
// Mermaid xychart (rendered by GitHub): the figure that regressed worst,
// else TTFT P99. xychart has no legend, so the two series differ in kind,
// baseline as bars and candidate as a line, which the title says; both
// stay visible where they are equal. A run without a baseline draws the
// candidate alone.
func mermaidChart(b *strings.Builder, r *compare.Report, key string) {
	type pt struct {
		x          float64
		label      string
		base, cand float64
	}
	var pts []pt
	for _, row := range r.Rows {
		if row.Metric != key || strings.Contains(row.Point, " [") {
			continue // one curve: the point's own figures, not each model's
		}
		// Only what the chart's syntax can hold goes into it: the label is
		// rewritten from the parsed number, never copied from the file.
		_, v, _ := strings.Cut(row.Point, "=")
		x, err := strconv.ParseFloat(v, 64)
		if err != nil || math.IsNaN(x) || math.IsInf(x, 0) {
			return
		}
		pts = append(pts, pt{x, strconv.FormatFloat(x, 'g', -1, 64), row.Base, row.Cand})
	}
	k, err := metric.ParseKey(key)
	if len(pts) < 2 || err != nil {
		return
	}
	sort.Slice(pts, func(i, j int) bool { return pts[i].x < pts[j].x })
	var xs, bs, cs []string
	top := 0.0
	for _, p := range pts {
		xs = append(xs, strconv.Quote(p.label))
		bs = append(bs, Num(p.base))
		cs = append(cs, Num(p.cand))
		top = math.Max(top, math.Max(p.base, p.cand))
	}
	axis := ""
	for _, row := range r.Rows {
		if a, _, ok := strings.Cut(row.Point, "="); ok {
			axis = a
			break
		}
	}
	if axis != result.ModeRate && axis != result.ModeConcurrency {
		return
	}
	// The title and unit come from the catalogue, not from the file.
	name, unit := k.String(), k.Def().Unit
	if r.NoBaseline {
		fmt.Fprintf(b, "```mermaid\nxychart-beta\n    title \"%s (%s) vs %s\"\n    x-axis \"%s\" [%s]\n    y-axis \"%s\" 0 --> %s\n    line [%s]\n```\n\n",
			name, unit, axis, axis, strings.Join(xs, ", "), unit, Num(top*1.1), strings.Join(cs, ", "))
		return
	}
	fmt.Fprintf(b, "```mermaid\nxychart-beta\n    title \"%s (%s) vs %s: bars baseline, line candidate\"\n    x-axis \"%s\" [%s]\n    y-axis \"%s\" 0 --> %s\n    bar [%s]\n    line [%s]\n```\n\n",
		name, unit, axis, axis, strings.Join(xs, ", "), unit, Num(top*1.1), strings.Join(bs, ", "), strings.Join(cs, ", "))
}

// Diff writes the comparison as a terminal table: its text tables
// (diffText) through the text format.
func Diff(w io.Writer, r *compare.Report) error {
	return formats["text"].Render(w, diffText(r))
}

func filter(rows []compare.Row, keep func(compare.Row) bool) []compare.Row {
	var out []compare.Row
	for _, r := range rows {
		if keep(r) {
			out = append(out, r)
		}
	}
	return out
}

// Escape makes untrusted text (model names, URLs, error bodies) inert in
// markdown: no tables broken by "|", no HTML, no mentions or links.
func Escape(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch r {
		case '\\', '`', '*', '_', '[', ']', '|', '#', '!', '~':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '&':
			b.WriteString("&amp;")
		case '@':
			b.WriteString("@\u200b") // no @mentions
		case '\n', '\r':
			b.WriteByte(' ')
		case ':':
			// "https://" and "www." would become links: break the scheme.
			b.WriteString(":\u200b")
		default:
			b.WriteRune(r)
		}
	}
	return strings.ReplaceAll(b.String(), "www.", "www\u200b.")
}

func Num(v float64) string {
	switch a := math.Abs(v); {
	case a == 0:
		return "0"
	case a >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	case a >= 1:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	return Plain(v, 3) // 0.00005, not 5e-05
}

func Pct(d float64) string { return fmt.Sprintf("%+.1f%%", d*100) }

func Plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}
