// The open-loop half of benchci sim fit's CLI fixture (see closed.jsonnet).
local b = import 'benchci.libsonnet';
b.suite {
  name: 'simfit-open',
  target: b.target.sim('tiny', step_base='3ms', decode_per_seq='400us', prefill_per_token='20us'),
  workload: { input_tokens: b.dist.uniform(50, 400), output_tokens: b.dist.uniform(20, 40) },
  sweep: b.sweep.rates([8, 16, 24], duration='5s', warmup='500ms'),
}
