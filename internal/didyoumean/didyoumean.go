// Package didyoumean names the closest known word to a misspelt one, so an
// error can say "did you mean" instead of listing everything.
package didyoumean

import (
	"fmt"
	"slices"
	"strings"
)

// Closest returns the candidate the word most likely meant, and false when
// none is close. A candidate the word is a prefix of (at least two letters),
// or one whose dash- or underscore-separated parts include the word, wins
// over any other: "h100" means "h100-sxm", not "h200", though h200 is one
// edit away. Otherwise the nearest by edit distance wins when it is close
// enough to be a typo (a third of word's letters, at least one). Among
// several, the nearest by edit distance, then the alphabetically first, so
// errors read the same on every run.
func Closest(word string, candidates []string) (string, bool) {
	if slices.Contains(candidates, word) {
		return word, true
	}
	if best, ok := nearest(word, candidates, func(c string) bool { return partOf(word, c) }); ok {
		return best, true
	}
	limit := max(1, len(word)/3)
	return nearest(word, candidates, func(c string) bool { return distance(word, c) <= limit })
}

// nearest is the candidate passing keep at the least edit distance from
// word, ties to the alphabetically first.
func nearest(word string, candidates []string, keep func(string) bool) (string, bool) {
	best, bestD, found := "", 0, false
	for _, c := range candidates {
		if !keep(c) {
			continue
		}
		if d := distance(word, c); !found || d < bestD || (d == bestD && c < best) {
			best, bestD, found = c, d, true
		}
	}
	return best, found
}

// partOf says whether word begins c (two letters or more: one letter says
// nothing) or is one of c's dash- or underscore-separated parts.
func partOf(word, c string) bool {
	if len(word) >= 2 && strings.HasPrefix(c, word) {
		return true
	}
	return word != "" && slices.Contains(strings.FieldsFunc(c, func(r rune) bool { return r == '-' || r == '_' }), word)
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
