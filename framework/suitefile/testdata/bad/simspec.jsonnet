// Simulators derived from cards: a custom card's unknown field, an unknown
// GPU, a tensor-parallel degree that does not divide the heads, and a
// constant's override on a derived profile.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'simspec',
  workload: { input_tokens: b.dist.fixed(10), output_tokens: b.dist.fixed(5) },
  sweep: b.sweep.rates([4], duration='10s'),
  variants: {
    card: { target: b.target.simSpec({ name: 'x', params: 1e9, layers: 8, hidden: 1024, heads: 8, kv_heads: 8,
                                       head_dim: 128, context_len: 4096, vocab_size: 1000 }, 'h100-sxm') },
    gpu: { target: b.target.simSpec('llama-3-8b', 'h100') },
    tp: { target: b.target.sim('llama-3-70b@h200-tp3') },
    step: { target: b.target.sim('llama-3-8b@h200', step_base='2ms') },
  },
}
