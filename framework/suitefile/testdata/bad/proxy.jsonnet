// The fault proxy fronts real servers, with rates that add up to at most 1.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'proxy',
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
  variants: {
    sim: { target: b.target.sim('tiny') + { proxy: { latency: '5ms' } } },
    url: { target: b.target.url('http://127.0.0.1:8000', proxy={ rate_429: 0.7, rate_503: 0.7, stall_rate: 0.1 }) },
  },
}
