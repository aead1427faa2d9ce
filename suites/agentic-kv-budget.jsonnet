// agentic-kv-budget: how much KV cache does an agent workload need before
// its prefix reuse collapses? The agentic trace (data/agentic-mooncake.jsonl:
// 24 sessions of 10 calls re-sending a shared system prompt and their
// growing history) replayed on Llama-3-8B on one L40S, derived from the
// cards, with the engine given 90%, 60% and 50% of the GPU's memory. The
// simulator's prefix cache lives in its KV blocks, as vLLM V1's does:
// blocks no running request holds stay cached until their memory is
// needed, so a smaller cache evicts the sessions' histories between their
// calls, the hit rate falls, prompts are recomputed, and queues form.
// Read server: prefix_cache_hit_rate and kv_cache_usage_peak per variant.
// About 4 minutes.
local b = import 'benchci.libsonnet';

local card(util) = b.target.simSpec('llama-3-8b', 'l40s', gpu_memory_utilization=util);

b.suite {
  name: 'agentic-kv-budget',
  description: 'Agent sessions from a trace on Llama-3-8B / L40S with 90%, 60% and 50% of memory for the engine',
  target: card(0.9),
  api: 'chat',
  workload: {
    input_tokens: b.dist.fixed(1024),
    output_tokens: b.dist.fixed(64),
    arrival: b.arrival.trace('data/agentic-mooncake.jsonl', block_tokens=512),
  },
  variants: {
    'mem-90': {},
    'mem-60': { target: card(0.6) },
    'mem-50': { target: card(0.5) },
  },
  sweep: b.sweep.rates([4], duration='60s', warmup='0s') + { reset_prefix_cache: true },
  slos: [b.slo.p90('ttft', '<', '500ms')],
  // Points this short cannot bound these percentiles (benchci validate says
  // how long they would need): shown in the table, left out of the gate.
  tolerance: { 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
}
