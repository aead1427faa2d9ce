package main

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// TestSelftest runs the whole self-measurement briefly: the overhead test,
// the client cost against a simulator in another process (this test binary,
// acting as the CLI), and an open-loop point against it. It asks for JSON,
// whose document is stdout's and whose lines go to stderr: one run (seconds
// of fixed phases) checks both.
func TestSelftest(t *testing.T) {
	t.Setenv("BENCHCI_TEST_CLI", "1") // the child simulator runs as the CLI
	code, doc, out := runCLI(t, context.Background(), "selftest", "--streams", "2", "--rates", "50",
		"--cost-streams", "4", "--duration", "500ms", "--format", "json")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, doc, out)
	}
	var tables struct {
		Tables []struct {
			Title string
			Rows  []map[string]any
		}
	}
	if err := json.Unmarshal([]byte(doc), &tables); err != nil || len(tables.Tables) != 5 {
		t.Fatalf("stdout is not selftest's five tables (%v):\n%s", err, doc)
	}
	for _, tb := range tables.Tables {
		if len(tb.Rows) != 1 || tb.Rows[0]["errors"] != 0.0 {
			t.Errorf("table %q: rows %v, want one without errors", tb.Title, tb.Rows)
		}
	}
	for _, want := range []*regexp.Regexp{
		regexp.MustCompile(`chunk times come from (kernel receive stamps|the time each read returned)`),
		regexp.MustCompile(`\n +2 streams +\d+ requests +TTFT added p50 +\d+\.\d+ ms .* errors 0\n`),
		regexp.MustCompile(`\n +4 streams +\d+ tokens +CPU +\d+\.\d+ µs/token +memory +\d+\.\d+ KiB/stream +errors 0 +simulator CPU +\d+\.\d+ µs/token \(\d+k tokens/s per core\)\n`),
		regexp.MustCompile(`simulator in this process.*\n +50 req/s +sent +\d+\.\d+ .* +(held|NOT held)`),
		regexp.MustCompile(`\n +50 req/s +sent +\d+\.\d+ .*cores: client \d\.\d\d, simulator \d\.\d\d +(held|NOT held)`),
		regexp.MustCompile(`no-op server.*\n +50 req/s +sent +\d+\.\d+ .*cores: client \d\.\d\d +(held|NOT held)`),
	} {
		if !want.MatchString(out) {
			t.Errorf("output lacks %s:\n%s", want, out)
		}
	}
	if code, _, errOut := runCLI(t, context.Background(), "selftest", "--rates", "fast"); code != 2 || !strings.Contains(errOut, "--rates") {
		t.Errorf("bad --rates: exit %d, %s", code, errOut)
	}
}
