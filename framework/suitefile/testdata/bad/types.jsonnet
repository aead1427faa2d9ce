local b = import 'benchci.libsonnet';
b.suite {
  name: 'types',
  target: b.target.sim('tiny'),
  workload: {
    input_tokens: b.dist.fixed('many'),
    output_tokens: b.dist.uniform(10, 5),
  },
  sweep: b.sweep.rates([1, 'fast', -2], warmup=1),
  trials: 1.5,
}
