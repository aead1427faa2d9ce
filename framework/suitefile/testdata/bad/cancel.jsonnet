// A share of users above all of them, and a length below one token.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'cancel',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5), cancel: b.cancel(1.5, b.dist.fixed(0)) },
  sweep: b.sweep.rates([4], duration='10s'),
}
