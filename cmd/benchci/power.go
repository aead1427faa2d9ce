package main

import (
	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/metric"
	"github.com/benchci/benchci/framework/suite"
)

// powerWarnings says which gated percentiles a suite's points measure from
// too few requests to ever fail the gate (compare.Power), and which
// percentile SLOs a capacity search's probes cannot bound
// (compare.SearchPower). Only a rate sweep's and a capacity search's
// request counts are known ahead: closed loop and auto sweeps are not
// judged.
func powerWarnings(s *suite.Suite) []string {
	if s.Sweep.Kind == suite.SweepCapacity {
		var keys []metric.Key
		for _, slo := range s.SLOs {
			if slo.Stat != "" {
				keys = append(keys, metric.K(slo.Metric, slo.Stat))
			}
		}
		return compare.SearchPower(s.Sweep.Min, s.Sweep.Max, s.Sweep.Duration.D(), keys)
	}
	if s.Sweep.Kind != suite.SweepRate {
		return nil
	}
	return compare.Power(compare.Plan{
		Rates:      s.Sweep.Rates,
		Duration:   s.Sweep.Duration.D(),
		Requests:   s.Sweep.Requests,
		Trials:     s.Trials,
		Retry:      s.Request.Retry != nil,
		Embeddings: s.API == suite.APIEmbeddings,
		Tolerance:  s.Tolerance,
	})
}
