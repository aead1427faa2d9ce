package chart

import (
	"encoding/xml"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/variants"
)

// TestVariantsCharts writes one SVG per figure with a line per complete
// variant, named in the legend, and skips what no variant measured.
func TestVariantsCharts(t *testing.T) {
	curve := func(scale float64) []variants.Figures {
		var out []variants.Figures
		for _, r := range []float64{12, 4, 8} { // out of order: joined by load
			out = append(out, variants.Figures{Point: "r", Offered: r, OpenLoop: true, OutputTokPS: 100 * r * scale, TTFTP99Ms: 50 * r / scale})
		}
		return out
	}
	r := &variants.Report{Suite: "s", Variants: []variants.Variant{
		{Name: "bf16", Complete: true, Curve: curve(1)},
		{Name: "fp8", Complete: true, Curve: curve(1.3)},
		{Name: "broken", Curve: curve(2)}, // incomplete: not drawn
	}}
	dir := t.TempDir()
	paths, err := Variants(dir, r)
	if err != nil {
		t.Fatal(err)
	}
	// No point has a TPOT: that chart is not written.
	if len(paths) != 2 || filepath.Base(paths[0]) != "throughput.svg" || filepath.Base(paths[1]) != "ttft-p99.svg" {
		t.Fatalf("wrote %v", paths)
	}
	for _, p := range paths {
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		svg := string(data)
		if err := xml.Unmarshal(data, new(struct{})); err != nil || !strings.HasPrefix(strings.TrimSpace(svg), "<?xml") {
			t.Errorf("%s is not SVG: %v", p, err)
		}
		if !strings.Contains(svg, ">bf16<") || !strings.Contains(svg, ">fp8<") || strings.Contains(svg, ">broken<") {
			t.Errorf("%s: legend does not name exactly the complete variants", p)
		}
	}
}
