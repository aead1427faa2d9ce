// Images on a turn that is not 'first' or 'every'.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'images-turns',
  target: b.target.sim('tiny'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5),
    prompts: b.prompts.multi_turn(3),
    images: { sizes: [{ width: 640, height: 480 }], turns: 'sometimes' },
  },
  sweep: b.sweep.rates([4], duration='10s'),
}
