local b = import 'benchci.libsonnet';
b.suite {
  name: 'bad name!',
  target: b.target.sim('h100-unknown'),
  api: 'rerank',
  workload: {
    input_tokens: b.dist.lognormal(median=-5, sigma=0.5),
    arrival: { kind: 'poisson', rate: 3 },
  },
  sweep: b.sweep.rates([-1, 0, 4], duration='soon'),
  slos: [
    b.slo.p99('ttft', '=<', 500, at_rate=3),
    { metric: 'latency', op: '<', threshold: 1 },
  ],
  tolerance: { default: 'ten percent' },
  warmpu: '5s',
}
