// Images on every turn of a workload that has no sessions.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'images-every',
  target: b.target.sim('tiny'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5),
    images: { sizes: [{ width: 640, height: 480 }], turns: 'every' },
  },
  sweep: b.sweep.rates([4], duration='10s'),
}
