// agents-prefix: agent traffic, where every call repeats one of a few long
// system prompts (tool definitions, instructions) before a short task.
// Prefix caching should make TTFT far lower than the prompt length implies;
// a config change that disables it shows up here first.
local b = import 'benchci.libsonnet';

b.suite {
  name: 'agents-prefix',
  description: '4 shared system prompts of 2k tokens, short tasks, closed loop',
  target: b.target.sim('llama3-8b-h100'),
  api: 'chat',
  workload: {
    input_tokens: b.dist.uniform(50, 300),
    output_tokens: b.dist.uniform(32, 200),
    prompts: b.prompts.shared_prefix(prefixes=4, prefix_tokens=2000),
    seed: 3,
  },
  sweep: b.sweep.concurrency([1, 8, 32, 64], duration='30s', warmup='5s'),
  slos: [b.slo.p90('ttft', '<', '300ms', at_concurrency=8)],
  cost: b.cost.gpu(usd_per_hour=2.49, gpus=1),
}
