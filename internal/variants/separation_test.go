package variants

import (
	"math"
	"strings"
	"testing"
)

// A cost tie says how long the probes must run to part the gap it saw, and
// at that many completions the two 99% intervals do part (and one fewer
// tenth short of it, they still overlap).
func TestTieSaysWhatWouldSeparateIt(t *testing.T) {
	t.Parallel()
	lead := &Figures{Point: "rate=13", USDPerMOutput: 1.0, Completed: 130, Seconds: 10}
	other := &Figures{Point: "rate=12", USDPerMOutput: 1.3, Completed: 120, Seconds: 10}
	got := separation(lead, other)
	for _, want := range []string{"30% gap to rate=12", "about 390 completions each", "at least 33 s", "(now 10 s)"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	part := func(n int64) bool {
		_, lhi := costCI(&Figures{USDPerMOutput: lead.USDPerMOutput, Completed: n})
		wlo, _ := costCI(&Figures{USDPerMOutput: other.USDPerMOutput, Completed: n})
		return wlo > lhi
	}
	need := int64(math.Ceil(math.Pow(z99*2.3/0.3, 2)))
	if !part(need) || part(need*9/10) {
		t.Errorf("at %d completions the intervals part: %v; at 90%% of it: %v", need, part(need), part(need*9/10))
	}
	if separation(lead, lead) != "" {
		t.Error("no gap, yet a separation was given")
	}
}
