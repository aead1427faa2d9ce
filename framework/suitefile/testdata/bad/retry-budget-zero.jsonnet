// A budget of 0 would allow no retry at all (M4: it used to mean no cap,
// and 20 attempts per request): refused, with how to say either.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'retry-budget-zero',
  target: b.target.sim('tiny'),
  request: { retry: b.retry(budget=0) },
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
}
