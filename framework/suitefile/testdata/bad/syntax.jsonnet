local b = import 'benchci.libsonnet';
b.suite {
  name: 'syntax'
  target: b.target.sim('tiny'),
}
