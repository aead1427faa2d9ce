package untrusted

import "testing"

func TestText(t *testing.T) {
	for in, want := range map[string]string{
		"plain text\tand a tab":          "plain text\tand a tab",
		"\x1b[31mred\x1b]0;pwned\x07":    " [31mred ]0;pwned ",
		"model m\u202eevil":              "model m\uFFFDevil",
		"line\nbreak\r\u2028sep\u0085c1": "line break  sep c1",
		"ok é ü 日本":                      "ok é ü 日本",
	} {
		if got := Text(in); got != want {
			t.Errorf("Text(%q) = %q, want %q", in, got, want)
		}
		if Safe(in) != (in == want) {
			t.Errorf("Safe(%q) = %v", in, Safe(in))
		}
	}
}

func FuzzText(f *testing.F) {
	f.Add("\x1b[2J\u202e")
	f.Fuzz(func(t *testing.T, s string) {
		if out := Text(s); !Safe(out) {
			t.Errorf("Text(%q) = %q is not safe", s, out)
		}
	})
}

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		n    int
		want string
	}{
		{"short", 8, "short"},
		{"exactly8", 8, "exactly8"},
		{"nine runes", 8, "nine ru…"},
		{"ééééééééé", 4, "ééé…"}, // runes, not bytes
	} {
		if got := Clip(c.in, c.n); got != c.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", c.in, c.n, got, c.want)
		}
	}
}
