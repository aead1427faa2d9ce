// Images: a resolution of 0, a format the client cannot synthesize, and
// images on the completions API, which takes no messages.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'images',
  target: b.target.sim('tiny'),
  api: 'completions',
  workload: {
    input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5),
    images: { sizes: [{ width: 0, height: 480 }, { width: 640, height: 480 }], format: 'webp' },
  },
  sweep: b.sweep.rates([4], duration='10s'),
}
