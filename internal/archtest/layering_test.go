package archtest

import (
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/benchci/benchci/"

// Each rule: a package, what it must not link (directly or not), and the
// most non-standard packages it may link. The bounds are the goals
// (report at most 120, cost at most 15) or today's counts with some room,
// so that an import added only for a constant shows up here.
var rules = []struct {
	pkg     string
	never   []string
	maxDeps int
}{
	{"internal/cost", []string{"internal/telemetry", "framework/suite", "santhosh-tekuri/jsonschema"}, 15},
	{"internal/shard", []string{"internal/recorder", "internal/client"}, 40},
	{"framework/compare", []string{"framework/suite", "framework/suitefile"}, 45},
	{"internal/runner", []string{"google/go-jsonnet", "framework/suitefile"}, 130},
	{"internal/report", []string{"go-git", "gonum.org/v1/plot", "chromedp"}, 120},
	{"framework/metric", []string{module + "internal/recorder"}, 5},
	{"framework/result", []string{"internal/runner", "internal/sim", "internal/client"}, 12},
}

func TestLayering(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	for _, r := range rules {
		out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", module+r.pkg).Output()
		if err != nil {
			t.Fatalf("go list %s: %v", r.pkg, err)
		}
		deps := strings.Fields(string(out))
		for _, d := range deps {
			for _, n := range r.never {
				if strings.Contains(d, n) {
					t.Errorf("%s links %s, which it must not (rule: never %s)", r.pkg, d, n)
				}
			}
		}
		if len(deps) > r.maxDeps {
			t.Errorf("%s links %d non-standard packages, more than %d", r.pkg, len(deps), r.maxDeps)
		}
		t.Logf("%s: %d non-standard packages", r.pkg, len(deps))
	}
}

// TestNoArrowBackUp: the public framework sits below internal. A
// framework package may use an internal leaf (inputfile, stats, redact),
// never an internal package that itself links framework: that arrow runs
// back up, and the two layers could no longer be read, or moved, apart.
func TestNoArrowBackUp(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}} {{join .Imports \" \"}}", module+"framework/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	links := map[string]bool{} // internal package: links framework
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		fs := strings.Fields(line)
		for _, imp := range fs[1:] {
			if !strings.HasPrefix(imp, module+"internal/") {
				continue
			}
			up, seen := links[imp]
			if !seen {
				deps, err := exec.Command("go", "list", "-deps", imp).Output()
				if err != nil {
					t.Fatalf("go list -deps %s: %v", imp, err)
				}
				up = strings.Contains(string(deps), module+"framework/")
				links[imp] = up
			}
			if up {
				t.Errorf("%s imports %s, which links framework: move what it needs down, or the code up", fs[0], imp)
			}
		}
	}
	if len(links) == 0 {
		t.Error("no framework package imports an internal one: the test reads nothing")
	}
}
