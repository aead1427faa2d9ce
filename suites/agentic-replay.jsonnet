// agentic-replay: agent sessions replayed from a trace in Mooncake's
// format (data/agentic-mooncake.jsonl): 24 sessions of 10 calls, every
// call re-sending a shared 1k-token system prompt and its whole history.
// The trace's hash_ids name each prompt's 512-token blocks, so the
// server's prefix cache meets the reuse it would in production; the
// server's hit rate is read per point (server: prefix_cache_hit_rate),
// and the cache is emptied before each point so every point starts cold.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'agentic-replay',
  description: 'Agent sessions with shared system prompts and growing context, from a Mooncake-format trace',
  target: b.target.sim('llama3-8b-h100'),
  api: 'chat',
  workload: {
    // The trace records every length; these only fill gaps in it.
    input_tokens: b.dist.fixed(1024),
    output_tokens: b.dist.fixed(64),
    arrival: b.arrival.trace('data/agentic-mooncake.jsonl', block_tokens=512),
  },
  sweep: b.sweep.rates([2, 4], duration='60s', warmup='0s') + { reset_prefix_cache: true },
  slos: [b.slo.p90('ttft', '<', '500ms', at_rate=2)],
  // Points this short cannot bound these percentiles (benchci validate says
  // how long they would need): shown in the table, left out of the gate.
  tolerance: { 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
}
