package gitrev

import "testing"

// A path through a revision's links names what they lead to, as a file
// system follows them; a link out of the repository, or a loop, names
// nothing.
func TestThroughLinks(t *testing.T) {
	t.Parallel()
	links := map[string]string{
		"suites":          "bench",
		"bench/old.json":  "../bl/len.json",
		"a":               "b",
		"b":               "c",
		"out":             "../../etc",
		"loop":            "loop",
		"sub/up":          "..",
		"abs":             "/etc",
		"deep/link/x.txt": "../../suites/x.jsonnet",
	}
	lookup := func(p string) (string, bool) { v, ok := links[p]; return v, ok }
	for _, c := range []struct {
		in, want string
		ok       bool
	}{
		{"suites/len.jsonnet", "bench/len.jsonnet", true},
		{"bench/old.json", "bl/len.json", true},
		{"a/f", "c/f", true},
		{"plain/f", "plain/f", true},
		{"sub/up/suites/f", "bench/f", true},
		{"deep/link/x.txt", "bench/x.jsonnet", true},
		{"out/passwd", "", false},
		{"abs/passwd", "", false},
		{"loop/f", "", false},
	} {
		got, ok := throughLinks(c.in, lookup)
		if got != c.want || ok != c.ok {
			t.Errorf("throughLinks(%q) = %q, %v; want %q, %v", c.in, got, ok, c.want, c.ok)
		}
	}
}
