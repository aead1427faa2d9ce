// 'off' as the default tolerance would gate nothing.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'tolerance-off',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
  tolerance: { default: 'off', 'ttft.p99': 'off' },
}
