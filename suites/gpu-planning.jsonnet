// gpu-planning: which hardware serves Llama-3-70B for this chat workload
// at the lowest cost per token within the SLOs, before renting any of it?
// Each variant is the simulator derived from the model's card and a GPU's
// datasheet (see docs/simulator.md): step times from bytes over
// bandwidth and FLOPs over FLOP/s, KV-cache capacity from the memory left
// after the weights, so FP8 weights free memory for the cache and halve
// the bytes each decode step reads, and an H200's bandwidth shortens every
// step. A capacity search per variant finds the highest rate meeting the
// SLOs; benchci ranks capacity and $/1M output tokens. The hourly prices
// are illustrative; put yours. About 6 minutes.
local b = import 'benchci.libsonnet';

function(duration='10s', warmup='2s') b.suite {
  name: 'gpu-planning',
  description: 'Llama-3-70B on 4xH100 BF16, 2xH100 FP8 and 2xH200 BF16, from cards',
  target: b.target.sim('llama-3-70b@h100-sxm-tp4'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=512, sigma=0.6, min=16, max=4096),
    output_tokens: b.dist.uniform(64, 256),
    arrival: b.arrival.poisson(),
    seed: 17,
  },
  variants: {
    'h100x4-bf16': { cost: b.cost.gpu(usd_per_hour=2.49, gpus=4) },
    'h100x2-fp8': { target: b.target.sim('llama-3-70b@h100-sxm-tp2-fp8'), cost: b.cost.gpu(usd_per_hour=2.49, gpus=2) },
    'h200x2-bf16': { target: b.target.sim('llama-3-70b@h200-tp2'), cost: b.cost.gpu(usd_per_hour=3.49, gpus=2) },
  },
  order: 'interleaved',
  sweep: b.sweep.capacity(min=2, max=32, precision=0.1, duration=duration, warmup=warmup),
  slos: [
    b.slo.p90('ttft', '<', '1s'),
    b.slo.p90('tpot', '<', '60ms'),
    b.slo.rate('error_rate', '<=', 0.01),
  ],
}
