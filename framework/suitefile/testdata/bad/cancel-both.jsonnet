// A user abandons after tokens or after a time, not both.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'both',
  target: b.target.sim('tiny'),
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5),
              cancel: b.cancel(0.5, after_tokens=b.dist.fixed(2), after_ms=b.dist.fixed(100)) },
  sweep: b.sweep.rates([4], duration='10s'),
}
