// quickstart: a chat workload on the simulated 70B server, swept across
// four request rates so the knee shows: throughput climbs, then flattens
// while TTFT rises. About 40 s of load on the embedded simulator, no GPU.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'quickstart',
  description: 'Chat traffic on a simulated Llama-3-70B (4xH100), four rates',
  target: b.target.sim('llama3-70b-h100x4'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=256, sigma=0.6, min=16, max=2048),
    output_tokens: b.dist.uniform(32, 160),
    arrival: b.arrival.poisson(),
    seed: 7,
  },
  sweep: b.sweep.rates([2, 6, 12, 20], duration='8s', warmup='2s'),
  slos: [
    b.slo.p99('ttft', '<', '500ms', at_rate=6),
    b.slo.p95('tpot', '<', '60ms', at_rate=6),
    b.slo.rate('error_rate', '<=', 0.01),
  ],
  cost: b.cost.gpu(usd_per_hour=2.49, gpus=4),
}
