// A model mix whose weights sum to zero, a name given twice, a negative
// weight, and an SLO naming a model the mix lacks.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'models',
  target: b.target.sim('tiny'),
  workload: {
    input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5),
    models: [{ name: 'base', weight: 0 }, { name: 'base', weight: 0 }, { name: 'lora', weight: -1 }],
  },
  sweep: b.sweep.rates([4], duration='10s'),
  slos: [{ metric: 'ttft', stat: 'p99', op: '<', threshold: '1s', model: 'lroa' }],
}
