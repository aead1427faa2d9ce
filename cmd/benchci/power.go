package main

import (
	"github.com/benchci/benchci/framework/compare"
	"github.com/benchci/benchci/framework/suite"
)

// powerWarnings says which gated percentiles a suite's points measure from
// too few requests to ever fail the gate (compare.Power). Only a rate
// sweep's request counts are known ahead: closed loop, auto and capacity
// sweeps are not judged.
func powerWarnings(s *suite.Suite) []string {
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
	})
}
