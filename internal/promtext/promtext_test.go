package promtext

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/benchci/benchci/internal/engine"
)

// The parser reads the text format: labels with escapes and blanks,
// timestamps, comments; a label set served twice counts once; other
// names are counted against the bounds but not kept.
func TestParse(t *testing.T) {
	t.Parallel()
	text := "# HELP DCGM_FI_DEV_POWER_USAGE Power draw (in W).\n# TYPE DCGM_FI_DEV_POWER_USAGE gauge\n" +
		"DCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\",modelName=\"NVIDIA \\\"H100\\\" {80GB}\\\\\"} 300 1700000000000\n" +
		"DCGM_FI_DEV_POWER_USAGE { gpu = \"1\" , } \t 350\n" +
		"DCGM_FI_DEV_POWER_USAGE{gpu=\"1\",} 999\n" + // the same label set again
		"DCGM_FI_DEV_POWER_USAGE{modelName=\"NVIDIA \\\"H100\\\" {80GB}\\\\\",gpu=\"0\",UUID=\"GPU-a\"} 999\n" + // and in another order
		"\n   \n" +
		"other_metric{a=\"b\"} 5\nup 1\r\n" +
		"x NaN\n"
	m, err := Parse(strings.NewReader(text), map[string]bool{"DCGM_FI_DEV_POWER_USAGE": true, "x": false})
	if err != nil {
		t.Fatal(err)
	}
	p := m["DCGM_FI_DEV_POWER_USAGE"]
	if p.N != 2 || p.Sum != 650 || p.Min != 300 || p.Max != 350 || len(p.ByLabels) != 2 {
		t.Errorf("power %+v", p)
	}
	if _, ok := m["other_metric"]; ok || m["x"].Bad != 1 || m["x"].N != 0 {
		t.Errorf("kept %v", m)
	}
	for _, bad := range []string{
		"1abc 1\n", "a{b=\"c\" 1\n", "a{b=c} 1\n", "a{b=\"c\\q\"} 1\n", "a\n", "a 1 2 3\n", "a one\n", "a 1 1.5\n", "a{=\"x\"} 1\n", "a{b=\"c\"",
	} {
		if _, err := Parse(strings.NewReader(bad), nil); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// Each bound of a scrape fails it whole, with an error that says which.
func TestParseBounds(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, text, want string
	}{
		{"bytes", strings.Repeat("# "+strings.Repeat("x", 1000)+"\n", MaxBytes/1000), "MiB a scrape may be"},
		{"lines", strings.Repeat("#\n", maxLines+1), "lines"},
		{"series", strings.Repeat("a 1\n", MaxSeries+1), "series"},
		{"line", "a{b=\"" + strings.Repeat("x", maxLine) + "\"} 1\n", "KiB"},
	} {
		_, err := Parse(strings.NewReader(c.text), nil)
		var limit *LimitError
		if !errors.As(err, &limit) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
	// At the bounds, it reads.
	if m, err := Parse(strings.NewReader(strings.Repeat("a 1\n", MaxSeries)), map[string]bool{"a": false}); err != nil || m["a"].N != 1 {
		t.Errorf("%d series: %v, %v", MaxSeries, m["a"], err)
	}
}

// FuzzParse: no exposition text makes the parser panic; what it keeps is
// within its bounds and finite.
func FuzzParse(f *testing.F) {
	f.Add("# TYPE DCGM_FI_DEV_POWER_USAGE gauge\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\"} 300\n")
	f.Add("a 1\na{x=\"1\"} NaN\nb +Inf\n")
	f.Add("# TYPE h histogram\nh_bucket{le=\"1\"} 1\nh_sum 1\nh_count 1\n")
	f.Add("a{b=\"c\\\"d\",e=\"\\\\\"} 1e308 123\na{b=\"x\"} 1e309\n")
	f.Add("a { b = \"}\" , } -0x1p-3\n")
	f.Fuzz(func(t *testing.T, text string) {
		m, err := Parse(strings.NewReader(text), map[string]bool{"a": true, "b": false, "h_sum": false})
		if err != nil {
			return
		}
		for name, s := range m {
			if s.N < 0 || s.N > MaxSeries || s.Bad > MaxSeries || len(s.ByLabels) > s.N || math.IsNaN(s.Sum) ||
				s.N > 0 && (math.IsInf(s.Min, 0) || math.IsInf(s.Max, 0) || s.Min > s.Max) {
				t.Errorf("%s: %+v", name, s)
			}
		}
	})
}

// FuzzParseAgrees: on text both accept, the parser reads what the
// Prometheus library's parser reads (through engine.Samples): per name,
// the same count of samples and the same sum, where no label set repeats.
func FuzzParseAgrees(f *testing.F) {
	f.Add("a 1\nb{x=\"1\"} 2\nb{x=\"2\"} 3.5 1700000000000\n")
	f.Add("a{b=\"c\\\"d\",e=\"\\\\\"} 1e308\nc NaN\nd -Inf\n")
	f.Add("a { b = \"}\" , } -2\n")
	f.Fuzz(func(t *testing.T, text string) {
		if strings.Contains(text, "#") { // comments: TYPE lines make histograms, which engine.Samples reads otherwise
			return
		}
		for _, l := range strings.Split(text, "\n") {
			if l = strings.TrimLeft(l, " \t"); strings.HasPrefix(l, "{") {
				return // a name within the braces, text format 1.0's: no exporter here serves it, the parser refuses it
			}
		}
		type agg struct {
			n   int
			sum float64
		}
		theirs := map[string]agg{}
		if err := engine.Samples(strings.NewReader(text), func(name string, v float64) {
			a := theirs[name]
			a.n++
			a.sum += v
			theirs[name] = a
		}); err != nil {
			return
		}
		want := map[string]bool{}
		for name := range theirs {
			want[name] = false
		}
		ours, err := Parse(strings.NewReader(text), want)
		if err != nil {
			t.Fatalf("the library reads it, the parser does not: %v", err)
		}
		for name, a := range theirs {
			s := ours[name]
			if s.N == a.n && (s.Sum == a.sum || math.Abs(s.Sum-a.sum) <= 1e-9*math.Abs(a.sum)) {
				continue
			}
			if s.N < a.n { // a label set served twice counts once here
				continue
			}
			t.Errorf("%s: %d samples summing to %v, the library %d to %v", name, s.N, s.Sum, a.n, a.sum)
		}
	})
}
