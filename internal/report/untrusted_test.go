package report

import (
	"strings"
	"testing"
)

func TestUntrustedTextIsInert(t *testing.T) {
	t.Parallel()
	body := "bad request\n::error::pwned\r\n::add-mask::x\x1b[31m"
	got := OneLine(body)
	if strings.ContainsAny(got, "\r\n\x1b") || strings.Contains(got, "::") {
		t.Errorf("OneLine(%q) = %q", body, got)
	}
	log := "starting\n::set-output name=x::y\nready"
	got = Lines(log)
	if strings.Count(got, "\n") != 2 || strings.Contains(got, "::") {
		t.Errorf("Lines(%q) = %q", log, got)
	}
	for _, l := range strings.Split(got, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "::") {
			t.Errorf("line %q would be a workflow command", l)
		}
	}
}

// OneLine and the client's ingress neutralize alike: tabs, C1 controls,
// bidirectional and invisible characters included.
func TestOneLineIsUntrustedText(t *testing.T) {
	t.Parallel()
	in := "a\tb\u0085c\u009bd m\u202eevil k\u200bey"
	if got, want := OneLine(in), "a b c d m\uFFFDevil k\uFFFDey"; got != want {
		t.Errorf("OneLine(%q) = %q, want %q", in, got, want)
	}
}
