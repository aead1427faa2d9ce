// Interleaved variants keep their servers up side by side: two cannot
// launch on one address.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'clash',
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
  variants: {
    vllm: { target: b.target.launch(['vllm', 'serve', 'm'], url='http://127.0.0.1:8000') },
    sglang: { target: b.target.launch(['python', '-m', 'sglang.launch_server'], url='http://127.0.0.1:8000') },
  },
  order: 'interleaved',
}
