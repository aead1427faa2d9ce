// multi-turn-chat: chat sessions of 4 turns; each turn is sent 2 s after
// the previous reply and carries the whole conversation, so prompts grow
// turn by turn (and a server with prefix caching reuses the history).
// The rate is the rate of new sessions.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'multi-turn-chat',
  description: '4-turn chat sessions with 2 s think time',
  target: b.target.sim('llama3-8b-h100'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=120, sigma=0.6, min=8, max=1000),
    output_tokens: b.dist.lognormal(median=150, sigma=0.5, min=16, max=600),
    prompts: b.prompts.multi_turn(turns=4, think_time='2s'),
    arrival: b.arrival.poisson(),
    seed: 21,
  },
  sweep: b.sweep.rates([1, 4], duration='30s', warmup='5s'),
  slos: [b.slo.p95('ttft', '<', '500ms', at_rate=1)],
  // Points this short cannot bound these percentiles (benchci validate says
  // how long they would need): shown in the table, left out of the gate.
  tolerance: { 'ttft.p90': 'off', 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
}
