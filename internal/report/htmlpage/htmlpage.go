// Package htmlpage writes the self-contained HTML report. It is apart from
// report so that report does not link gonum/plot (its charts).
package htmlpage

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"io"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/chart"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/variants"
)

// Run is one run for the HTML report, with the gate's judgement of
// it (compare.WithoutBaseline when there is no baseline: its SLOs).
type Run struct {
	File *result.File
	Gate *compare.Report
}

// Input is what one HTML report shows.
type Input struct {
	Runs     []Run
	Variants []*variants.Report
	// Tool is the benchci version writing it; Generated when.
	Tool      string
	Generated time.Time
}

//go:embed htmlpage.tmpl
var htmlTemplate string

var htmlTmpl = template.Must(template.New("report").Parse(htmlTemplate))

// Write writes one self-contained page: the verdict first, then the
// comparisons of variants (when runs are variants, which one to pick is
// the page's question), then per run its SLOs, the gate's changes,
// throughput-latency curves, TTFT and ITL distributions, the points,
// their time slices and the provenance. Charts are inline SVG and styles inline
// CSS; there is no script, and the page's content security policy lets
// it load nothing, so it opens the same offline, from an artifact or an
// e-mail.
func Write(w io.Writer, in Input) error {
	v := htmlView{Tool: in.Tool, Generated: in.Generated.UTC().Format(time.RFC3339), PointColumns: pointColumns}
	var gates []*compare.Report
	for _, r := range in.Runs {
		gates = append(gates, r.Gate)
	}
	v.Headline = report.Headline(gates)
	v.Failed = strings.HasPrefix(v.Headline, "❌")
	v.Class = "pass"
	switch {
	case v.Failed:
		v.Class = "fail"
	case !strings.HasPrefix(v.Headline, "✅"):
		v.Class = "warn"
	}
	for i, r := range in.Runs {
		rv, err := runView(i, r)
		if err != nil {
			return err
		}
		v.Runs = append(v.Runs, rv)
	}
	for _, r := range in.Variants {
		vv, err := variantsView(r)
		if err != nil {
			return err
		}
		v.Variants = append(v.Variants, vv)
	}
	var buf bytes.Buffer
	if err := htmlTmpl.Execute(&buf, v); err != nil {
		return fmt.Errorf("html report: %w", err)
	}
	_, err := w.Write(buf.Bytes())
	return err
}

type htmlView struct {
	Tool, Generated, Headline string
	PointColumns              []string
	Failed                    bool
	// Class colours the headline: pass, fail, or warn (inconclusive,
	// incomplete, not compared: never green).
	Class    string
	Runs     []runHTML
	Variants []variantsHTML
}

type runHTML struct {
	ID, Name, Verdict string
	Failed            bool
	// Mark heads the run: ❌ failed, ⚠️ not a pass (inconclusive,
	// incomplete), ✅ passed.
	Mark       string
	Facts      []string // one-line facts under the verdict
	SLOs       []sloHTML
	Changes    []rowHTML
	Method     string
	Curves     []figureHTML
	CDFs       []figureHTML
	Points     []pointHTML
	Notes      []string
	Slices     []figureHTML
	Provenance [][2]string
}

type sloHTML struct {
	Pass                  bool
	Inconclusive          bool
	Name, Point, Measured string
	Note                  string
}

type rowHTML struct {
	Point, Metric, Base, Cand, Delta, Band, Verdict, Test string
	Bad, Good                                             bool
}

type figureHTML struct {
	Title string
	SVG   template.HTML
}

type pointHTML struct {
	Cells []string
	Flags string
}

// pointColumns head the points table.
var pointColumns = []string{"point", "trial", "reqs", "err%", "req/s", "out tok/s", "TTFT p50", "TTFT p99", "TPOT p50", "TPOT p99", "ITL p50", "ITL p99", "E2E p99", "$/1M out"}

func runView(i int, r Run) (runHTML, error) {
	f, g := r.File, r.Gate
	v := runHTML{ID: fmt.Sprintf("run-%d", i), Name: f.Suite.Name, Failed: g.Failed(), Mark: mark(g)}
	v.Verdict = report.Headline([]*compare.Report{g})
	if n := report.VirtualNote(g); n != "" {
		v.Facts = append(v.Facts, n)
	}
	switch {
	case g.NoBaseline:
		v.Facts = append(v.Facts, "no baseline: only the SLOs gate")
	case !g.Comparable:
		v.Facts = append(v.Facts, "not comparable with the baseline: "+g.Refusal)
	default:
		v.Facts = append(v.Facts, fmt.Sprintf("baseline: %s, %s; candidate: %s, %s", g.Baseline.Target, g.Baseline.Started.UTC().Format("2006-01-02 15:04"), g.Candidate.Target, g.Candidate.Started.UTC().Format("2006-01-02 15:04")))
	}
	if c := f.Capacity; c != nil {
		v.Facts = append(v.Facts, "capacity: "+report.CapacityString(c))
	}
	if n := report.SimulatedNote(f); n != "" {
		v.Facts = append(v.Facts, n)
	}
	if k := f.Knee; k != nil {
		v.Facts = append(v.Facts, "knee: "+k.Point)
	}
	if f.Incomplete {
		v.Facts = append(v.Facts, "INCOMPLETE: "+f.Error)
	}
	for _, s := range g.SLOs {
		sv := sloHTML{Pass: s.Pass, Inconclusive: s.Inconclusive, Name: s.Name, Point: s.Point, Note: s.Note}
		if s.Point != "" {
			sv.Measured = fmt.Sprintf("%.4g %s", s.Measured, s.Unit)
		}
		v.SLOs = append(v.SLOs, sv)
	}
	if !g.NoBaseline {
		for _, row := range g.Ranked() {
			if row.Verdict == compare.Pass {
				continue
			}
			rv := rowHTML{Point: row.Point, Metric: row.Metric, Base: report.Figure(row.Base, row.Unit), Cand: report.Figure(row.Cand, row.Unit),
				Band: row.Band, Verdict: string(row.Verdict), Test: row.Test,
				Bad: row.Verdict == compare.Regression || row.Verdict == compare.Missing, Good: row.Verdict == compare.Improvement}
			if row.Delta != nil {
				rv.Delta = report.Pct(*row.Delta)
			}
			v.Changes = append(v.Changes, rv)
		}
		v.Method = g.Method
	}
	curves, err := chart.Curves(f)
	if err != nil {
		return v, err
	}
	for _, c := range curves {
		v.Curves = append(v.Curves, figureHTML{c.Title, inlineSVG(c.Data)})
	}
	trials := false
	for _, p := range f.Points {
		trials = trials || p.Trial > 1
	}
	for _, d := range []struct{ hist, title string }{{metric.TTFT, "TTFT"}, {metric.ITL, "ITL (gaps between chunks)"}} {
		var lines []chart.CDFLine
		for _, p := range f.Points {
			h, err := result.DecodeHistogram(p.Histograms[d.hist])
			if err != nil || h.TotalCount() == 0 {
				continue
			}
			name := p.Label
			if trials {
				name += fmt.Sprintf(" #%d", p.Trial)
			}
			lines = append(lines, chart.CDFLine{Name: name, Hist: h, Scale: 1000})
		}
		if len(lines) == 0 {
			continue
		}
		svg, err := chart.CDF(d.title+" distribution per point — "+f.Suite.Name, d.title+" (ms, log scale)", lines)
		if err != nil {
			return v, err
		}
		v.CDFs = append(v.CDFs, figureHTML{d.title, inlineSVG(svg)})
	}
	for _, p := range f.Points {
		l := p.Latency
		v.Points = append(v.Points, pointHTML{Cells: []string{
			p.Label, fmt.Sprint(p.Trial), fmt.Sprint(p.Requests.Sent), fmt.Sprintf("%.1f", 100*p.Requests.ErrorRate),
			fmt.Sprintf("%.2f", p.Throughput.Requests), fmt.Sprintf("%.0f", p.Throughput.OutputTokens),
			report.Ms(l[metric.TTFT].P50), report.Ms(l[metric.TTFT].P99), report.Ms(l[metric.TPOT].P50), report.Ms(l[metric.TPOT].P99),
			report.Ms(l[metric.ITL].P50), report.Ms(l[metric.ITL].P99), report.Ms(l[metric.E2E].P99), report.USD(p.Cost),
		}, Flags: strings.TrimSpace(report.Flags(p))})
		for _, n := range report.NotesSent(p, f.Sent) {
			v.Notes = append(v.Notes, p.Label+": "+n)
		}
		if p.Slices != nil && len(p.Slices.Slices) > 0 {
			svg, err := chart.SlicesSVG(p.Label+" over time — "+f.Suite.Name, p.Slices)
			if err == nil {
				v.Slices = append(v.Slices, figureHTML{p.Label, inlineSVG(svg)})
			}
		}
	}
	v.Notes = append(v.Notes, f.Notes...)
	v.Provenance = provenance(f)
	return v, nil
}

func provenance(f *result.File) [][2]string {
	out := [][2]string{
		{"tool", strings.TrimSpace(f.Tool.Name + " " + f.Tool.Version)},
		{"chunk timing", f.Tool.Timing},
		{"suite", f.Suite.Path},
		{"suite hash", f.Suite.Hash},
		{"workload hash", f.Suite.WorkloadHash},
		{"target", f.Target.Kind + " " + f.Target.URL},
		{"model", f.Target.Model},
		{"upstream", f.Target.Upstream},
		{"started", f.Started.UTC().Format(time.RFC3339)},
		{"finished", f.Finished.UTC().Format(time.RFC3339)},
		{"counting", f.Counting},
	}
	if f.Virtual {
		out = append(out, [2]string{"clock", "virtual time (simulated clock): replayed on the embedded simulator (run --virtual), not measured"})
	}
	if f.Suite.Variant != "" {
		out = append(out, [2]string{"variant", f.Suite.Variant + " (" + f.Suite.Order + ")"})
	}
	if e := f.Engine; e != nil {
		out = append(out, [2]string{"engine", strings.TrimSpace(e.Name + " " + e.Version + " " + strings.Join(e.Quirks, "; "))})
	}
	if s := f.Target.Sim; s != nil {
		out = append(out, [2]string{"simulator", fmt.Sprintf("%s (%s): max_num_seqs %d, step %.2f ms + %.3f ms per sequence, prefill %.4f ms per token; %s",
			s.Name, s.Model, s.MaxNumSeqs, s.StepBaseMs, s.DecodePerSeqMs, s.PrefillPerTokenMs, s.Source)})
	}
	if c := f.Calibration; c != nil {
		out = append(out, [2]string{"token calibration", fmt.Sprintf("%.2f + %.3f tokens per word %s", c.Overhead, c.TokensPerWord, c.Note)})
	}
	kept := out[:0]
	for _, kv := range out {
		if strings.TrimSpace(kv[1]) != "" {
			kept = append(kept, kv)
		}
	}
	return kept
}

type variantsHTML struct {
	Suite, Workload, Order string
	Verdicts               []string
	Header                 []string
	Rows                   [][]string
	Frontiers              []string
	Charts                 []figureHTML
}

func variantsView(r *variants.Report) (variantsHTML, error) {
	v := variantsHTML{Suite: r.Suite, Workload: r.WorkloadHash, Order: r.Order,
		Header: []string{"variant", "target", "capacity", "at", "out tok/s", "TTFT p99", "TPOT p99", "$/1M out", "SLOs", "standing"}}
	for _, vd := range r.Verdicts {
		v.Verdicts = append(v.Verdicts, vd.Question+": "+vd.Answer)
	}
	for _, x := range r.Variants {
		c := report.CapacityCells(x)
		v.Rows = append(v.Rows, []string{x.Name, x.Target, c[0], c[1], c[2], c[3], c[4], c[5], report.SLOCell(x), report.Standing(r, x)})
	}
	for _, f := range r.Frontiers {
		var ps []string
		for _, p := range f.Points {
			ps = append(ps, fmt.Sprintf("%s %s (%.0f tok/s, %s)", p.Variant, p.Point, p.OutputTokPS, report.Ms(p.LatencyMs)))
		}
		if len(ps) > 0 {
			v.Frontiers = append(v.Frontiers, "output tok/s vs "+f.Latency+": "+strings.Join(ps, " → "))
		}
	}
	svgs, err := chart.VariantsSVG(r)
	if err != nil {
		return v, err
	}
	for _, s := range svgs {
		v.Charts = append(v.Charts, figureHTML{s.Title, inlineSVG(s.Data)})
	}
	return v, nil
}

// inlineSVG drops the XML prolog and comments before the <svg> element, so
// the drawing can sit inside HTML. The SVG is gonum/plot's own output,
// whose text it escapes; it carries no script, link or identifier.
func inlineSVG(data []byte) template.HTML {
	if i := bytes.Index(data, []byte("<svg")); i >= 0 {
		data = data[i:]
	}
	return template.HTML(data) //nolint:gosec // drawn by gonum/plot here, not read from input
}

// mark is a run's sign: a suite that judged nothing, or only part, is
// never marked as passed.
func mark(g *compare.Report) string {
	switch {
	case g.Failed() || g.Policy.Blocks():
		return "❌"
	case g.Inconclusive() || !g.Candidate.Complete || (!g.Comparable && !g.NoBaseline):
		return "⚠️"
	}
	return "✅"
}
