// Variants: an unknown field, a workload of its own (variants share the
// suite's), a name that is no path segment, simulator overrides on a
// server, a bad target and cost, and an unknown order.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'variants',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
  variants: {
    fp8: { sim: { max_num_seqs: 8 }, flags: ['--quantization', 'fp8'] },
    other: { workload: { seed: 2 } },
    'bf16/tp2': {},
    server: { target: b.target.url('http://127.0.0.1:8000'), sim: { max_num_seqs: 8 } },
    broken: { target: b.target.sim('nope'), cost: b.cost.gpu(usd_per_hour=2, gpus=0) },
  },
  order: 'random',
}
