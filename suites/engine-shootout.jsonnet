// engine-shootout: which configuration serves this chat workload best?
// Three variants of a simulated Llama-3-70B on 4xH100, each sent the same
// requests: BF16 with --max-num-seqs 32, FP8 (faster steps, modelled at
// ~1.4x BF16, in the range public FP8 serving figures report) with the
// same limit, and BF16 with --max-num-seqs 64. A capacity search per
// variant finds the highest rate meeting the SLOs; benchci then ranks
// capacity and $/1M output tokens there, calling a difference within
// noise a tie. Interleaved: the variants take turns point by point, so
// drift of a shared machine falls on all alike. About 5 minutes.
//
// For real engines, give each variant a launch target instead, e.g.
//   vllm: { target: b.target.launch(['vllm', 'serve', model, '--port', '8000'], url='http://127.0.0.1:8000') },
//   sglang: { target: b.target.launch(['python', '-m', 'sglang.launch_server', '--model-path', model, '--port', '8000'], url='http://127.0.0.1:8000') },
// with order: 'sequential' when they share one GPU.
local b = import 'benchci.libsonnet';

function(duration='10s', warmup='2s') b.suite {
  name: 'engine-shootout',
  description: 'BF16 vs FP8 vs a larger batch limit on a simulated Llama-3-70B (4xH100)',
  target: b.target.sim('llama3-70b-h100x4'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.lognormal(median=256, sigma=0.6, min=16, max=2048),
    output_tokens: b.dist.uniform(32, 160),
    arrival: b.arrival.poisson(),
    seed: 11,
  },
  variants: {
    'bf16-seqs32': { sim: { max_num_seqs: 32 } },
    'fp8-seqs32': { sim: { max_num_seqs: 32, step_base: '13ms', decode_per_seq: '105us', prefill_per_token: '78us' } },
    'bf16-seqs64': { sim: { max_num_seqs: 64 } },
  },
  order: 'interleaved',
  sweep: b.sweep.capacity(min=4, max=24, precision=0.1, duration=duration, warmup=warmup),
  slos: [
    // P90, not P99: a probe of 10 s at ~13 req/s holds ~130 requests,
    // enough to bound a P90 but not a P99 (which needs ~530), and a
    // difference the statistics cannot bound is called a tie.
    b.slo.p90('ttft', '<', '1s'),
    b.slo.p90('tpot', '<', '80ms'),
    b.slo.rate('error_rate', '<=', 0.01),
  ],
  cost: b.cost.gpu(usd_per_hour=2.49, gpus=4),
}
