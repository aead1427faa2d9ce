// A throughput sweep needs its request count, runs until its requests
// end (no duration), and has no rate for an SLO to pin.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'throughput',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.throughput(requests=0) { duration: '10s' },
  slos: [b.slo.p99('ttft', '<', '1s', at_rate=5)],
}
