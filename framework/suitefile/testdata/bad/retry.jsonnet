// Retrying a 404 cannot help; budgets are shares of the requests;
// waits are not negative; max_attempts counts the first attempt; a
// part of a request cannot outlast the whole.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'retry',
  target: b.target.sim('tiny'),
  request: { retry: b.retry(on=['429', '404', 'oops'], max_attempts=1, initial='-1s', budget=1.5, jitter=2),
             timeouts: { idle: '10m' } },
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
}
