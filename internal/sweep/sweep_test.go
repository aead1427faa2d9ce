package sweep

import (
	"context"
	"math"
	"strconv"
	"testing"

	"github.com/benchci/benchci/framework/result"
)

func pt(rate, tput float64) result.Point {
	p := result.Point{Label: "rate=" + fmtRate(rate), Mode: "rate", Rate: rate, Trial: 1,
		Measured: result.Measured{Throughput: result.Throughput{OutputTokens: tput}}}
	if tput > 0 {
		p.Requests.Completed = 10
	}
	return p
}

func fmtRate(r float64) string { return strconv.FormatFloat(r, 'g', -1, 64) }

func TestKnee(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name   string
		points []result.Point
		want   string // label, "" for none
	}{
		// Doubling the load doubles throughput, then adds only 20%.
		{"flattens", []result.Point{pt(1, 100), pt(2, 200), pt(4, 240), pt(8, 250)}, pt(2, 0).Label},
		{"keeps rising", []result.Point{pt(1, 100), pt(2, 190), pt(4, 370)}, ""},
		{"order does not matter", []result.Point{pt(4, 240), pt(1, 100), pt(2, 200)}, pt(2, 0).Label},
		{"falls", []result.Point{pt(1, 100), pt(2, 80)}, pt(1, 0).Label},
		{"one point", []result.Point{pt(1, 100)}, ""},
		// Points that measured the machine, or nothing, are not read: the
		// issue's "knee: rate=0.5" came from three invalid points.
		{"all invalid", []result.Point{invalid(pt(0.5, 100)), invalid(pt(1, 80)), invalid(pt(2, 5))}, ""},
		{"an invalid step left out", []result.Point{pt(1, 100), invalid(pt(2, 60)), pt(4, 390)}, ""},
		{"nothing answered", []result.Point{pt(1, 100), pt(2, 0)}, ""},
	}
	for _, tt := range tests {
		k := Knee(tt.points)
		got := ""
		if k != nil {
			got = k.Point
		}
		if got != tt.want {
			t.Errorf("%s: knee %q, want %q", tt.name, got, tt.want)
		}
	}
}

// TestSearch runs the search against probes with a known threshold.
func TestSearch(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name      string
		threshold float64 // passes at or below
		wantBound string
		check     func(c *result.Capacity) bool
	}{
		{"bracketed", 37, "bracketed", func(c *result.Capacity) bool {
			return c.Rate <= 37 && c.Failing > 37 && c.Failing/c.Rate-1 <= 0.05 && c.Probes <= 12
		}},
		{"below min", 0.5, "below-min", func(c *result.Capacity) bool { return c.Rate == 0 && c.Failing == 1 && c.Probes == 1 }},
		{"at least max", 1000, "at-least-max", func(c *result.Capacity) bool { return c.Rate == 256 && c.Probes == 2 }},
	}
	for _, tt := range tests {
		var probed []float64
		c, err := Search(context.Background(), 1, 256, 0.05, func(_ context.Context, r float64) (bool, error) {
			probed = append(probed, r)
			return r <= tt.threshold, nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if c.Bound != tt.wantBound || !tt.check(c) {
			t.Errorf("%s: capacity %+v after probing %v", tt.name, c, probed)
		}
		if len(probed) != c.Probes {
			t.Errorf("%s: %d probes counted, %d made", tt.name, c.Probes, len(probed))
		}
	}
}

func TestRoundRate(t *testing.T) {
	t.Parallel()
	for in, want := range map[float64]string{16: "16", math.Sqrt(2): "1.41", 1234.5: "1230", 0.012345: "0.0123", math.Sqrt(19 * 22.6): "20.7"} {
		if got := strconv.FormatFloat(RoundRate(in), 'g', -1, 64); got != want {
			t.Errorf("RoundRate(%v) = %s, want %s", in, got, want)
		}
	}
}

func invalid(p result.Point) result.Point {
	p.Validity = &result.Validity{Invalid: []string{"the machine stalled 1.20 s in 3 pauses"}}
	return p
}
