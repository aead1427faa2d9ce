// A ramp longer than its point.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'ramp',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s', warmup='2s', ramp=b.sweep.ramp.linear(1, '30s')),
}
