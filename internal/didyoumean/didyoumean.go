// Package didyoumean names the closest known word to a misspelt one, so an
// error can say "did you mean" instead of listing everything.
package didyoumean

import (
	"fmt"
	"slices"
	"strings"
)

// Closest returns the candidate nearest to word by edit distance when it is
// close enough to be a typo (a third of word's letters, at least one), and
// false otherwise. Ties go to the alphabetically first candidate so errors
// read the same on every run.
func Closest(word string, candidates []string) (string, bool) {
	best, bestD := "", max(1, len(word)/3)+1
	for _, c := range candidates {
		if d := distance(word, c); d < bestD || (d == bestD && c < best) {
			best, bestD = c, d
		}
	}
	return best, best != ""
}

// Hint is the tail of an error message: ` (did you mean "x"?)` or, when
// nothing is close, ` (known: a, b, c)`.
func Hint(word string, candidates []string) string {
	if best, ok := Closest(word, candidates); ok {
		return fmt.Sprintf(" (did you mean %q?)", best)
	}
	sorted := slices.Clone(candidates)
	slices.Sort(sorted)
	return " (known: " + strings.Join(sorted, ", ") + ")"
}

// distance is the Levenshtein distance between a and b, in bytes.
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
