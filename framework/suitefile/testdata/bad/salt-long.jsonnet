// A fixed salt longer than a salt may be, given through the helper.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'salt-long',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5), prompts: b.prompts.synthetic(salt=std.repeat('x', 129)) },
  sweep: b.sweep.rates([4], duration='10s'),
}
