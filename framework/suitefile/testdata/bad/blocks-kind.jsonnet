// A block size on arrivals that are no trace.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'blocks-kind',
  target: b.target.sim('tiny'),
  workload: {
    input_tokens: b.dist.fixed(10),
    output_tokens: b.dist.fixed(4),
    arrival: b.arrival.poisson() + { block_tokens: 64 },
  },
  sweep: b.sweep.rates([4], duration='10s'),
}
