package words

import (
	"math/rand/v2"
	"strings"
	"testing"
)

// reference counts words the plain way, to hold Count to.
func reference(s string) int {
	return len(strings.FieldsFunc(s, func(r rune) bool { return r == ' ' || r == '\n' || r == '\t' || r == '\r' }))
}

// branching is the loop Count replaced, kept to measure against.
func branching(s string) int {
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

func TestCount(t *testing.T) {
	for _, c := range []struct {
		in   string
		want int
	}{
		{"", 0},
		{" \t\r\n", 0},
		{"one", 1},
		{" one", 1},
		{"one ", 1},
		{"one two", 2},
		{"one\ttwo\nthree\r\nfour", 4},
		{"  many   spaces  between ", 3},
		{"naïve café", 2}, // bytes over 127 are word bytes
		{"a\vb\fc", 1},    // vertical tab and form feed are not separators
		{"x\x00y", 1},     // nor is NUL
		{"\u00a0a b", 2},  // nor a no-break space's bytes
	} {
		if got := Count(c.in); got != c.want {
			t.Errorf("Count(%q) = %d, want %d", c.in, got, c.want)
		}
	}
}

func FuzzCount(f *testing.F) {
	for _, s := range []string{"", "a b", " a\tb\r\nc ", "\xff\xfe x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := Count(s), reference(s); got != want {
			t.Fatalf("Count(%q) = %d, want %d", s, got, want)
		}
	})
}

// BenchmarkCount compares Count with the branching loop it replaced on
// prompt-like text (words of 1-12 letters): go test -bench Count ./internal/words.
func BenchmarkCount(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for sb.Len() < 64<<10 {
		sb.WriteString(strings.Repeat("w", 1+r.IntN(12)))
		sb.WriteByte(" \n"[r.IntN(2)])
	}
	text := sb.String()
	for _, c := range []struct {
		name  string
		count func(string) int
	}{{"table", Count}, {"branching", branching}} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			for b.Loop() {
				if c.count(text) == 0 {
					b.Fatal("no words")
				}
			}
		})
	}
}
