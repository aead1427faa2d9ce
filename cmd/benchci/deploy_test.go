package main

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"
)

const deployDir = "../../deploy/kubernetes"

// decodeStrict reads a manifest into the real API type, refusing any
// field the type does not have (a typo Kubernetes would drop silently).
func decodeStrict(t *testing.T, name string, into any) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(deployDir, name))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.UnmarshalStrict(data, into); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
}

// expand replaces $(VAR) references as the kubelet does in args.
func expand(args []string, env map[string]string) []string {
	out := make([]string, len(args))
	for i, a := range args {
		for k, v := range env {
			a = strings.ReplaceAll(a, "$("+k+")", v)
		}
		out[i] = a
	}
	return out
}

// The manifests decode strictly into batch/v1 and core/v1, agree with
// each other (N, names, keys, mounts), and their commands are ones this
// benchci accepts: the flags parse, and the suite they run validates.
func TestKubernetesManifests(t *testing.T) {
	t.Parallel()
	var job batchv1.Job
	decodeStrict(t, "job.yaml", &job)
	var merge batchv1.Job
	decodeStrict(t, "merge-job.yaml", &merge)
	var pvc corev1.PersistentVolumeClaim
	decodeStrict(t, "pvc.yaml", &pvc)
	var kust struct {
		APIVersion, Kind   string
		Resources          []string
		Images             []struct{ Name, NewTag string }
		ConfigMapGenerator []struct {
			Name     string
			Files    []string
			Literals []string
		} `json:"configMapGenerator"`
		GeneratorOptions map[string]any `json:"generatorOptions"`
	}
	decodeStrict(t, "kustomization.yaml", &kust)

	spec := job.Spec
	if spec.CompletionMode == nil || *spec.CompletionMode != batchv1.IndexedCompletion {
		t.Error("the shards' Job is not Indexed: pods would not get JOB_COMPLETION_INDEX")
	}
	if spec.Completions == nil || spec.Parallelism == nil || *spec.Completions != *spec.Parallelism {
		t.Error("completions and parallelism differ: the shards would not run at once")
	}
	c := job.Spec.Template.Spec.Containers[0]
	env := map[string]string{}
	literals := map[string]string{}
	for _, g := range kust.ConfigMapGenerator {
		for _, l := range g.Literals {
			k, v, _ := strings.Cut(l, "=")
			literals[g.Name+"/"+k] = v
		}
	}
	for _, e := range c.Env {
		ref := e.ValueFrom.ConfigMapKeyRef
		v, ok := literals[ref.Name+"/"+ref.Key]
		if !ok {
			t.Errorf("env %s reads %s/%s, which the kustomization does not make", e.Name, ref.Name, ref.Key)
		}
		env[e.Name] = v
	}
	args := expand(c.Args, env)
	cmd := runCmd()
	if err := cmd.ParseFlags(args[1:]); err != nil || args[0] != "run" {
		t.Fatalf("job args %q: %v", args, err)
	}
	n := *spec.Completions
	sh, err := parseShard(cmd.Flag("shard").Value.String(), "0")
	if err != nil || sh.Count != int(n) {
		t.Errorf("--shard %s for %d completions: %v", cmd.Flag("shard").Value, n, err)
	}
	if _, err := parseShard(cmd.Flag("shard").Value.String(), "3"); err != nil {
		t.Errorf("the last pod's index: %v", err)
	}
	mounts := map[string]string{}
	for _, m := range c.VolumeMounts {
		mounts[m.Name] = m.MountPath
	}
	vols := map[string]corev1.Volume{}
	for _, v := range job.Spec.Template.Spec.Volumes {
		vols[v.Name] = v
	}
	if vols["results"].PersistentVolumeClaim == nil || vols["results"].PersistentVolumeClaim.ClaimName != pvc.Name ||
		cmd.Flag("results").Value.String() != mounts["results"] {
		t.Errorf("results go to %s, mounted %v from %+v; the claim is %s", cmd.Flag("results").Value, mounts, vols["results"], pvc.Name)
	}
	suitePath := cmd.Flags().Args()[0]
	cm := vols["suites"].ConfigMap
	if cm == nil || filepath.Dir(suitePath) != mounts["suites"] || !slices.ContainsFunc(kust.ConfigMapGenerator, func(g struct {
		Name     string
		Files    []string
		Literals []string
	}) bool {
		return g.Name == cm.Name && slices.Contains(g.Files, filepath.Base(suitePath))
	}) {
		t.Errorf("the suite %s is not in the generated ConfigMap mounted at %s", suitePath, mounts["suites"])
	}
	// The suite itself, as the pod evaluates it.
	code, out, errOut := runCLI(t, context.Background(), "validate", "--ext-str", "target="+env["BENCHCI_TARGET"], filepath.Join(deployDir, filepath.Base(suitePath)))
	if code != 0 {
		t.Errorf("the cluster suite does not validate:\n%s%s", out, errOut)
	}
	for _, r := range kust.Resources {
		if _, err := os.Stat(filepath.Join(deployDir, r)); err != nil {
			t.Errorf("kustomization resource: %v", err)
		}
	}

	mc := merge.Spec.Template.Spec.Containers[0]
	mcmd := mergeCmd()
	if err := mcmd.ParseFlags(mc.Args[1:]); err != nil || mc.Args[0] != "merge" || mcmd.Flags().Args()[0] != mounts["results"] {
		t.Errorf("merge args %q: %v", mc.Args, err)
	}
	if mv := merge.Spec.Template.Spec.Volumes; len(mv) != 1 || mv[0].PersistentVolumeClaim.ClaimName != pvc.Name {
		t.Errorf("the merge reads %+v, not the shards' claim", mv)
	}
}
