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
