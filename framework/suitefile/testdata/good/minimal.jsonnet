local b = import 'benchci.libsonnet';
b.suite {
  name: 'minimal',
  target: b.target.sim('tiny'),
  workload: {
    input_tokens: b.dist.fixed(64),
    output_tokens: b.dist.fixed(16),
  },
  sweep: b.sweep.rates([1, 2]),
}
