// lora-mix: one base model serving two LoRA adapters (on vLLM an adapter
// is a model name: --enable-lora --lora-modules sql-lora=... chat-lora=...).
// Each request draws its model by weight from the seeded stream, so every
// run sends each model the same requests; figures are kept per model
// beside the point's, and an SLO can hold one model to its own requests
// (here the adapter the product depends on). On the simulator the
// adapters cost what the base does; on a real server, point the target at
// it and the per-model lines show what adapters cost.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'lora-mix',
  description: 'Base model and two LoRA adapters, 60/30/10, with a per-adapter SLO',
  target: b.target.sim('llama-3-8b@h100-sxm'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=300, sigma=0.5, min=16, max=2048),
    output_tokens: b.dist.uniform(32, 128),
    models: [
      { name: 'meta-llama/Meta-Llama-3-8B-Instruct', weight: 6 },
      { name: 'sql-lora', weight: 3 },
      { name: 'chat-lora', weight: 1 },
    ],
    seed: 5,
  },
  sweep: b.sweep.rates([4, 8], duration='20s', warmup='3s'),
  slos: [
    b.slo.p90('ttft', '<', '500ms'),
    b.slo.p90('ttft', '<', '500ms') + { model: 'sql-lora' },
    b.slo.rate('error_rate', '<=', 0.01) + { model: 'sql-lora' },
  ],
  // Points this short cannot bound these percentiles (benchci validate says
  // how long they would need): shown in the table, left out of the gate.
  tolerance: { 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
}
