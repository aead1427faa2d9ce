// The suite every shard runs: the load at the gateway, split over the
// Job's pods. The target's URL comes from the benchci-run ConfigMap
// (BENCHCI_TARGET in the pod), so one suite serves every cluster.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'cluster-load',
  target: b.target.url(std.extVar('target'), model='meta-llama/Llama-3.1-8B-Instruct'),
  workload: {
    input_tokens: b.dist.lognormal(median=512, sigma=0.6, max=4096),
    output_tokens: b.dist.lognormal(median=256, sigma=0.5, max=1024),
  },
  sweep: b.sweep.rates([40, 80, 160], duration='120s', warmup='20s'),
  slos: [b.slo.p99('ttft', '<', '2s', at_rate=80)],
}
