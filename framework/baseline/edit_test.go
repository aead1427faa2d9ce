package baseline

import (
	"maps"
	"strings"
	"testing"
)

// F7: an edit that halves a baseline's throughputs and doubles its cost,
// consistently in its result and summary, reads as a valid baseline; Diff
// names every figure it moved, and each as more lenient.
func TestDiffNamesALenientEdit(t *testing.T) {
	base, err := Read("../../framework/result/testdata/quickstart-v1.json")
	if err != nil {
		t.Fatal(err)
	}
	edited := *base
	edited.Summary = nil
	want := 0
	for _, s := range base.Summary {
		figs := maps.Clone(s.Figures)
		for k, v := range figs {
			switch {
			case strings.HasSuffix(k, "throughput"):
				figs[k] = v / 2
				want++
			case strings.HasPrefix(k, "cost"):
				figs[k] = v * 2
				want++
			}
		}
		edited.Summary = append(edited.Summary, Summary{Point: s.Point, Figures: figs})
	}
	if want == 0 {
		t.Fatal("the committed baseline has no throughput or cost figures")
	}
	e := Diff(base, &edited)
	if len(e.Moves) != want || e.Lenient() != want {
		t.Fatalf("Diff: %d moves, %d lenient; want %d and %d: %+v", len(e.Moves), e.Lenient(), want, want, e.Moves)
	}
	for _, m := range e.Moves {
		if c := m.Change(); strings.HasSuffix(m.Figure, "throughput") && (c < -0.5001 || c > -0.4999) {
			t.Errorf("%s %s change %v, want -50%%", m.Point, m.Figure, c)
		}
	}
	// The reverse edit tightens the gate: the same moves, none lenient.
	if back := Diff(&edited, base); len(back.Moves) != want || back.Lenient() != 0 {
		t.Errorf("the reverse edit: %d moves, %d lenient; want %d and 0", len(back.Moves), back.Lenient(), want)
	}
	if same := Diff(base, base); len(same.Moves) != 0 {
		t.Errorf("an unchanged baseline moved %d figures", len(same.Moves))
	}
	// A point no longer gated is lenient.
	dropped := *base
	dropped.Summary = base.Summary[1:]
	if d := Diff(base, &dropped); d.Lenient() != 1 || !d.Moves[0].Gone {
		t.Errorf("a dropped point: %+v", d.Moves)
	}
}
