// A salt on a dataset, whose text cannot change without its lengths.
local b = import 'benchci.libsonnet';
b.suite {
  name: 'salt',
  target: b.target.sim('tiny'),
  workload: { output_tokens: b.dist.fixed(5), prompts: b.prompts.jsonl('prompts.jsonl') + { salt: 'run' } },
  sweep: b.sweep.rates([4], duration='10s'),
}
