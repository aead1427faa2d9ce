// Lengths no model serves are refused where they are written.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'lengths',
  target: b.target.sim('tiny'),
  workload: {
    input_tokens: b.dist.fixed(1e8),
    output_tokens: b.dist.lognormal(median=128, sigma=50),
  },
  sweep: b.sweep.rates([1]),
}
