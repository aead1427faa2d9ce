package site

import (
	"bytes"
	_ "embed"
	"fmt"
	"html/template"
	"maps"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/internal/chart"
	"github.com/benchci/benchci/internal/history"
	"github.com/benchci/benchci/internal/report"
	"github.com/benchci/benchci/internal/report/historyview"
)

//go:embed site.tmpl
var siteTemplate string

var tmpl = template.Must(template.New("site").Parse(siteTemplate))

// Render makes the site's files: index.html, a page per suite under
// suites/, and the proofs under proofs/.
func (s *Site) Render() (Files, error) {
	files := Files{}
	common := pageView{Tool: s.in.Tool, Generated: s.in.Generated.UTC().Format(time.RFC3339), Notes: s.Notes}
	idx := indexView{pageView: common}
	idx.Title = "benchci results"
	for _, p := range s.Proofs {
		idx.Proofs = append(idx.Proofs, s.proofView(p, ""))
		files["proofs/"+p.Name] = p.Data
	}
	for _, su := range s.Suites {
		idx.Suites = append(idx.Suites, s.card(su))
		sv, err := s.suiteView(su)
		if err != nil {
			return nil, fmt.Errorf("site: %s: %w", su.Name, err)
		}
		sv.pageView = common
		sv.Title, sv.Root = "benchci results: "+su.Name, "../"
		data, err := execute("suite", sv)
		if err != nil {
			return nil, err
		}
		files[su.page] = data
	}
	data, err := execute("index", idx)
	if err != nil {
		return nil, err
	}
	files["index.html"] = data
	return files, nil
}

func execute(name string, v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := tmpl.ExecuteTemplate(&buf, name, v); err != nil {
		return nil, fmt.Errorf("site: %w", err)
	}
	return buf.Bytes(), nil
}

type pageView struct {
	Title, Tool, Generated string
	// Root leads from the page to the site's root: "" or "../".
	Root  string
	Notes []string
}

type indexView struct {
	pageView
	Suites []cardView
	Proofs []proofView
}

// cardView is a suite on the landing page.
type cardView struct {
	Name, Href string
	verdictView
	Versions int
	Point    string
	Trends   []trendView
	Last     *changeView
	Note     string
}

type verdictView struct {
	Mark, Class, Verdict string
}

type trendView struct {
	Figure, Arrow, Class, Title string
}

// changeView is one commit where figures moved.
type changeView struct {
	ID, Commit, CommitURL, Date, Subject, PR, PRURL string
	Moves                                           []string
	Worse                                           int
}

type proofView struct {
	Name, Href, Commit, CommitURL, Made, Benchci, SLOs, Suites string
	Pass                                                       bool
}

type suiteView struct {
	pageView
	Name, Path string
	verdictView
	Facts    []string
	Rows     []rowView
	Proofs   []proofView
	Changes  []changeView
	Groups   []groupView
	Versions []changeView
	Skipped  []string
	Note     string
}

type rowView struct {
	Point, Metric, Base, Cand, Delta, Band, Verdict, Test string
	Bad, Good                                             bool
}

type groupView struct {
	Workload string
	Newest   bool
	Summary  string
	Points   []pointView
}

type pointView struct {
	Point string
	Open  bool
	// Charts are the figures that were ever above zero; Flat lists the
	// others.
	Charts []chartView
	Flat   []string
}

type chartView struct {
	ID, Title string
	SVG       template.HTML
	// Points is how many versions the line joins.
	Points  int
	Changes []changeRef
}

type changeRef struct {
	Href, Commit, Move string
	Worse              bool
}

func (s *Site) commitURL(hash string) string {
	if s.in.RepoURL == "" {
		return ""
	}
	return s.in.RepoURL + "/commit/" + hash
}

func (s *Site) prURL(n string) string {
	if s.in.RepoURL == "" || n == "" {
		return ""
	}
	return s.in.RepoURL + "/pull/" + n
}

func verdict(su *Suite) verdictView {
	g := su.Gate
	if g == nil {
		return verdictView{Mark: "·", Class: "none", Verdict: "no verdict: no run given, and the baseline could not be read"}
	}
	v := verdictView{Verdict: report.Headline([]*compare.Report{g})}
	switch {
	case g.Failed() || g.Policy.Blocks():
		v.Mark, v.Class = "❌", "fail"
	case g.Inconclusive() || !g.Candidate.Complete || (!g.Comparable && !g.NoBaseline):
		v.Mark, v.Class = "⚠️", "warn"
	default:
		v.Mark, v.Class = "✅", "pass"
	}
	if su.Own {
		v.Verdict = "the committed baseline's own SLOs (no newer run given): " + v.Verdict
	}
	return v
}

// newest is the suite's current workload: older ones do not compare.
func newest(su *Suite) *history.Group {
	if len(su.Groups) == 0 {
		return nil
	}
	return &su.Groups[len(su.Groups)-1]
}

func (s *Site) card(su *Suite) cardView {
	c := cardView{Name: su.Name, Href: su.page, verdictView: verdict(su), Note: su.Note}
	g := newest(su)
	if g == nil {
		return c
	}
	for _, gr := range su.Groups {
		c.Versions += len(gr.Versions)
	}
	c.Point = g.DefaultPoint()
	for _, sr := range historyview.Shown(g, c.Point) {
		c.Trends = append(c.Trends, s.trend(g, sr))
	}
	if cs := s.changes(su, g); len(cs) > 0 {
		last := cs[len(cs)-1]
		c.Last = &last
	}
	return c
}

// trend is the newest version's move from the one before it: ▲ or ▼ when
// it moved at least the change-point threshold, → when it held.
func (s *Site) trend(g *history.Group, sr *history.Series) trendView {
	name := sr.Figure
	if sr.Point == "search" {
		name = "capacity"
	}
	t := trendView{Figure: name, Arrow: "·", Class: "flat"}
	n := len(sr.Values)
	last := sr.Values[n-1]
	if math.IsNaN(last) {
		t.Title = name + ": not in the newest version"
		return t
	}
	prev, at := math.NaN(), -1
	for i := n - 2; i >= 0; i-- {
		if !math.IsNaN(sr.Values[i]) {
			prev, at = sr.Values[i], i
			break
		}
	}
	if at < 0 {
		t.Arrow, t.Title = "→", fmt.Sprintf("%s: %s (one version)", name, report.Figure(last, sr.Unit))
		return t
	}
	minShift := s.in.MinShift
	if minShift == 0 {
		minShift = history.DefaultMinShift
	}
	t.Title = fmt.Sprintf("%s: %s → %s since %s", name, report.Figure(prev, sr.Unit), report.Figure(last, sr.Unit), g.Versions[at].Short())
	d := last - prev
	rel := math.Inf(1)
	if prev != 0 {
		rel = d / math.Abs(prev)
		t.Title += " (" + report.Pct(rel) + ")"
	}
	switch {
	case d == 0 || math.Abs(rel) < minShift:
		t.Arrow = "→"
	case d > 0:
		t.Arrow = "▲"
	default:
		t.Arrow = "▼"
	}
	if t.Arrow != "→" {
		worse := (sr.Better == metric.Lower) == (d > 0)
		t.Class = "better"
		if worse {
			t.Class = "worse"
		}
	}
	return t
}

// changes lists a group's change points by commit, oldest first.
func (s *Site) changes(su *Suite, g *history.Group) []changeView {
	byVersion := map[int][]history.SeriesChange{}
	for _, c := range g.Changes() {
		byVersion[c.Version] = append(byVersion[c.Version], c)
	}
	var out []changeView
	for _, vi := range slices.Sorted(maps.Keys(byVersion)) {
		v := g.Versions[vi]
		cv := s.commitView(v)
		cv.ID = "change-" + v.Short()
		for _, c := range byVersion[vi] {
			if c.Worse {
				cv.Worse++
			}
			cv.Moves = append(cv.Moves, fmt.Sprintf("%s at %s: %s → %s (%s)", c.Figure, c.Point,
				report.Figure(c.Before, c.Unit), report.Figure(c.After, c.Unit), move(c.Change)))
		}
		out = append(out, cv)
	}
	return out
}

func (s *Site) commitView(v history.Version) changeView {
	pr := PR(v.Subject)
	return changeView{Commit: v.Short(), CommitURL: s.commitURL(v.Commit), Date: v.Time.UTC().Format("2006-01-02"),
		Subject: v.Subject, PR: pr, PRURL: s.prURL(pr)}
}

func move(c history.Change) string {
	r := c.Relative()
	if math.IsInf(r, 0) || math.IsNaN(r) {
		return "from zero"
	}
	return report.Pct(r)
}

func (s *Site) proofView(p *Proof, root string) proofView {
	v := proofView{Name: p.Name, Href: root + "proofs/" + p.Name, Benchci: p.Benchci,
		Suites: strings.Join(p.Suites, ", "), Pass: p.SLOs > 0 && p.Passed == p.SLOs,
		SLOs: fmt.Sprintf("%d of %d SLOs passed", p.Passed, p.SLOs)}
	if !p.MadeAt.IsZero() {
		v.Made = p.MadeAt.UTC().Format("2006-01-02")
	}
	if p.Commit != "" {
		v.Commit = p.Commit[:min(7, len(p.Commit))]
		v.CommitURL = s.commitURL(p.Commit)
	}
	return v
}

func (s *Site) suiteView(su *Suite) (suiteView, error) {
	v := suiteView{Name: su.Name, Path: su.Path, verdictView: verdict(su), Note: su.Note}
	for _, sk := range su.Skipped {
		v.Skipped = append(v.Skipped, fmt.Sprintf("%.7s: %s", sk.Commit, report.OneLine(sk.Reason)))
	}
	for _, p := range su.Proofs {
		v.Proofs = append(v.Proofs, s.proofView(p, "../"))
	}
	if g := su.Gate; g != nil && !su.Own && !g.NoBaseline {
		for _, row := range g.Rows {
			if row.Verdict == compare.Pass {
				continue
			}
			rv := rowView{Point: row.Point, Metric: row.Metric, Base: report.Figure(row.Base, row.Unit), Cand: report.Figure(row.Cand, row.Unit),
				Band: row.Band, Verdict: string(row.Verdict), Test: row.Test,
				Bad: row.Verdict == compare.Regression || row.Verdict == compare.Missing, Good: row.Verdict == compare.Improvement}
			if row.Delta != nil {
				rv.Delta = report.Pct(*row.Delta)
			}
			v.Rows = append(v.Rows, rv)
		}
	}
	total := 0
	for _, g := range su.Groups {
		total += len(g.Versions)
	}
	if total > 0 {
		v.Facts = append(v.Facts, fmt.Sprintf("%s of %s", report.Plural(total, "committed version"), su.Path))
	}
	if len(su.Groups) > 1 {
		v.Facts = append(v.Facts, fmt.Sprintf("%d workloads: figures compare only within one; the newest is first", len(su.Groups)))
	}
	for gi := len(su.Groups) - 1; gi >= 0; gi-- {
		g := &su.Groups[gi]
		gv, err := s.groupView(su, g, gi == len(su.Groups)-1)
		if err != nil {
			return v, err
		}
		v.Groups = append(v.Groups, gv)
		cs := s.changes(su, g)
		slices.Reverse(cs)
		v.Changes = append(v.Changes, cs...)
		for i := len(g.Versions) - 1; i >= 0; i-- {
			v.Versions = append(v.Versions, s.commitView(g.Versions[i]))
		}
	}
	return v, nil
}

func (s *Site) groupView(su *Suite, g *history.Group, isNewest bool) (groupView, error) {
	first, last := g.Versions[0], g.Versions[len(g.Versions)-1]
	gv := groupView{Workload: fmt.Sprintf("%.12s", g.WorkloadHash), Newest: isNewest,
		Summary: fmt.Sprintf("%s, %s %s to %s %s", report.Plural(len(g.Versions), "version"),
			first.Short(), first.Time.UTC().Format("2006-01-02"), last.Short(), last.Time.UTC().Format("2006-01-02"))}
	commits := make([]string, len(g.Versions))
	for i, ver := range g.Versions {
		commits[i] = ver.Short()
	}
	def := g.DefaultPoint()
	points := g.Points()
	// The capacity search first, then the default point, then the rest.
	slices.SortStableFunc(points, func(a, b string) int { return rank(a, def) - rank(b, def) })
	for _, p := range points {
		pv := pointView{Point: p, Open: isNewest && (p == def || p == "search")}
		for i := range g.Series {
			sr := &g.Series[i]
			if sr.Point != p {
				continue
			}
			cv, ok, err := s.chartView(su, g, sr, commits)
			if err != nil {
				return gv, err
			}
			if !ok {
				pv.Flat = append(pv.Flat, sr.Figure)
				continue
			}
			pv.Charts = append(pv.Charts, cv)
		}
		gv.Points = append(gv.Points, pv)
	}
	return gv, nil
}

func rank(p, def string) int {
	switch p {
	case "search":
		return 0
	case def:
		return 1
	}
	return 2
}

// chartView draws one figure at one point over the group's versions,
// change points dashed; ok is false for a figure never above zero.
func (s *Site) chartView(su *Suite, g *history.Group, sr *history.Series, commits []string) (chartView, bool, error) {
	n := 0
	above := false
	for _, x := range sr.Values {
		if !math.IsNaN(x) {
			n++
			above = above || x != 0
		}
	}
	if !above {
		return chartView{}, false, nil
	}
	title := fmt.Sprintf("%s at %s", sr.Figure, sr.Point)
	if sr.Point == "search" {
		title = "capacity (the search)"
	}
	pn := chart.HistoryPanel{Y: fmt.Sprintf("%s (%s)", sr.Figure, sr.Unit), Values: sr.Values}
	cv := chartView{ID: chartID(g, sr), Title: title, Points: n}
	for _, c := range sr.Changes {
		pn.Changes = append(pn.Changes, c.Version)
		ver := g.Versions[c.Version]
		cv.Changes = append(cv.Changes, changeRef{Href: "#change-" + ver.Short(), Commit: ver.Short(),
			Move: fmt.Sprintf("%s → %s (%s)", report.Figure(c.Before, sr.Unit), report.Figure(c.After, sr.Unit), move(c)), Worse: c.Worse})
	}
	svg, err := chart.History(su.Name+": "+title, commits, []chart.HistoryPanel{pn})
	if err != nil {
		return cv, false, err
	}
	cv.SVG = inlineSVG(svg)
	return cv, true, nil
}

func chartID(g *history.Group, sr *history.Series) string {
	var b strings.Builder
	fmt.Fprintf(&b, "chart-%.8s-", g.WorkloadHash)
	for _, r := range sr.Point + "-" + sr.Figure {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	return b.String()
}

// inlineSVG drops the XML prolog before the <svg> element, as the HTML
// report does. The SVG is gonum/plot's own output, whose text it
// escapes; it carries no script, link or identifier.
func inlineSVG(data []byte) template.HTML {
	if i := bytes.Index(data, []byte("<svg")); i >= 0 {
		data = data[i:]
	}
	return template.HTML(data) //nolint:gosec // drawn by gonum/plot here, not read from input
}
