package result

import "github.com/benchci/benchci/framework/metric"

// pointFigures reads each per-point figure of the metric catalogue from the
// field of Point that holds it: the one place a new single-number metric is
// wired to its field (latencies need none: they are read from their
// histogram's summary by name). The string says why a figure is missing,
// as Value documents. TestPointFiguresMatchCatalogue keeps this table and
// the catalogue in step both ways.
var pointFigures = map[string]func(p *Point) (float64, string){
	metric.ErrorRate:         func(p *Point) (float64, string) { return p.Requests.ErrorRate, "" },
	metric.RequestThroughput: func(p *Point) (float64, string) { return p.Throughput.Requests, "" },
	metric.OutputThroughput:  func(p *Point) (float64, string) { return p.Throughput.OutputTokens, "" },
	metric.TotalThroughput:   func(p *Point) (float64, string) { return p.Throughput.TotalTokens, "" },
	metric.Goodput: func(p *Point) (float64, string) {
		if p.Throughput.Goodput == nil {
			return 0, "the suite sets no per-request SLOs (goodput)"
		}
		return *p.Throughput.Goodput, ""
	},
	metric.StructuredCorrect: func(p *Point) (float64, string) {
		if p.Structured == nil || p.Structured.Checked == 0 {
			return 0, "no structured answers were checked"
		}
		return p.Structured.Rate, ""
	},
	metric.RetryAmplification: func(p *Point) (float64, string) {
		if p.Requests.Attempts == 0 {
			return 0, "the suite sets no retry policy"
		}
		return float64(p.Requests.Attempts) / float64(p.Requests.Sent), ""
	},
	metric.CostPerMOutput: func(p *Point) (float64, string) {
		if p.Cost == nil || p.Cost.PerMOutput == 0 {
			return 0, "no cost inputs, or no output throughput"
		}
		return p.Cost.PerMOutput, ""
	},
	metric.EnergyPerOutputToken: func(p *Point) (float64, string) {
		if p.EnergyPerOutputToken == 0 {
			return 0, "no power measured (telemetry), or no output throughput"
		}
		return p.EnergyPerOutputToken, ""
	},
}
