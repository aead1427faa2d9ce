// Package words counts whitespace-separated words: the simulator's
// tokenizer, and the client's fallback estimate of tokens in streamed text.
package words

// space marks the bytes that separate words.
var space = [256]uint8{' ': 1, '\n': 1, '\t': 1, '\r': 1}

// Count returns the number of runs of non-space bytes in s (space, tab,
// newline and carriage return separate words).
func Count(s string) int {
	// A word starts where a separator is followed by a non-separator:
	// counted without a branch, since word lengths in prompts are as
	// unpredictable as a branch predictor's worst case (BenchmarkCount).
	n, prev := 0, uint8(1)
	for i := 0; i < len(s); i++ {
		sp := space[s[i]]
		n += int(prev &^ sp)
		prev = sp
	}
	return n
}
