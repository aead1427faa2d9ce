// benchci.libsonnet: helpers that keep suites short.
//
//   local b = import 'benchci.libsonnet';
//   b.suite { name: 'chat', target: b.target.sim('llama3-8b-h100'), ... }
//
// Every helper returns plain data; the benchci binary validates it and
// reports problems with the file:line where the field was written.
{
  // suite is the base object suites extend; defaults live in the binary so
  // that suites written as plain JSON get them too. A suite may set
  // tokenizer: 'cl100k_base' (or o200k_base, p50k_base, r50k_base; default
  // 'words') to count tokens offline when the server reports no usage.
  suite:: {},

  target:: {
    // sim runs the embedded simulator with a named profile: a constant one
    // (llama3-8b-h100, llama3-70b-h100x4, llama3-8b-h100-spec, tiny), one from
    // cards, model@gpu[-tpN][-fp8][-kvfp8], e.g. 'llama-3-70b@h100-sxm-tp4'
    // (see simSpec), or 'file:fitted.json' (benchci sim fit --out; suite-relative).
    // Named arguments override the profile's constants, e.g.
    // sim('llama3-8b-h100', max_num_seqs=128) to model a config change.
    // faults makes it misbehave: { error_rate, reset_rate, stall_rate,
    // stall, slow_first_byte, malformed_rate, wrong_usage_rate,
    // wrong_structured_rate }.
    sim(profile='llama3-8b-h100', max_num_seqs=null, max_batched_tokens=null, step_base=null,
        decode_per_seq=null, prefill_per_token=null, tokens_per_step=null, faults=null)::
      local o = std.prune({
        max_num_seqs: max_num_seqs, max_batched_tokens: max_batched_tokens, step_base: step_base,
        decode_per_seq: decode_per_seq, prefill_per_token: prefill_per_token, tokens_per_step: tokens_per_step,
      });
      { kind: 'sim', profile: profile, [if std.length(o) > 0 then 'sim']: o, [if faults != null then 'faults']: faults },
    // simSpec derives the simulator from a model card and a GPU card, each
    // a built-in name (models: llama-3-8b, llama-3-70b, llama-2-70b, llama-3.1-405b,
    // qwen2.5-7b, qwen2.5-72b, mixtral-8x7b; GPUs: a100-80gb, h100-sxm,
    // h200, l40s, mi300x) or a card written out ({ name, params, layers, hidden, heads,
    // kv_heads, head_dim, intermediate, vocab, context_len } for a model;
    // { name, memory_gib, bandwidth_gbs, tflops: { bf16, fp8 }, link_gbs,
    // all_reduce_us, and optionally all_reduce_doubling_us (switches: what each
    // doubling of the group beyond two adds), interconnect: 'nvswitch'|'mesh'|'pcie'
    // (on 'pcie' a large all-reduce moves at 60% of link_gbs),
    // peer_links, achieved_gbs, achieved_tflops } for a GPU), with the
    // engine's knobs; engine is 'vllm' (default), 'sglang' or 'trtllm'; weights and
    // kv_cache are 'bf16' or 'fp8'. Efficiencies override the engine's achieved shares
    // of the card's peaks, or those of fitted='fitted.json' (benchci sim fit).
    // speculative: { method: 'draft' | 'eagle', draft_model (method draft:
    // a model card's name or a card), k, acceptance (per draft token, 0..1),
    // draft_tp, draft_vocab (eagle: the head's vocabulary), draft_overhead,
    // seed } turns speculative decoding on.
    // disaggregated: { prefill: { gpu, tp, instances }, decode: { ... },
    // link_gbs, link_latency } serves prefill and decode on separate pools,
    // the KV cache crossing a link of link_gbs GB/s; the decode pool takes
    // the speculation.
    simSpec(model, gpu, tp=null, weights=null, kv_cache=null, gpu_memory_utilization=null, block_size=null,
            max_model_len=null, chunked_prefill=null, max_num_seqs=null, max_batched_tokens=null,
            memory_efficiency=null, compute_efficiency=null, step_overhead=null, fitted=null, faults=null,
            speculative=null, disaggregated=null, engine=null)::
      local o = std.prune({ max_num_seqs: max_num_seqs, max_batched_tokens: max_batched_tokens });
      {
        kind: 'sim',
        spec: std.prune({
          model: model, gpu: gpu, tp: tp, weights: weights, kv_cache: kv_cache,
          gpu_memory_utilization: gpu_memory_utilization, block_size: block_size, max_model_len: max_model_len,
          chunked_prefill: chunked_prefill, memory_efficiency: memory_efficiency,
          compute_efficiency: compute_efficiency, step_overhead: step_overhead, fitted: fitted,
          speculative: speculative, disaggregated: disaggregated, engine: engine,
        }),
        [if std.length(o) > 0 then 'sim']: o,
        [if faults != null then 'faults']: faults,
      },
    // url targets a running OpenAI-compatible server.
    // proxy (url and launch targets) puts benchci's fault proxy in front
    // of the server: { latency, rate_429, rate_503, retry_after,
    // reset_rate, stall_rate, stall, slow_first_byte, seed }.
    url(url, model=null, api_key_env=null, proxy=null):: { kind: 'url', url: url, model: model, api_key_env: api_key_env, proxy: proxy },
    // launch starts the server from its command line (the serving config
    // the pull request changes), waits until `health` answers 2xx, and
    // always stops it: SIGTERM, then SIGKILL after stop_grace, on errors
    // and Ctrl-C too. Its output goes to results/<suite>.server.log.
    launch(command, url, model=null, env=null, dir=null, health='/v1/models', start_timeout='10m',
           stop_grace='30s', warmup_requests=null, per='suite', api_key_env=null, proxy=null):: {
      kind: 'launch',
      url: url,
      model: model,
      api_key_env: api_key_env,
      proxy: proxy,
      launch: {
        command: command, env: env, dir: dir, health: health, start_timeout: start_timeout,
        stop_grace: stop_grace, warmup_requests: warmup_requests, per: per,
      },
    },
  },

  // variants: configurations compared on one workload, sweep and SLOs.
  // A suite's `variants` maps a name to { target, request: { model,
  // extra }, cost, sim }; what a variant leaves out is the suite's.
  // order: 'interleaved' runs them point by point, round robin, instead of
  // one whole sweep after another.
  variants:: {
    // cross builds variants as the cross product of options, the way a
    // config space is thought of:
    //   b.variants.cross({ quant: ['bf16', 'fp8'], seqs: [128, 256] },
    //                    function(o) { target: ... o.quant ... },
    //                    name='%(quant)s-seqs%(seqs)s')
    // name is a std.format pattern over the options (default: the values
    // in option order, joined by '-'); make(o) returns the variant.
    cross(options, make, name=null)::
      local keys = std.objectFields(options);
      local combos = std.foldl(function(acc, k) [a { [k]: v } for a in acc for v in options[k]], keys, [{}]);
      local nameOf(o) = if name == null then std.join('-', [std.toString(o[k]) for k in keys]) else std.format(name, o);
      local names = [nameOf(o) for o in combos];
      local dups = [n for n in std.set(names) if std.count(names, n) > 1];
      if std.length(dups) > 0 then
        error 'b.variants.cross: the name pattern makes %s more than once; name every option in it' % std.join(', ', dups)
      else { [nameOf(o)]: make(o) for o in combos },
  },

  // telemetry: hardware exporters scraped through every point, for a
  // suite's telemetry: [...]. dcgm is NVIDIA's DCGM exporter (port 9400),
  // amd AMD's device-metrics-exporter (port 5000): GPU utilization, memory
  // used, power and energy per point, and the measured power prices the
  // cost's energy instead of cost.gpu's watts. Any endpoint serving either
  // exporter's metric names gives these figures.
  // gauges keeps further metrics (e.g. node_exporter's 'node_load1') as
  // NAME_mean and NAME_peak.
  telemetry:: {
    dcgm(url, name='dcgm', interval=null, gauges=null):: std.prune({ name: name, url: url, interval: interval, gauges: gauges }),
    amd(url, name='amd', interval=null, gauges=null):: std.prune({ name: name, url: url, interval: interval, gauges: gauges }),
    prometheus(name, url, gauges, interval=null):: std.prune({ name: name, url: url, interval: interval, gauges: gauges }),
  },

  // retry: a client's retry policy, for request: { retry: b.retry(...) }.
  // on: '429', '5xx' (or a status such as '503'), 'timeout', 'connect',
  // 'stream_cut'. Waits grow from initial by multiplier up to max, within
  // ±jitter; a Retry-After longer than the wait is honoured (up to 1 min),
  // and no wait passes the request's timeout. budget caps retries at that
  // share of the requests sent, above 0 (null: no cap). Adds the
  // user-perceived ttft_user and e2e_user, and retry_amplification.
  retry(on=['429', '5xx'], max_attempts=3, initial='100ms', max='10s', multiplier=2, jitter=0.2,
        respect_retry_after=true, budget=null):: {
    on: on, max_attempts: max_attempts, respect_retry_after: respect_retry_after, budget: budget,
    backoff: { initial: initial, max: max, multiplier: multiplier, jitter: jitter },
  },

  // dist: token-length distributions. min/max clip samples.
  dist:: {
    fixed(value):: { kind: 'fixed', value: value },
    uniform(min, max):: { kind: 'uniform', min: min, max: max },
    normal(mean, stddev, min=null, max=null):: { kind: 'normal', mean: mean, stddev: stddev, min: min, max: max },
    lognormal(median, sigma, min=null, max=null):: { kind: 'lognormal', median: median, sigma: sigma, min: min, max: max },
    // empirical: draw from values (weighted: a histogram of bins).
    empirical(values, weights=null):: { kind: 'empirical', values: values, weights: weights },
    // file: draw from recorded lengths, the numeric `field` of every line
    // of a JSONL file (e.g. a trace or a gateway log), relative to the suite.
    file(path, field, min=null, max=null):: { kind: 'file', path: path, field: field, min: min, max: max },
  },

  // arrival: how open-loop requests are spaced. The sweep's rate is the
  // mean rate (for bursts, the rate between spikes).
  arrival:: {
    poisson():: { kind: 'poisson' },
    constant():: { kind: 'constant' },
    // gamma: vLLM's --burstiness; 1 is Poisson, <1 burstier, >1 more regular.
    gamma(burstiness):: { kind: 'gamma', burstiness: burstiness },
    // bursts: Poisson, with the rate multiplied by factor during the last
    // `on` of every `period`.
    bursts(factor, on, period):: { kind: 'bursts', factor: factor, on: on, period: period },
    // trace: replay a JSONL trace ({"timestamp": s, "input_tokens": n,
    // "output_tokens": m} per line, path relative to the suite), rescaled
    // to each point's rate; its lengths replace the length distributions.
    // Lines may carry "hash_ids" (block ids of the prompt's leading
    // blocks, block_tokens each): requests whose ids begin alike share
    // those tokens, so the server's prefix cache sees the trace's reuse.
    // Mooncake's format ("timestamp" in ms, "input_length",
    // "output_length", "hash_ids") is read as it is.
    trace(path, block_tokens=null):: { kind: 'trace', path: path } + (if block_tokens == null then {} else { block_tokens: block_tokens }),
  },

  // prompts: where prompt text comes from. calibrate=true first asks the
  // target how many tokens it counts for known prompts (tokenizer and chat
  // template), so that synthetic prompts hit input_tokens on that server.
  // cancel: users who abandon their stream: `share` of the requests
  // close it once `after_tokens` (a distribution) output tokens came.
  // Counted as `abandoned`, never as errors: workload.cancel.
  // Or after a time: after_ms, a distribution of milliseconds from the
  // send (b.cancel(0.1, after_ms=b.dist.lognormal(median=3000, sigma=0.5))).
  cancel(share, after_tokens=null, after_ms=null):: { share: share, after_tokens: after_tokens, after_ms: after_ms },

  prompts:: {
    // salt='run' draws fresh text for each run (lengths kept), so a
    // long-running server's prefix cache cannot serve a run from the
    // last one's prompts; a string is a fixed salt. Default: the same
    // text every run. Not for datasets, whose text is their own.
    synthetic(calibrate=true, salt=null):: { kind: 'synthetic', calibrate: calibrate } + $.prompts.salted(salt),
    // shared_prefix: each request opens with one of `prefixes` system
    // prompts of `prefix_tokens` tokens, then input_tokens of its own, to
    // exercise prefix caching (agents, RAG with fixed instructions).
    shared_prefix(prefixes, prefix_tokens, calibrate=true, salt=null)::
      { kind: 'shared_prefix', prefixes: prefixes, prefix_tokens: prefix_tokens, calibrate: calibrate } + $.prompts.salted(salt),
    // multi_turn: each arrival starts a chat session of `turns` requests;
    // each turn goes think_time after the previous reply and carries the
    // whole history, so prompts grow turn by turn.
    multi_turn(turns, think_time='5s', calibrate=true, salt=null)::
      { kind: 'multi_turn', turns: turns, think_time: think_time, calibrate: calibrate } + $.prompts.salted(salt),
    // sharegpt: a ShareGPT JSON file (first human turn as the prompt, the
    // first reply's length as the output length), relative to the suite.
    sharegpt(path):: { kind: 'sharegpt', path: path, calibrate: false },
    // jsonl: {"prompt": "...", "system": "...", "output_tokens": n} per line.
    jsonl(path):: { kind: 'jsonl', path: path, calibrate: false },
    salted(salt):: if salt == null then {} else { salt: salt },
  },

  // sweep: the load points. duration is each point's measured window;
  // warmup runs before it and is excluded from the figures.
  sweep:: {
    // ramp: rise from `from` req/s to each point's rate over `over` from
    // the point's start, 'linear' or 'exponential' (vLLM's
    // --ramp-up-strategy); the ramp usually spans the warm-up.
    // stop_saturated: end a point early, marked saturated, when the
    // server's queue grows without bound (default: off for rate sweeps,
    // on for capacity searches).
    rates(rates, duration='30s', warmup='5s', requests=null, max_concurrency=null, ramp=null, stop_saturated=null):: {
      kind: 'rate', rates: rates, duration: duration, warmup: warmup, requests: requests, max_concurrency: max_concurrency,
      ramp: ramp, stop_saturated: stop_saturated,
    },
    ramp:: {
      linear(from, over):: { kind: 'linear', from: from, over: over },
      exponential(from, over):: { kind: 'exponential', from: from, over: over },
    },
    concurrency(levels, duration='30s', warmup='5s', requests=null):: {
      kind: 'concurrency', concurrencies: levels, duration: duration, warmup: warmup, requests: requests,
    },
    // capacity: find the highest request rate in [min, max] at which every
    // SLO holds, by geometric bisection until the bracket is within
    // `precision` (a fraction). Each probe is a point of `duration`.
    // auto: as GuideLLM's sweep, measure the synchronous throughput (one
    // request at a time) and the maximum (max_concurrency in flight), then
    // run `points` rates evenly spread between them.
    auto(points=8, duration='30s', warmup='5s', max_concurrency=256):: {
      kind: 'auto', points: points, duration: duration, warmup: warmup, max_concurrency: max_concurrency,
    },
    // throughput: send `requests` all at once (vLLM's --request-rate inf:
    // the offline throughput test), at most max_concurrency in flight, and
    // measure until the last one ends. One point, labelled rate=inf.
    throughput(requests, max_concurrency=null):: {
      kind: 'throughput', requests: requests, max_concurrency: max_concurrency, duration: '0s', warmup: '0s',
    },
    capacity(min, max, precision=0.05, duration='30s', warmup='5s', max_concurrency=null, stop_saturated=null):: {
      kind: 'capacity', min: min, max: max, precision: precision, duration: duration, warmup: warmup,
      max_concurrency: max_concurrency, stop_saturated: stop_saturated,
    },
  },

  // slo: assertions; at_rate / at_concurrency pin one to one point.
  // BEGIN generated from the metric catalogue (go test ./framework/metric -update)
  // slo.p50/p90/p95/p99/p999/mean/max(metric, op, threshold): metric is ttft,
  // ttft_answer, tpot, itl, e2e, ttft_sched, e2e_sched, ttft_user, e2e_user,
  // ttft_tool; the threshold is a duration ('500ms').
  // slo.rate(metric, op, threshold): metric is request_throughput,
  // output_throughput, total_throughput, goodput, error_rate,
  // structured_correct_rate, retry_amplification, energy_per_output_token; a
  // throughput is per second, error_rate a fraction (0.01) or a percentage
  // ('1%'), other rates a number.
  // tolerance: { default: '10%', <key>: '5%' or '20ms' }, where a key is one of
  // ttft.p50, ttft.p90, ttft.p99, tpot.p50, tpot.p99, itl.p50, itl.p99,
  // e2e.p50, e2e.p99, request_throughput, output_throughput, goodput,
  // error_rate, cost, energy_per_output_token, ttft_user.p99, e2e_user.p99,
  // retry_amplification, structured_correct_rate, capacity, or a latency metric
  // alone (ttft) for all its statistics. 'off' shows a figure without gating it
  // (a P99 of points too short to bound one).
  // END generated
  slo:: {
    local latency(stat) = function(metric, op, threshold, at_rate=null, at_concurrency=null)
      { metric: metric, stat: stat, op: op, threshold: threshold, at_rate: at_rate, at_concurrency: at_concurrency },
    p50:: latency('p50'),
    p90:: latency('p90'),
    p95:: latency('p95'),
    p99:: latency('p99'),
    p999:: latency('p99.9'),
    mean:: latency('mean'),
    max:: latency('max'),
    // rate: goodput needs the suite's per-request SLOs:
    // goodput: { ttft: '500ms', tpot: '50ms' }.
    rate(metric, op, threshold, at_rate=null, at_concurrency=null)::
      { metric: metric, op: op, threshold: threshold, at_rate: at_rate, at_concurrency: at_concurrency },
  },

  cost:: {
    gpu(usd_per_hour, gpus=1, watts=null, usd_per_kwh=null, ops_overhead_pct=null)::
      { usd_per_hour: usd_per_hour, gpus: gpus, watts: watts, usd_per_kwh: usd_per_kwh, ops_overhead_pct: ops_overhead_pct },
  },
}
