// bursty: the same chat load, but arriving in spikes: 4x the rate during
// the last 2 s of every 10 s, as when a batch job or a retry storm lands on
// an interactive service. Compare its tail latencies with chat.jsonnet's.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'bursty',
  description: 'Chat traffic in 4x spikes of 2 s every 10 s',
  target: b.target.sim('llama3-8b-h100'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=400, sigma=0.8, min=8, max=6000),
    output_tokens: b.dist.lognormal(median=180, sigma=0.6, min=8, max=1024),
    arrival: b.arrival.bursts(factor=4, on='2s', period='10s'),
    seed: 11,
  },
  sweep: b.sweep.rates([2, 4, 8], duration='40s', warmup='5s'),
  slos: [b.slo.p99('ttft', '<', '2s', at_rate=4)],
  cost: b.cost.gpu(usd_per_hour=2.49, gpus=1),
  // Points this short cannot bound these percentiles (benchci validate says
  // how long they would need): shown in the table, left out of the gate.
  tolerance: { 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
}
