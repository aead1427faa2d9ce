// Plans no machine can send are refused before anything is drawn.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'plans',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([1e9, 5000], duration='2562047h'),
}
