// Embeddings stream nothing, so an SLO on TTFT cannot be measured; a
// batch holds at least one input.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'embeddings',
  target: b.target.sim('tiny'),
  api: 'embeddings',
  workload: { input_tokens: b.dist.fixed(10), batch: b.dist.fixed(0) },
  sweep: b.sweep.rates([4], duration='10s'),
  slos: [b.slo.p90('ttft', '<', '1s'), b.slo.p90('e2e', '<', '1s')],
}
