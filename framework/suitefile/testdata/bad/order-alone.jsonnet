// An order without variants to order.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'alone',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
  order: 'interleaved',
}
