package tokenizer

import "testing"

func TestCount(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, text string
		want       int
	}{
		{"words", " the cat  sat\n", 3},
		// "hello world" is two tokens in cl100k_base; "antidisestablishmentarianism" several.
		{"cl100k_base", "hello world", 2},
		{"o200k_base", "hello world", 2},
	}
	for _, tt := range tests {
		c, err := Get(tt.name)
		if err != nil {
			t.Fatal(err)
		}
		if got := c.Count(tt.text); got != tt.want {
			t.Errorf("%s: Count(%q) = %d, want %d", tt.name, tt.text, got, tt.want)
		}
	}
	c, _ := Get("cl100k_base")
	if n := c.Count("antidisestablishmentarianism"); n < 3 {
		t.Errorf("a long rare word is %d tokens", n)
	}
	if _, err := Get("gpt-7"); err == nil {
		t.Error("an unknown tokenizer was accepted")
	}
}
