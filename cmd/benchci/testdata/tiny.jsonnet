local b = import 'benchci.libsonnet';
b.suite {
  name: 'tiny',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([5, 10], duration='400ms', warmup='100ms'),
  slos: [b.slo.p99('ttft', '<', '500ms'), b.slo.rate('error_rate', '<=', 0.01)],
  cost: b.cost.gpu(usd_per_hour=2, gpus=1),
}
