// chat: interactive chat traffic on a simulated Llama-3-8B (1xH100).
// Lengths follow a lognormal distribution, as real chat prompts do (a long
// tail of pasted documents); arrivals are Poisson. Goodput counts requests
// that met both interactive SLOs.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'chat',
  description: 'Chat traffic, lognormal lengths, Poisson arrivals, goodput',
  target: b.target.sim('llama3-8b-h100'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=400, sigma=0.8, min=8, max=6000),
    output_tokens: b.dist.lognormal(median=180, sigma=0.6, min=8, max=1024),
    arrival: b.arrival.poisson(),
    seed: 11,
  },
  sweep: b.sweep.rates([2, 8, 16, 32], duration='30s', warmup='5s'),
  goodput: { ttft: '500ms', tpot: '50ms' },
  slos: [
    b.slo.p99('ttft', '<', '500ms', at_rate=8),
    b.slo.p95('tpot', '<', '50ms', at_rate=8),
    b.slo.rate('goodput', '>=', 7, at_rate=8),
    b.slo.rate('error_rate', '<=', 0.001),
  ],
  // Points this short cannot bound these percentiles (benchci validate says
  // how long they would need): shown in the table, left out of the gate.
  tolerance: { default: '10%', 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
  cost: b.cost.gpu(usd_per_hour=2.49, gpus=1, watts=700, usd_per_kwh=0.12, ops_overhead_pct=10),
}
