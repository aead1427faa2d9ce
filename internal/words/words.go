// Package words counts whitespace-separated words: the simulator's
// tokenizer, and the client's fallback estimate of tokens in streamed text.
package words

// Count returns the number of runs of non-space bytes in s (space, tab,
// newline and carriage return separate words).
func Count(s string) int {
	n, in := 0, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		space := c == ' ' || c == '\n' || c == '\t' || c == '\r'
		if !space && !in {
			n++
		}
		in = !space
	}
	return n
}
