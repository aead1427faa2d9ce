local b = import 'benchci.libsonnet';
b.suite {
  name: 'argument-missing',
  target: b.target.sim(),
  workload: { input_tokens: b.dist.fixed(1), output_tokens: b.dist.fixed(1) },
  sweep: b.sweep.rates([1], duration='1s'),
  cost: b.cost.gpu(gpus=2),
}
