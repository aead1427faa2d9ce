package result

import (
	"os/exec"
	"strings"
	"testing"
)

// The results format is a leaf: reading a results file must not pull in
// the simulator, the workload, targets, suites or Jsonnet, or a change in
// any of them could change what an old file means.
func TestResultIsALeaf(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Skipf("go list: %v", err)
	}
	allowed := map[string]bool{
		"github.com/benchci/benchci/framework/result":    true,
		"github.com/benchci/benchci/framework/metric":    true,
		"github.com/benchci/benchci/internal/didyoumean": true,
		"github.com/benchci/benchci/internal/redact":     true,
		"github.com/benchci/benchci/internal/inputfile":  true,
		"github.com/benchci/benchci/internal/safefile":   true, // the standard library only
		"github.com/benchci/benchci/internal/untrusted":  true,
	}
	for _, pkg := range strings.Fields(string(out)) {
		if strings.HasPrefix(pkg, "github.com/benchci/") && !allowed[pkg] || strings.Contains(pkg, "jsonnet") {
			t.Errorf("result depends on %s", pkg)
		}
	}
}
