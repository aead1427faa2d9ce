package history

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/go-git/go-git/v5/plumbing"

	"github.com/benchci/benchci/framework/baseline"
	"github.com/benchci/benchci/framework/result"
)

// verifiedSet is what verifying blobs must decode: each distinct
// histogram (by encoding and scale) of the names history verifies, and
// how many histograms the blobs hold in all.
func verifiedSet(t *testing.T, blobs [][]byte) (distinct, all int) {
	t.Helper()
	type key struct {
		enc   string
		scale float64
	}
	seen := map[key]bool{}
	for _, data := range blobs {
		f, err := baseline.Parse(data)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range f.Result.Points {
			all += len(p.Histograms)
			for name, enc := range p.Histograms {
				if !verifiedHistograms(name) {
					continue
				}
				scale := 1000.0
				if name == result.OutputTokensHistogram {
					scale = 1
				}
				seen[key{enc, scale}] = true
			}
		}
	}
	return len(seen), all
}

// Issue 40: each distinct version (blob) is verified once however many
// commits hold it, and each distinct histogram history verifies is
// decoded once however many versions hold it; the histograms it neither
// shows nor judges by are not decoded.
func TestEachContentVerifiedOnce(t *testing.T) {
	s := newStore(t)
	g := newSynth(t)
	rng := rand.New(rand.NewPCG(11, 12))
	var datas [][]byte
	var hashes []plumbing.Hash
	for i := range 5 {
		data := g.baseline(1+0.1*float64(i%2), rng)
		datas = append(datas, data)
		hashes = append(hashes, s.blob(data))
	}
	// 5 distinct blobs in 14 commits: 3 leave the baseline alone, and
	// two bring an older blob back.
	for i, h := range hashes {
		s.commit(fmt.Sprintf("baseline %d", i), h)
		if i%2 == 0 {
			s.commit("docs", h)
		}
	}
	s.commit("back to 1", hashes[1])
	s.commit("back to 3", hashes[3])
	s.commit("docs", hashes[3])
	s.commit("deleted", plumbing.ZeroHash)
	s.commit("back to 0", hashes[0])
	// A version that changed its header alone: verified, with no
	// histogram decoded, and sharing every trial and figure of the one
	// before.
	moved := bytes.Replace(datas[0], []byte(`"host": "test"`), []byte(`"host": "elsewhere"`), 1)
	if bytes.Equal(moved, datas[0]) {
		t.Fatal("no host to move")
	}
	s.commit("moved host", s.blob(moved))
	repo, err := Open(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	w, err := repo.Versions(context.Background(), path)
	if err != nil || len(w.Skipped) != 0 || w.LeftOut != 0 {
		t.Fatal(err, w)
	}
	if len(w.Versions) != 9 || w.Parsed != 6 {
		t.Fatalf("%d versions, %d verified: want 9 versions of 6 distinct contents, each verified once", len(w.Versions), w.Parsed)
	}
	size := int64(len(moved))
	for _, d := range datas {
		size += int64(len(d))
	}
	if w.BytesRead != size {
		t.Errorf("read %d bytes, want %d: each distinct content once", w.BytesRead, size)
	}
	distinct, all := verifiedSet(t, datas)
	if w.Decoded != distinct || distinct*3 > all {
		t.Errorf("decoded %d histograms, want the %d distinct ones history verifies (of %d in the 5 contents)", w.Decoded, distinct, all)
	}
	last, before := w.Versions[8], w.Versions[7]
	if len(last.Points) == 0 || len(last.Points) != len(before.Points) || len(last.Baseline.Summary) != len(before.Baseline.Summary) {
		t.Fatal("the moved host's version lost points")
	}
	for i := range last.Points {
		if last.Points[i] != before.Points[i] {
			t.Errorf("trial %d held twice", i)
		}
	}
	for i := range last.Baseline.Summary {
		if reflect.ValueOf(last.Baseline.Summary[i].Figures).UnsafePointer() != reflect.ValueOf(before.Baseline.Summary[i].Figures).UnsafePointer() {
			t.Errorf("figures of %s held twice", last.Baseline.Summary[i].Point)
		}
	}
	// The versions' kept histograms share one copy of each content.
	a, b := w.Versions[0].Points[0].Histograms["e2e"], w.Versions[1].Points[0].Histograms["e2e"]
	if a == "" || unsafe.StringData(a) != unsafe.StringData(b) {
		t.Error("two versions hold two copies of one e2e histogram")
	}
}

// Issue 40: versions are read newest first up to the byte budget; the
// older ones are left out, and the walk says how many and why.
func TestByteBudgetLeavesOlderVersionsOut(t *testing.T) {
	s := newStore(t)
	g := newSynth(t)
	rng := rand.New(rand.NewPCG(13, 14))
	var commits []string
	var sizes []int64
	for i := range 6 {
		data := g.baseline(1, rng)
		sizes = append(sizes, int64(len(data)))
		commits = append(commits, s.commit(fmt.Sprintf("baseline %d", i), s.blob(data)))
	}
	repo, err := Open(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	budget := sizes[5] + sizes[4] + sizes[3] + sizes[2]/2
	w, err := repo.Read(context.Background(), path, Options{MaxRead: budget})
	if err != nil {
		t.Fatal(err)
	}
	if len(w.Versions) != 3 || w.Versions[0].Commit != commits[3] || w.Versions[2].Commit != commits[5] || w.LeftOut != 3 || w.Parsed != 3 {
		t.Fatalf("%d versions from %s, %d left out, %d parsed: want the newest 3 from %s, 3 left out", len(w.Versions), w.Versions[0].Short(), w.LeftOut, w.Parsed, short(commits[3]))
	}
	if w.BytesRead != sizes[3]+sizes[4]+sizes[5] || w.BytesRead > budget {
		t.Errorf("read %d bytes of a %d budget", w.BytesRead, budget)
	}
	note := w.LeftOutNote()
	if !strings.HasPrefix(note, "3 older versions left out: byte budget of ") || !strings.Contains(note, bytesize(budget)) {
		t.Errorf("note %q", note)
	}
	if w, err := repo.Versions(context.Background(), path); err != nil || w.LeftOut != 0 || w.LeftOutNote() != "" || len(w.Versions) != 6 {
		t.Errorf("default budget: %v %+v", err, w)
	}
}

// Issue 40: canceled after the k-th version is parsed, for every k, the
// walk stops without a panic (was: index out of range, its pool writing
// into results already dropped), returns context.Canceled, and what it
// read is a coherent history: the newest versions, whole, with the older
// ones counted as left out, none lost or made up. Run with -race.
func TestCanceledAfterEveryVersion(t *testing.T) {
	const n = 8
	s := newStore(t)
	g := newSynth(t)
	rng := rand.New(rand.NewPCG(15, 16))
	var commits []string
	for i := range n {
		commits = append(commits, s.commit(fmt.Sprintf("baseline %d", i), s.blob(g.baseline(1, rng))))
		s.commit("docs", plumbing.ZeroHash)
	}
	repo, err := Open(s.dir)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { parsedHook = nil }()
	for k := 0; k <= n; k++ {
		ctx, cancel := context.WithCancel(context.Background())
		var parsed atomic.Int64
		parsedHook = func() {
			if parsed.Add(1) == int64(k) {
				cancel()
			}
		}
		if k == 0 {
			cancel()
		}
		w, err := repo.Versions(ctx, path)
		cancel()
		if !errors.Is(err, context.Canceled) || w == nil {
			t.Fatalf("k=%d: %v, walk %v: want context.Canceled and the walk so far", k, err, w)
		}
		got := len(w.Versions)
		if k == 0 {
			// Canceled before the walk began: nothing read.
			if got != 0 || w.Commits != 0 || w.Parsed != 0 {
				t.Errorf("canceled at once: %d versions, %d commits read", got, w.Commits)
			}
			continue
		}
		if len(w.Skipped) != 0 || got+w.LeftOut != n || got > w.Parsed || w.Parsed < k || w.Parsed > n {
			t.Errorf("k=%d: %d versions, %d skipped, %d left out, %d parsed: want every one of %d versions read or left out", k, got, len(w.Skipped), w.LeftOut, w.Parsed, n)
		}
		for i, v := range w.Versions {
			if v.Commit != commits[n-got+i] || v.Baseline == nil || len(v.Points) == 0 {
				t.Errorf("k=%d: version %d is %s (%v): want %s, whole", k, i, v.Short(), v.Baseline == nil, short(commits[n-got+i]))
			}
		}
		if w.LeftOut > 0 && w.LeftOutWhy != "stopped: context canceled" {
			t.Errorf("k=%d: left out because %q", k, w.LeftOutWhy)
		}
		if k == n && got != n {
			t.Errorf("canceled after the last version: %d versions", got)
		}
	}
}
