// trace-replay: replays recorded traffic (arrival times and lengths) from
// data/trace-mini.jsonl, rescaled to each rate of the sweep. Point it at
// your own gateway logs, exported as JSONL.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'trace-replay',
  description: 'Recorded arrivals and lengths, replayed at 1x, 2x and 4x their rate',
  target: b.target.sim('llama3-8b-h100'),
  api: 'completions',
  workload: {
    // The trace records every length; these only fill gaps in it.
    input_tokens: b.dist.fixed(256),
    output_tokens: b.dist.fixed(64),
    arrival: b.arrival.trace('data/trace-mini.jsonl'),
  },
  sweep: b.sweep.rates([3, 6, 12], duration='15s', warmup='2s'),
  slos: [b.slo.p99('ttft', '<', '1s', at_rate=3)],
  // Points this short cannot bound these percentiles (benchci validate says
  // how long they would need): shown in the table, left out of the gate.
  tolerance: { 'ttft.p90': 'off', 'ttft.p99': 'off', 'tpot.p99': 'off', 'itl.p99': 'off', 'e2e.p99': 'off' },
}
