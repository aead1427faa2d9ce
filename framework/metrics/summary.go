// Package metrics records request measurements into HdrHistograms and
// summarizes them. Definitions follow vLLM's benchmark_serving, made
// stricter (see DESIGN.md): TTFT to the first chunk with content, ITL per
// chunk gap, TPOT per token, E2E to the last byte, each also measured from
// the request's intended send time.
package metrics

import (
	"encoding/base64"
	"fmt"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"
)

// Summary describes a distribution. Latencies are in milliseconds, token
// counts in tokens.
type Summary struct {
	Count  int64   `json:"count"`
	Min    float64 `json:"min"`
	Mean   float64 `json:"mean"`
	Stddev float64 `json:"stddev"`
	P50    float64 `json:"p50"`
	P90    float64 `json:"p90"`
	P95    float64 `json:"p95"`
	P99    float64 `json:"p99"`
	P999   float64 `json:"p99.9"`
	Max    float64 `json:"max"`
}

// Stat returns the named statistic (min, mean, p50, p90, p95, p99, p99.9, max).
func (s Summary) Stat(name string) (float64, bool) {
	switch name {
	case "min":
		return s.Min, true
	case "mean":
		return s.Mean, true
	case "stddev":
		return s.Stddev, true
	case "p50":
		return s.P50, true
	case "p90":
		return s.P90, true
	case "p95":
		return s.P95, true
	case "p99":
		return s.P99, true
	case "p99.9":
		return s.P999, true
	case "max":
		return s.Max, true
	}
	return 0, false
}

// Summarize describes h, whose values are divided by scale (1000 turns
// recorded microseconds into milliseconds, 1 leaves counts as they are).
func Summarize(h *hdrhistogram.Histogram, scale float64) Summary {
	if h.TotalCount() == 0 {
		return Summary{}
	}
	q := func(p float64) float64 { return float64(h.ValueAtQuantile(p)) / scale }
	return Summary{
		Count:  h.TotalCount(),
		Min:    float64(h.Min()) / scale,
		Mean:   h.Mean() / scale,
		Stddev: h.StdDev() / scale,
		P50:    q(50),
		P90:    q(90),
		P95:    q(95),
		P99:    q(99),
		P999:   q(99.9),
		Max:    float64(h.Max()) / scale,
	}
}

// EncodeHistogram returns h in HdrHistogram's compressed V2 form, base64,
// readable by every HdrHistogram implementation.
func EncodeHistogram(h *hdrhistogram.Histogram) (string, error) {
	b, err := h.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
	if err != nil {
		return "", fmt.Errorf("encode histogram: %w", err)
	}
	return string(b), nil
}

// DecodeHistogram reverses EncodeHistogram.
func DecodeHistogram(s string) (*hdrhistogram.Histogram, error) {
	if _, err := base64.StdEncoding.DecodeString(s); err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	h, err := hdrhistogram.Decode([]byte(s))
	if err != nil {
		return nil, fmt.Errorf("decode histogram: %w", err)
	}
	return h, nil
}
