// A cross product whose name pattern leaves an option out makes one name
// twice.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'dup',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
  variants: b.variants.cross({ quant: ['bf16', 'fp8'], seqs: [64, 128] },
                             function(o) { sim: { max_num_seqs: o.seqs } },
                             name='%(quant)s'),
}
