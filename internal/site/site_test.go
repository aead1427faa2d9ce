package site

import (
	"context"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/gitfixture"
	"github.com/benchci/benchci/internal/history"
)

const quickstart = "../../framework/result/testdata/quickstart-v1.json"

// fixture is a repository with two suites' baselines: quickstart, eight
// versions whose TTFT rose 40% at the sixth (a squash merge naming PR
// #42), between unrelated commits; and a variant, shootout/fp8, three
// versions of another workload. One more baseline sits uncommitted.
type fixture struct {
	dir, jump string
}

func newFixture(t *testing.T) fixture {
	t.Helper()
	r := gitfixture.New(t)
	var f fixture
	for i := range 8 {
		ttft, msg := 1.0, fmt.Sprintf("baseline update %d (#%d)", i+1, 30+i)
		if i >= 5 {
			ttft = 1.4
		}
		if i == 5 {
			msg = "scheduler: admit by <prefill> budget (#42)"
		}
		h := r.Commit(msg, map[string][]byte{"baselines/quickstart.json": gitfixture.Baseline(t, quickstart, uint64(i), ttft, "")})
		if i == 5 {
			f.jump = h
		}
		r.Commit("docs", map[string][]byte{"README.md": []byte(strings.Repeat("x", i+1))})
		if i < 3 {
			r.Commit("shootout fp8 baseline", map[string][]byte{"baselines/shootout/fp8.json": gitfixture.Baseline(t, quickstart, uint64(100+i), 1, "fp8-workload")})
		}
	}
	if err := os.WriteFile(filepath.Join(r.Dir, "baselines", "draft.json"), gitfixture.Baseline(t, quickstart, 7, 1, ""), 0o644); err != nil {
		t.Fatal(err)
	}
	f.dir = r.Dir
	return f
}

// proof is a statement as benchci attest writes it, trimmed to what the
// site reads.
func proof(suite, commit string) []byte {
	return []byte(fmt.Sprintf(`{"_type":"https://in-toto.io/Statement/v1","subject":[],"predicateType":"https://benchci.dev/attestation/slo/v1",
"predicate":{"benchci":"v1.2.3","commit":%q,"madeAt":"2026-11-20T10:00:00Z","runs":[{"suite":{"name":%q},"slos":[{"pass":true},{"pass":true}]}]}}`, commit, suite))
}

// build makes the fixture's site, judging a run of quickstart (the
// baseline's own run) against it, and writes it to a directory.
func build(t *testing.T) (fixture, *Site, Files, string) {
	t.Helper()
	f := newFixture(t)
	run, err := baseline.Read(quickstart)
	if err != nil {
		t.Fatal(err)
	}
	p, err := ParseProof("v1.2.3/attestation.intoto.json", proof("quickstart", f.jump))
	if err != nil {
		t.Fatal(err)
	}
	s, err := Build(context.Background(), Input{
		Baselines: filepath.Join(f.dir, "baselines"), Results: []*result.File{run.Result}, Proofs: []Proof{p},
		RepoURL: "https://github.com/acme/serving/", Tool: "test", Generated: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC),
	})
	if err != nil {
		t.Fatal(err)
	}
	files, err := s.Render()
	if err != nil {
		t.Fatal(err)
	}
	out := t.TempDir()
	if err := files.Write(out); err != nil {
		t.Fatal(err)
	}
	return f, s, files, out
}

var (
	hrefs   = regexp.MustCompile(`href="([^"]*)"`)
	ids     = regexp.MustCompile(`id="([^"]*)"`)
	figures = regexp.MustCompile(`(?s)<figure id="([^"]*)" data-points="([0-9]+)">(.*?)</figure>`)
)

// Every suite renders, with a card on the landing page and a page of its
// own; every chart draws a line through its versions; the change point
// is the commit that moved TTFT, linked to it and to its pull request.
func TestSiteRendersEverySuite(t *testing.T) {
	t.Parallel()
	f, s, files, _ := build(t)
	index := string(files["index.html"])
	var names []string
	for _, su := range s.Suites {
		names = append(names, su.Name)
		page, ok := files[su.page]
		if !ok {
			t.Errorf("%s: no page %s", su.Name, su.page)
			continue
		}
		if !strings.Contains(index, `href="`+su.page+`"`) {
			t.Errorf("%s: the landing page does not link %s", su.Name, su.page)
		}
		if !strings.Contains(string(page), "<h1>") || !strings.Contains(string(page), su.Name) {
			t.Errorf("%s: page does not name it", su.Name)
		}
		charts := figures.FindAllStringSubmatch(string(page), -1)
		if len(su.Groups) > 0 && len(charts) == 0 {
			t.Errorf("%s: no charts", su.Name)
		}
		for _, c := range charts {
			n, _ := strconv.Atoi(c[2])
			total := 0
			for _, g := range su.Groups {
				total += len(g.Versions)
			}
			if n < 1 || n > total || !strings.Contains(c[3], "<svg") || !strings.Contains(c[3], "<path") {
				t.Errorf("%s: chart %s has %d points of %d versions, or no drawing", su.Name, c[1], n, total)
			}
		}
		t.Logf("%s: %d charts, %d bytes", su.Name, len(charts), len(page))
	}
	if want := []string{"draft", "quickstart", "shootout/fp8"}; !slices.Equal(names, want) {
		t.Errorf("suites %q, want %q", names, want)
	}

	qs := string(files["suites/quickstart.html"])
	short := f.jump[:7]
	for _, want := range []string{
		`<tr id="change-` + short + `">`,
		`href="https://github.com/acme/serving/commit/` + f.jump + `"`,
		`href="https://github.com/acme/serving/pull/42"`,
		`scheduler: admit by &lt;prefill&gt; budget`, // escaped
		`<a href="#change-` + short + `" class="worse">` + short + `</a>`,
		`href="../proofs/v1.2.3/attestation.intoto.json"`,
		`2 of 2 SLOs passed`,
		`ttft.p99 at rate=`,
	} {
		if !strings.Contains(qs, want) {
			t.Errorf("quickstart page lacks %s", want)
		}
	}
	// The newest version moved nothing: the landing page's arrows are
	// flat, and its last change point is the jump, worse.
	for _, want := range []string{`last change point: <a href="https://github.com/acme/serving/commit/` + f.jump + `"><code>` + short + `</code></a> (<a href="https://github.com/acme/serving/pull/42">#42</a>)`,
		`ttft.p99 →`, `<span class="worse">`, `not committed yet`} {
		if !strings.Contains(index, want) {
			t.Errorf("landing page lacks %s", want)
		}
	}
	if strings.Contains(index, "<script") || strings.Contains(qs, "<script") {
		t.Error("a page has a script")
	}
}

// Every relative link on every page leads to a file the site wrote, and
// every fragment to an element of that page.
func TestSiteLinksResolve(t *testing.T) {
	t.Parallel()
	_, _, files, out := build(t)
	checked := 0
	for name, data := range files {
		if !strings.HasSuffix(name, ".html") {
			continue
		}
		for _, m := range hrefs.FindAllStringSubmatch(string(data), -1) {
			link := strings.ReplaceAll(m[1], "&amp;", "&")
			if strings.HasPrefix(link, "https://") {
				continue
			}
			if strings.Contains(link, ":") || strings.HasPrefix(link, "/") {
				t.Errorf("%s: link %q is neither relative nor https", name, link)
				continue
			}
			target, frag, _ := strings.Cut(link, "#")
			file := name
			if target != "" {
				file = path.Clean(path.Join(path.Dir(name), target))
			}
			if _, err := os.Stat(filepath.Join(out, filepath.FromSlash(file))); err != nil {
				t.Errorf("%s: link %q: %v", name, link, err)
				continue
			}
			if frag != "" {
				found := false
				for _, id := range ids.FindAllStringSubmatch(string(files[file]), -1) {
					found = found || id[1] == frag
				}
				if !found {
					t.Errorf("%s: link %q: no element %q in %s", name, link, frag, file)
				}
			}
			checked++
		}
	}
	if checked < 10 {
		t.Errorf("checked %d links", checked)
	}
	t.Logf("%d relative links resolve", checked)
}

func TestPR(t *testing.T) {
	t.Parallel()
	for subject, want := range map[string]string{
		"fix the scheduler (#123)":                   "123",
		"Merge pull request #77 from acme/branch":    "77",
		"baseline update":                            "",
		"see issue #5":                               "",
		"bump (#12) and (#13)":                       "12",
		"(#99999999999999999999) overflowing digits": "",
	} {
		if got := PR(subject); got != want {
			t.Errorf("PR(%q) = %q, want %q", subject, got, want)
		}
	}
}

func TestParseProofRefusesOthers(t *testing.T) {
	t.Parallel()
	if _, err := ParseProof("x.intoto.json", []byte(`{"_type":"https://in-toto.io/Statement/v1","predicateType":"https://slsa.dev/provenance/v1"}`)); err == nil {
		t.Error("a SLSA statement was taken for a proof")
	}
	p, err := ParseProof("../a b/.x.intoto.json", proof("q", "abc"))
	if err != nil || p.Name != "a_b/_x.intoto.json" {
		t.Errorf("name %q, %v", p.Name, err)
	}
}

// The site is written through no link: a suites/ directory in --out that
// links elsewhere is refused by its path, and nothing lands there.
func TestSiteWritesThroughNoLink(t *testing.T) {
	t.Parallel()
	out, elsewhere := t.TempDir(), t.TempDir()
	if err := os.Symlink(elsewhere, filepath.Join(out, "suites")); err != nil {
		t.Skip("no symbolic links here:", err)
	}
	files := Files{"index.html": []byte("<p>x</p>"), "suites/q.html": []byte("<p>q</p>")}
	err := files.Write(out)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(out, "suites")) {
		t.Errorf("err %v", err)
	}
	if left, _ := os.ReadDir(elsewhere); len(left) != 0 {
		t.Errorf("written through the link: %v", left)
	}
}

// A trend is the newest version against the one before it that has the
// figure: up or down when it moved by the change-point threshold, red
// when that is the figure's bad direction.
func TestTrend(t *testing.T) {
	t.Parallel()
	nan := math.NaN()
	s := &Site{}
	g := &history.Group{Versions: make([]history.Version, 4)}
	for i := range g.Versions {
		g.Versions[i].Commit = fmt.Sprintf("%07d", i)
	}
	for _, tc := range []struct {
		values       []float64
		better       metric.Better
		arrow, class string
	}{
		{[]float64{100, 100, 100, 130}, metric.Lower, "▲", "worse"},
		{[]float64{100, 100, 130, nan}, metric.Lower, "·", "flat"},
		{[]float64{100, 130, nan, 100}, metric.Higher, "▼", "worse"},
		{[]float64{100, 100, 100, 80}, metric.Lower, "▼", "better"},
		{[]float64{100, 100, 100, 103}, metric.Lower, "→", "flat"},
		{[]float64{nan, nan, nan, 3}, metric.Lower, "→", "flat"},
	} {
		got := s.trend(g, &history.Series{Figure: "ttft.p99", Unit: "ms", Better: tc.better, Values: tc.values})
		if got.Arrow != tc.arrow || got.Class != tc.class {
			t.Errorf("%v: %s %s (%s), want %s %s", tc.values, got.Arrow, got.Class, got.Title, tc.arrow, tc.class)
		}
	}
}
