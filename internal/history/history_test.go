package history

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/changepoint"
	"github.com/benchci/benchci/internal/gitfixture"
)

const (
	path       = "baselines/quickstart.json"
	quickstart = "../../framework/result/testdata/quickstart-v1.json"
)

// A history of 12 baselines where TTFT rose 30% at the seventh: history
// names that commit for every TTFT figure of every point and nothing
// else; commits that leave the baseline alone are not versions.
func TestHistoryFindsTheCommitThatMovedAFigure(t *testing.T) {
	r := gitfixture.New(t)
	var commits []string
	for i := range 12 {
		ttft := 1.0
		if i >= 6 {
			ttft = 1.3
		}
		commits = append(commits, r.Commit("baseline "+string(rune('a'+i)), map[string][]byte{path: gitfixture.Baseline(t, quickstart, uint64(i), ttft, "")}))
		r.Commit("an unrelated change", map[string][]byte{"README.md": []byte(strings.Repeat("x", i+1))})
	}
	repo, err := Open(filepath.Join(r.Dir, "baselines"))
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil || len(w.Skipped) != 0 || w.Shallow != "" || w.Commits != 24 {
		t.Fatal(err, w)
	}
	versions := w.Versions
	if len(versions) != 12 {
		t.Fatalf("%d versions, want 12", len(versions))
	}
	for i, v := range versions {
		if v.Commit != commits[i] || v.Subject != "baseline "+string(rune('a'+i)) {
			t.Errorf("version %d: %s %q, want %s", i, v.Short(), v.Subject, short(commits[i]))
		}
	}
	groups := Analyze(versions, changepoint.Options{})
	if len(groups) != 1 {
		t.Fatalf("%d groups", len(groups))
	}
	ttftSeries := 0
	for _, s := range groups[0].Series {
		isTTFT := strings.HasPrefix(s.Figure, "ttft.")
		if isTTFT {
			ttftSeries++
		}
		switch {
		case isTTFT && (len(s.Changes) != 1 || s.Changes[0].Commit != commits[6] || !s.Changes[0].Worse):
			t.Errorf("%s %s: changes %+v, want one, worse, at %s", s.Point, s.Figure, s.Changes, short(commits[6]))
		case isTTFT:
			if rel := s.Changes[0].Relative(); rel < 0.25 || rel > 0.35 {
				t.Errorf("%s %s: moved %+.0f%%, want about +30%%", s.Point, s.Figure, 100*rel)
			}
		case len(s.Changes) != 0:
			t.Errorf("%s %s: changes %+v in a figure that did not move", s.Point, s.Figure, s.Changes)
		}
	}
	if ttftSeries != 12 {
		t.Errorf("%d TTFT series, want 3 statistics x 4 points", ttftSeries)
	}
}

// Noise alone, a version that does not parse, and a workload change:
// no change points, the bad version skipped with its reason, two groups.
func TestHistoryFlatSkippedAndGrouped(t *testing.T) {
	r := gitfixture.New(t)
	for i := range 10 {
		r.Commit("flat", map[string][]byte{path: gitfixture.Baseline(t, quickstart, uint64(100+i), 1, "")})
	}
	bad := r.Commit("hand edit", map[string][]byte{path: []byte(`{"schema": "benchci.baseline/v1"`)})
	for i := range 3 {
		r.Commit("new workload", map[string][]byte{path: gitfixture.Baseline(t, quickstart, uint64(200+i), 2, "w2")})
	}
	repo, err := Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	versions, skipped := w.Versions, w.Skipped
	if len(skipped) != 1 || skipped[0].Commit != bad || !strings.Contains(skipped[0].Reason, "JSON") {
		t.Errorf("skipped %+v, want %s as invalid JSON", skipped, short(bad))
	}
	groups := Analyze(versions, changepoint.Options{})
	if len(groups) != 2 || len(groups[0].Versions) != 10 || len(groups[1].Versions) != 3 || groups[1].WorkloadHash != "w2" {
		t.Fatalf("groups: %d", len(groups))
	}
	for _, g := range groups {
		if cs := g.Changes(); len(cs) != 0 {
			t.Errorf("workload %s: %d changes in noise, first %s %s at %s", g.WorkloadHash, len(cs), cs[0].Point, cs[0].Figure, short(cs[0].Commit))
		}
	}
}

func TestHistoryNeverCommitted(t *testing.T) {
	r := gitfixture.New(t)
	r.Commit("init", map[string][]byte{"README.md": []byte("x")})
	repo, err := Open(r.Dir)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := repo.Versions(context.Background(), path); !errors.Is(err, ErrNeverCommitted) {
		t.Error("no error for a file never committed")
	}
	if _, err := repo.Rel("/elsewhere/b.json"); err == nil {
		t.Error("no error for a path outside the repository")
	}
	if rel, err := repo.Rel(filepath.Join(r.Dir, "baselines", "q.json")); err != nil || rel != "baselines/q.json" {
		t.Errorf("Rel: %q, %v", rel, err)
	}
}
