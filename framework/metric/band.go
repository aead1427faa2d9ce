package metric

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// Band is a tolerance: a change is within it when it is at most Rel
// (relative) or at most Abs (absolute, in the metric's unit) away. Suites
// declare it per figure, and compare judges against it.
type Band struct {
	Rel float64       // fraction, 0.1 for "10%"
	Abs time.Duration // 0 when not given
	// Off ("off") leaves the figure out of the gate: shown, never judged.
	// It is how a suite says that a figure it measures from too few
	// requests to bound (a P99 of a short point) gates nothing, rather
	// than letting it pass every change unseen.
	Off bool
}

// BandOff is the tolerance that leaves a figure out of the gate.
const BandOff = "off"

// ParseBand parses "10%", "20ms", "10%|20ms" or "off".
func ParseBand(s string) (Band, error) {
	var b Band
	if strings.TrimSpace(s) == "" {
		return b, fmt.Errorf("empty tolerance; want \"10%%\", \"20ms\", \"10%%|20ms\" or \"off\"")
	}
	if strings.TrimSpace(s) == BandOff {
		return Band{Off: true}, nil
	}
	for _, part := range strings.Split(s, "|") {
		part = strings.TrimSpace(part)
		if p, ok := strings.CutSuffix(part, "%"); ok {
			f, err := strconv.ParseFloat(p, 64)
			if err != nil || !(f >= 0) || math.IsInf(f, 0) {
				return b, fmt.Errorf("bad relative tolerance %q", part)
			}
			b.Rel = f / 100
			continue
		}
		d, err := time.ParseDuration(part)
		if err != nil || d < 0 {
			return b, fmt.Errorf("bad tolerance %q; want \"10%%\", \"20ms\" or \"10%%|20ms\"", part)
		}
		b.Abs = d
	}
	return b, nil
}
