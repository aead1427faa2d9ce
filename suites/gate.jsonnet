// gate: a suite made for gating a pull request, not for a picture of the
// server. One load point, measured in four short trials so the gate can
// use a test across trials (Mann-Whitney U), with 5% bands. On the
// simulator it caught a 10% slower engine step (step_base 18ms -> 19.8ms)
// in 20 of 20 runs and flagged none of 20 unchanged runs
// (BenchmarkGateCatchRate in cmd/benchci; about 35 s a run).
//
//   benchci run suites/gate.jsonnet                           # as is
//   benchci run --tla-str step_base=19.8ms suites/gate.jsonnet  # 10% slower
local b = import 'benchci.libsonnet';

function(step_base='18ms') b.suite {
  name: 'gate',
  description: 'One point, four trials, 5% bands: a gate that catches a 10% slowdown',
  target: b.target.sim('llama3-70b-h100x4', step_base=step_base),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=256, sigma=0.6, min=16, max=2048),
    output_tokens: b.dist.uniform(32, 160),
    arrival: b.arrival.constant(),
    seed: 7,
  },
  sweep: b.sweep.rates([6], duration='5s', warmup='1s'),
  trials: 4,
  // Request throughput counts whole requests ending in a 5 s window, about
  // 20: one request more or less is 5%, so its band is wider.
  tolerance: { default: '5%', request_throughput: '10%' },
  slos: [b.slo.p95('tpot', '<', '60ms', at_rate=6), b.slo.rate('error_rate', '<=', 0.01)],
  cost: b.cost.gpu(usd_per_hour=2.49, gpus=4),
}
