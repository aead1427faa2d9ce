// Package sim is benchci's embedded inference engine: a continuous-batching
// scheduler in the manner of vLLM (admission up to max_num_seqs, a token
// budget per step spent on decodes and then on prefill chunks, prefix
// caching in shared KV blocks) behind an OpenAI-compatible streaming server.
// Its step times follow a Profile's constants, so a benchmark against it
// shows the real shape of a serving curve — throughput rising with load,
// then flattening at the knee while TTFT climbs — on any machine, without
// a GPU. It imports nothing of benchci's suites or results: the suite
// language describes a simulator, this package is one.
package sim
