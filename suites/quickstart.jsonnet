// quickstart: a chat workload on the simulated 70B server, swept across
// four request rates so the knee shows: throughput climbs, then flattens
// while TTFT rises. About 45 s of load on the embedded simulator, no GPU.
//
// Its gate is what 9 s points can bound. Every point sends 54 or more
// requests, enough for a 99% interval of a P90; a P99 needs 528, so the
// P99s are shown and held by the SLOs, not gated against the baseline
// ('off' says so, where a P99 that can never fail would pass every change
// unseen). To gate P99s, run longer points or trials: 4.
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
  sweep: b.sweep.rates([6, 10, 14, 20], duration='9s', warmup='2s'),
  slos: [
    b.slo.p99('ttft', '<', '500ms', at_rate=6),
    b.slo.p95('tpot', '<', '60ms', at_rate=6),
    b.slo.rate('error_rate', '<=', 0.01),
  ],
  cost: b.cost.gpu(usd_per_hour=2.49, gpus=4),
  tolerance: { 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
}
