// Every name of a figure is checked against the metric catalogue.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'metrics',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(8), output_tokens: b.dist.fixed(4) },
  sweep: b.sweep.rates([1]),
  goodput: { ttfb: '500ms' },
  slos: [
    b.slo.p99('tpot', '<', '50ms'),
    { metric: 'ttft', stat: 'p42', op: '<', threshold: '1s' },
    { metric: 'error_rate', stat: 'p99', op: '<', threshold: 0.01 },
  ],
  tolerance: {
    'ttfb.p99': '15%',
    tpot_p95: '5%',
    bogus: '1%',
    'ttft.p95': '10%',
    ttft: '20%',
  },
}
