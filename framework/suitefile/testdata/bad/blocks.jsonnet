// A trace's blocks of a negative size.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'blocks',
  target: b.target.sim('tiny'),
  workload: {
    input_tokens: b.dist.fixed(10),
    output_tokens: b.dist.fixed(4),
    arrival: b.arrival.trace('data/agents.jsonl', block_tokens=-16),
  },
  sweep: b.sweep.rates([4], duration='10s'),
}
