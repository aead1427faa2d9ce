local b = import 'benchci.libsonnet';
local h100(price_per_hour, count=1) = b.cost.gpu(price_per_hour, gpus=count);
b.suite {
  name: 'argument-local',
  target: b.target.sim(),
  workload: { input_tokens: b.dist.fixed(1), output_tokens: b.dist.fixed(1) },
  sweep: b.sweep.rates([1], duration='1s'),
  cost: h100(price_per_hr=2, count=8),
}
