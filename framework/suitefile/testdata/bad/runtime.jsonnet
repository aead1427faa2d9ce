local b = import 'benchci.libsonnet';
b.suite {
  name: 'runtime',
  target: b.target.sim(),
  workload: { input_tokens: b.dist.fixed(1), output_tokens: b.dist.fixed(1) },
  sweep: b.sweep.rates([1], duratoin='1s'),
}
