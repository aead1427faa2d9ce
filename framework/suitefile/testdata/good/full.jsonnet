// Every field, with ext vars and top-level args.
local b = import 'benchci.libsonnet';
function(rate='4') b.suite {
  name: 'full-' + std.extVar('variant'),
  description: 'all fields',
  target: b.target.url('http://127.0.0.1:8000', model='m', api_key_env='HOME'),
  api: 'completions',
  request: { timeout: '90s', ignore_eos: false, extra: { temperature: 0 } },
  workload: {
    input_tokens: b.dist.lognormal(median=512, sigma=0.5, min=16, max=4096),
    output_tokens: b.dist.empirical([64, 128, 256], weights=[1, 2, 1]),
    arrival: b.arrival.constant(),
    prompts: b.prompts.synthetic(),
    seed: 42,
  },
  sweep: b.sweep.rates([1, std.parseInt(rate)], duration='20s', warmup='2s', requests=100, max_concurrency=64),
  slos: [
    b.slo.p99('ttft', '<', '500ms', at_rate=1),
    b.slo.p95('tpot', '<=', '50ms'),
    b.slo.rate('error_rate', '<', '1%'),
  ],
  tolerance: { default: '10%', 'ttft.p99': '15%|20ms' },
  cost: b.cost.gpu(usd_per_hour=2.49, gpus=2, watts=700, usd_per_kwh=0.1, ops_overhead_pct=15),
  trials: 3,
}
