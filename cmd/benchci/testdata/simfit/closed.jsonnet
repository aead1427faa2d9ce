// The fixture of benchci sim fit's CLI test: a closed-loop sweep measured
// on the simulator's server (wall clock, HTTP) with the tiny profile's
// step costs changed; the fit starts from tiny and should find them.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'simfit-closed',
  target: b.target.sim('tiny', step_base='3ms', decode_per_seq='400us', prefill_per_token='20us'),
  workload: { input_tokens: b.dist.uniform(50, 400), output_tokens: b.dist.uniform(20, 40) },
  sweep: b.sweep.concurrency([1, 2, 4, 8], duration='5s', warmup='500ms'),
}
