package didyoumean

import "testing"

func TestHint(t *testing.T) {
	known := []string{"warmup", "duration", "rates"}
	for _, tc := range []struct{ word, want string }{
		{"warmpu", ` (did you mean "warmup"?)`},
		{"durations", ` (did you mean "duration"?)`},
		{"zzz", ` (known: duration, rates, warmup)`},
		{"", ` (known: duration, rates, warmup)`},
	} {
		if got := Hint(tc.word, known); got != tc.want {
			t.Errorf("Hint(%q) = %q, want %q", tc.word, got, tc.want)
		}
	}
}

// A word that begins a candidate, or is one of its dash- or underscore-
// separated parts, means that candidate even when another is fewer edits
// away: gpu 'h100' is the h100-sxm card, not the h200 one edit off.
func TestClosestPrefersPart(t *testing.T) {
	gpus := []string{"a100-80gb", "h100-sxm", "h200", "l40s", "mi300x"}
	models := []string{"llama-3-8b", "llama-3-70b", "qwen2.5-7b"}
	params := []string{"usd_per_hour", "count", "name"}
	for _, tc := range []struct {
		word       string
		candidates []string
		want       string
		ok         bool
	}{
		{"h100", gpus, "h100-sxm", true},
		{"h200", gpus, "h200", true},
		{"h20", gpus, "h200", true},
		{"sxm", gpus, "h100-sxm", true},
		{"a100", gpus, "a100-80gb", true},
		{"h300", gpus, "h200", true}, // no part matches: edit distance decides
		{"70b", models, "llama-3-70b", true},
		{"llama-3", models, "llama-3-8b", true}, // both begin so: the nearer wins
		{"usd_per", params, "usd_per_hour", true},
		{"usd_per_hr", params, "usd_per_hour", true},
		{"h", gpus, "", false}, // one letter begins too much to mean anything
		{"zzz", gpus, "", false},
	} {
		got, ok := Closest(tc.word, tc.candidates)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Closest(%q) = %q, %v; want %q, %v", tc.word, got, ok, tc.want, tc.ok)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"a", "", 1}, {"kitten", "sitting", 3}, {"ttfb", "ttft", 1}} {
		if got := distance(tc.a, tc.b); got != tc.want {
			t.Errorf("distance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
