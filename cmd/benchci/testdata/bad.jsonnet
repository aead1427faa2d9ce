local b = import 'benchci.libsonnet';
b.suite {
  name: 'bad',
  target: b.target.sim('tinny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([1, -2]),
  slos: [b.slo.p99('ttfb', '<', '1s')],
  tolerance: { 'ttft.p99': '15%', tpot_p95: '5%' },
}
