// Package site writes the results site: a static set of pages, one per
// suite, showing every committed baseline's gated figures over the commits
// that recorded them (read from git by internal/history), the change points
// linked to their commits and pull requests, the verdict of the newest run
// when one is given, and the releases' proofs. Pages are html/template
// with inline CSS and inline SVG (gonum/plot, internal/chart): no script,
// nothing loaded from the network, as the HTML report.
package site

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/result"
	"github.com/benchci/benchci/internal/changepoint"
	"github.com/benchci/benchci/internal/history"
	"github.com/benchci/benchci/internal/safefile"
)

// Input is what a site is built from.
type Input struct {
	// Baselines is the directory of committed baseline files, inside a
	// git repository whose first-parent history holds their versions.
	Baselines string
	// Results are runs judged against the baselines: each suite's newest
	// verdict. A suite with none shows its baseline's own SLO verdicts.
	Results []*result.File
	// Proofs are release proofs (statements benchci attest wrote), copied
	// into the site and linked from the suites they measured.
	Proofs []Proof
	// RepoURL is the repository's web address (https://github.com/o/r):
	// commits and pull requests link there; "" links none.
	RepoURL string
	// MinShift is the smallest move named a change point (0: history's
	// default).
	MinShift float64
	// Tool is the benchci version; Generated when the site was built.
	Tool      string
	Generated time.Time
}

// Suite is one suite's history and verdict.
type Suite struct {
	Name string
	// Path is the baseline's path in the repository; "" for a suite seen
	// only in results.
	Path   string
	Groups []history.Group
	// Skipped are versions that could not be read; Note says what is
	// missing (never committed, a shallow clone).
	Skipped []history.Skipped
	Note    string
	// Gate is the newest verdict: a given run against the baseline, or
	// the baseline's own SLOs (Own set).
	Gate *compare.Report
	Own  bool
	// Proofs are the release proofs that measured this suite.
	Proofs []*Proof
	page   string
}

// Site is what the pages show.
type Site struct {
	Suites []*Suite
	Proofs []*Proof
	Notes  []string
	in     Input
}

// Build reads every baseline's history under in.Baselines and judges the
// given results. It stops with ctx's error when ctx is done.
func Build(ctx context.Context, in Input) (*Site, error) {
	if in.RepoURL != "" {
		u, err := url.Parse(in.RepoURL)
		if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return nil, fmt.Errorf("repository address %q: want an http(s) URL such as https://github.com/owner/repo", in.RepoURL)
		}
		in.RepoURL = strings.TrimSuffix(in.RepoURL, "/")
	}
	s := &Site{in: in}
	repo, err := history.Open(in.Baselines)
	if err != nil {
		return nil, err
	}
	names, err := baselineNames(in.Baselines)
	if err != nil {
		return nil, err
	}
	opts := changepoint.Options{MinShift: in.MinShift}
	byName := map[string]*Suite{}
	shallow := false
	for _, name := range names {
		path := filepath.Join(in.Baselines, filepath.FromSlash(name)+".json")
		su := &Suite{Name: name}
		byName[name] = su
		s.Suites = append(s.Suites, su)
		rel, err := repo.Rel(path)
		if err != nil {
			return nil, err
		}
		su.Path = rel
		walk, err := repo.Versions(ctx, rel)
		if err != nil {
			if !errors.Is(err, history.ErrNeverCommitted) {
				return nil, err
			}
			su.Note = "not committed yet: " + err.Error()
			continue
		}
		su.Skipped = walk.Skipped
		if note := walk.ShallowNote(); note != "" {
			su.Note, shallow = note, true
		}
		if su.Groups, err = history.AnalyzeContext(ctx, walk.Versions, opts); err != nil {
			return nil, err
		}
	}
	if shallow {
		s.Notes = append(s.Notes, "a shallow clone: histories stop where the clone does (actions/checkout with fetch-depth: 0 fetches them whole)")
	}
	judged := map[string]bool{}
	for _, f := range in.Results {
		name := f.Suite.Name
		if f.Suite.Variant != "" {
			name += "/" + f.Suite.Variant
		}
		if judged[name] {
			return nil, fmt.Errorf("two results of suite %s: give the newest run of each suite", name)
		}
		judged[name] = true
		su := byName[name]
		if su == nil {
			su = &Suite{Name: name, Note: "no committed baseline"}
			byName[name] = su
			s.Suites = append(s.Suites, su)
			su.Gate = compare.WithoutBaseline(f)
			continue
		}
		b, err := baseline.Read(filepath.Join(in.Baselines, filepath.FromSlash(name)+".json"))
		if err != nil {
			return nil, err
		}
		if su.Gate, err = compare.Gate(b.Result, f); err != nil {
			return nil, err
		}
	}
	for _, su := range s.Suites {
		if su.Gate != nil || su.Path == "" {
			continue
		}
		b, err := baseline.Read(filepath.Join(in.Baselines, filepath.FromSlash(su.Name)+".json"))
		if err != nil {
			su.Note = cmp.Or(su.Note, err.Error())
			continue
		}
		su.Gate, su.Own = compare.WithoutBaseline(b.Result), true
	}
	for i := range in.Proofs {
		p := &in.Proofs[i]
		s.Proofs = append(s.Proofs, p)
		for _, name := range p.Suites {
			for _, su := range s.Suites {
				if su.Name == name || strings.HasPrefix(su.Name, name+"/") {
					su.Proofs = append(su.Proofs, p)
				}
			}
		}
	}
	slices.SortFunc(s.Suites, func(a, b *Suite) int { return strings.Compare(a.Name, b.Name) })
	pages := map[string]bool{}
	for _, su := range s.Suites {
		su.page = pageName(su.Name, pages)
	}
	return s, nil
}

// baselineNames lists the baseline files under dir by suite name
// ("quickstart", "engine-shootout/fp8-seqs32"), links not followed.
func baselineNames(dir string) ([]string, error) {
	var names []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() && strings.HasSuffix(path, ".json") {
			rel, err := filepath.Rel(dir, path)
			if err != nil {
				return err
			}
			names = append(names, strings.TrimSuffix(filepath.ToSlash(rel), ".json"))
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read the baselines: %w", err)
	}
	return names, nil
}

// pageName is the suite's page: a file name of safe characters, unique
// among taken.
func pageName(suite string, taken map[string]bool) string {
	var b strings.Builder
	for _, r := range suite {
		switch {
		case r >= 'a' && r <= 'z', r >= 'A' && r <= 'Z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == '/':
			b.WriteByte('.')
		default:
			b.WriteByte('_')
		}
	}
	base := "suites/" + cmp.Or(b.String(), "_")
	name := base + ".html"
	for i := 2; taken[strings.ToLower(name)]; i++ {
		name = fmt.Sprintf("%s-%d.html", base, i)
	}
	taken[strings.ToLower(name)] = true
	return name
}

// Proof is a release proof: a statement benchci attest wrote.
type Proof struct {
	// Name is its path under the site's proofs/ directory.
	Name string
	Data []byte
	// Commit, MadeAt and Benchci are the statement's; Suites the suites
	// it measured; Passed and SLOs count its SLO verdicts.
	Commit       string
	MadeAt       time.Time
	Benchci      string
	Suites       []string
	Passed, SLOs int
}

// sloPredicateType is benchci attest's predicate type.
const sloPredicateType = "https://benchci.dev/attestation/slo/v1"

// ParseProof reads a statement benchci attest wrote, to be published
// under name (a slash-separated path; characters outside [A-Za-z0-9._-]
// become '_'). It checks the statement's type, not its digests or
// signature: benchci verify and gh attestation verify do that.
func ParseProof(name string, data []byte) (Proof, error) {
	var st struct {
		Type          string `json:"_type"`
		PredicateType string `json:"predicateType"`
		Predicate     struct {
			Benchci string    `json:"benchci"`
			Commit  string    `json:"commit"`
			MadeAt  time.Time `json:"madeAt"`
			Runs    []struct {
				Suite struct {
					Name string `json:"name"`
				} `json:"suite"`
				SLOs []struct {
					Pass bool `json:"pass"`
				} `json:"slos"`
			} `json:"runs"`
		} `json:"predicate"`
	}
	if err := json.Unmarshal(data, &st); err != nil {
		return Proof{}, fmt.Errorf("proof %s: %w", name, err)
	}
	if st.Type != "https://in-toto.io/Statement/v1" || st.PredicateType != sloPredicateType {
		return Proof{}, fmt.Errorf("proof %s: not a statement benchci attest wrote (type %q, predicate %q)", name, st.Type, st.PredicateType)
	}
	p := Proof{Name: proofName(name), Data: data, Commit: st.Predicate.Commit, MadeAt: st.Predicate.MadeAt, Benchci: st.Predicate.Benchci}
	for _, r := range st.Predicate.Runs {
		if !slices.Contains(p.Suites, r.Suite.Name) {
			p.Suites = append(p.Suites, r.Suite.Name)
		}
		for _, s := range r.SLOs {
			p.SLOs++
			if s.Pass {
				p.Passed++
			}
		}
	}
	return p, nil
}

func proofName(name string) string {
	var parts []string
	for _, part := range strings.Split(filepath.ToSlash(name), "/") {
		if part == "" || part == "." || part == ".." {
			continue
		}
		b := []byte(part)
		for i, c := range b {
			if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '-' || c == '_') {
				b[i] = '_'
			}
		}
		if b[0] == '.' {
			b[0] = '_'
		}
		parts = append(parts, string(b))
	}
	return cmp.Or(strings.Join(parts, "/"), "proof.json")
}

// Files are a site's files by their slash-separated paths.
type Files map[string][]byte

// Write writes files into dir, following no link below it.
func (fs Files) Write(dir string) error {
	d, err := safefile.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	for _, name := range slices.Sorted(maps.Keys(fs)) {
		if err := d.WriteFile(name, fs[name]); err != nil {
			return fmt.Errorf("site: %w", err)
		}
	}
	return nil
}

// prNumber is the pull request a commit subject names: GitHub's squash
// merges end in "(#123)", its merge commits begin "Merge pull request #123".
var prNumber = regexp.MustCompile(`(?:\(#|^Merge pull request #)([0-9]{1,9})\b`)

// PR is the pull request number subject names, or "".
func PR(subject string) string {
	if m := prNumber.FindStringSubmatch(subject); m != nil {
		return m[1]
	}
	return ""
}
