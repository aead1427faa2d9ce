package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"text/template"

	"github.com/spf13/cobra"

	"github.com/benchci/benchci/internal/didyoumean"
	"github.com/benchci/benchci/internal/layout"
	"github.com/benchci/benchci/internal/safefile"
)

// starter is what init knows of an engine: how to start it, where it
// listens, and a model name to start from.
type starter struct {
	// Launch is the server's command line; empty for a server already
	// running at URL (a url target).
	Launch string
	URL    string
	Model  string
	// Note is a comment on the target for the suite's reader.
	Note string
}

// starters are the engines init writes a suite for. The launch lines are
// each engine's documented server command with its default port.
var starters = map[string]starter{
	"vllm": {Launch: "vllm serve {{.Model}} --host 127.0.0.1 --port 8000", URL: "http://127.0.0.1:8000", Model: "meta-llama/Llama-3.1-8B-Instruct",
		Note: "vLLM: the serving flags (--max-num-seqs, --quantization, ...) belong on this line, so the PR that changes them is the PR that is measured."},
	"sglang": {Launch: "python3 -m sglang.launch_server --model-path {{.Model}} --host 127.0.0.1 --port 30000", URL: "http://127.0.0.1:30000", Model: "meta-llama/Llama-3.1-8B-Instruct",
		Note: "SGLang: its flags (--mem-fraction-static, --tp, ...) belong on this line."},
	"tgi": {Launch: "text-generation-launcher --model-id {{.Model}} --hostname 127.0.0.1 --port 8080", URL: "http://127.0.0.1:8080", Model: "meta-llama/Llama-3.1-8B-Instruct",
		Note: "TGI has no ignore_eos: outputs may stop before the lengths asked for, and benchci says so."},
	"llama.cpp": {Launch: "llama-server -m {{.Model}} --host 127.0.0.1 --port 8080 --parallel 4", URL: "http://127.0.0.1:8080", Model: "model.gguf",
		Note: "llama.cpp: --parallel bounds concurrency (one slot per request)."},
	"ollama": {URL: "http://127.0.0.1:11434", Model: "llama3.2",
		Note: "Ollama: start `ollama serve` and `ollama pull` the model first; prompts are truncated to its num_ctx (2048 by default)."},
	"url": {URL: "http://127.0.0.1:8000", Model: "my-model",
		Note: "A server already running (a staging endpoint, a gateway): set --url and --model; its key is read from $OPENAI_API_KEY and masked in every output."},
}

var suiteName = regexp.MustCompile(`^[a-z0-9][a-z0-9_-]{0,62}$`)

const suiteTemplate = `// {{.Name}}: a first suite for {{.Engine}}, written by benchci init.
// {{.Note}}
//
// Try it on the embedded simulator first (no GPU, no server):
//   benchci run --tla-str target=sim {{.Path}}
// then against the real server:
//   benchci run {{.Path}}
local b = import 'benchci.libsonnet';

function(target='engine')
  b.suite {
    name: {{.NameString}},
    description: {{.Description}},
    target: if target == 'sim' then b.target.sim('llama3-8b-h100')
    else {{.Target}},
    api: 'chat',
    workload: {
      // State your real traffic's lengths: these are a starting point.
      input_tokens: b.dist.lognormal(median=512, sigma=0.5, min=16, max=4096),
      output_tokens: b.dist.lognormal(median=200, sigma=0.5, min=8, max=1024),
      arrival: b.arrival.poisson(),
      seed: 1,
    },
    // Four trials per rate: the gate then judges each figure by a rank
    // test across trials, so a P99 can fail it however short the points.
    trials: 4,
    sweep: b.sweep.rates([2, 4], duration='30s', warmup='5s'),
    slos: [
      b.slo.p90('ttft', '<', '1s', at_rate=4),
      b.slo.p90('tpot', '<', '100ms', at_rate=4),
      b.slo.rate('error_rate', '<=', 0.01),
    ],
    tolerance: { default: '10%' },
  }
`

const workflowTemplate = `# Gates every pull request on {{.Path}}: runs it, compares it with
# {{.Baseline}}, comments on the pull request and fails the check on a
# regression or a failed SLO. Written by benchci init.
{{- if .Launch}}
# The suite launches {{.Engine}} itself: run this job where the engine and
# its GPU are (a self-hosted runner), and only for pull
# requests from this repository: a self-hosted runner must never run forks'
# code.
{{- end}}
name: benchci-{{.Name}}
on:
  pull_request:
permissions:
  contents: read
  pull-requests: write
concurrency:
  group: benchci-{{.Name}}-${{"{{"}} github.ref {{"}}"}}
  cancel-in-progress: true
jobs:
  bench:
{{- if .Launch}}
    if: github.event.pull_request.head.repo.full_name == github.repository
    # Add your GPU runner's own label here (and list it in
    # .github/actionlint.yaml if you lint workflows). A runner runs one
    # job at a time: register one runner per GPU (or per machine) so that
    # two benchmarks never share one. The concurrency group above only
    # replaces a branch's older run with its newer one.
    runs-on: [self-hosted, linux, x64]
{{- else}}
    runs-on: ubuntu-latest
{{- end}}
    timeout-minutes: 60
    steps:
      - uses: actions/checkout@v4
        with:
          # The base's history too: the gate reads its rules from the base.
          fetch-depth: 0
      - name: Benchmark and gate
        id: gate
        uses: benchci/benchci@v1
        with:
          suites: {{.Path}}
          timeout: 45m
{{- if .APIKey}}
        env:
          OPENAI_API_KEY: ${{"{{"}} secrets.OPENAI_API_KEY {{"}}"}}
{{- end}}
`

// initOptions are init's flags.
type initOptions struct {
	name, model, url, dir string
	force                 bool
}

func initCmd() *cobra.Command {
	var o initOptions
	engines := starterNames()
	cmd := &cobra.Command{
		Use:   "init ENGINE",
		Short: "Write a first suite and the workflow that gates on it, for an engine (" + strings.Join(engines, ", ") + ")",
		Long: `init writes what a team needs to gate its own serving config:
suites/<name>.jsonnet, a suite for the engine (its launch line where
benchci can start it, a chat workload, two rates, SLOs, a tolerance), and
.github/workflows/benchci-<name>.yml, the workflow that runs it on every
pull request and gates on the baseline. It prints the steps to a first
baseline. The suite runs on the embedded simulator with --tla-str
target=sim, to try it before the real server is at hand.

Engines: ` + strings.Join(engines, ", ") + `. Nothing is overwritten unless --force, and
nothing is written through a symbolic link (a suite, or suites/, that is one
is refused).`,
		Example: `  benchci init vllm --model meta-llama/Llama-3.1-8B-Instruct
  benchci init url --url https://staging.example.com --model my-model --name staging`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runInit(cmd, o, args[0])
		},
	}
	cmd.Flags().StringVar(&o.name, "name", "", "the suite's name (default: the engine's)")
	cmd.Flags().StringVar(&o.model, "model", "", "the model the server serves (default: one the engine is commonly run with)")
	cmd.Flags().StringVar(&o.url, "url", "", "where the server listens (default: the engine's usual port on 127.0.0.1)")
	cmd.Flags().StringVar(&o.dir, "dir", ".", "the repository to write into")
	cmd.Flags().BoolVar(&o.force, "force", false, "overwrite files that exist")
	return cmd
}

// starterNames are the engines init knows, sorted.
func starterNames() []string {
	return slices.Sorted(func(yield func(string) bool) {
		for k := range starters {
			if !yield(k) {
				return
			}
		}
	})
}

// runInit writes the engine's suite and workflow into --dir and prints
// the steps to a first baseline.
func runInit(cmd *cobra.Command, o initOptions, engine string) error {
	st, ok := starters[engine]
	if !ok {
		engines := starterNames()
		return &exitError{exitUsage, fmt.Errorf("init: unknown engine %q%s (known: %s)", engine, didyoumean.Hint(engine, engines), strings.Join(engines, ", "))}
	}
	name := o.name
	if name == "" {
		name = strings.ReplaceAll(engine, ".", "")
	}
	if !suiteName.MatchString(name) {
		return &exitError{exitUsage, fmt.Errorf("init: --name %q: use lower-case letters, digits, '-' and '_'", name)}
	}
	if o.model != "" {
		st.Model = o.model
	}
	if o.url != "" {
		st.URL = o.url
	}
	suitePath := filepath.ToSlash(filepath.Join("suites", name+".jsonnet"))
	workflowPath := filepath.ToSlash(filepath.Join(".github", "workflows", "benchci-"+name+".yml"))
	files, err := initFiles(engine, name, suitePath, st)
	if err != nil {
		return err
	}
	if err := writeInitFiles(o.dir, o.force, []initFile{{suitePath, files.suite}, {workflowPath, files.workflow}}); err != nil {
		return err
	}
	results := layout.Results(layout.DefaultResults).Result(name)
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "wrote %s and %s\n\nnext:\n", suitePath, workflowPath)
	fmt.Fprintf(w, "  1. try it on the simulator:     benchci run --tla-str target=sim %s\n", suitePath)
	fmt.Fprintf(w, "  2. run it against %s:%s benchci run %s\n", engine, strings.Repeat(" ", max(1, 12-len(engine))), suitePath)
	fmt.Fprintf(w, "  3. make that run the baseline:  benchci baseline update %s\n", results)
	fmt.Fprintf(w, "  4. commit the suite, %s and the workflow; every pull request is gated from then on\n", layout.Baselines(layout.DefaultBaselines).Baseline(name))
	return nil
}

// initFile is one file init writes: its path relative to --dir, and its
// contents.
type initFile struct {
	rel  string
	body []byte
}

// writeInitFiles writes files inside dir, following no link there: a
// suites/ directory or a suite that is a link is refused, force or not.
// None is written when one exists and force is false.
func writeInitFiles(dir string, force bool, files []initFile) error {
	out, err := safefile.Open(dir)
	if err != nil {
		return err
	}
	defer out.Close()
	for _, f := range files {
		exists, err := out.Exists(f.rel)
		if err != nil {
			return &exitError{exitUsage, fmt.Errorf("init: %w", err)}
		}
		if exists && !force {
			return &exitError{exitUsage, fmt.Errorf("init: %s exists; --force to overwrite it", out.Path(f.rel))}
		}
	}
	for _, f := range files {
		if err := out.WriteFile(f.rel, f.body); err != nil {
			return &exitError{exitUsage, fmt.Errorf("init: %w", err)}
		}
	}
	return nil
}

type initOutput struct{ suite, workflow []byte }

// jsonnetString is s as a Jsonnet string literal: every value init
// writes into a suite goes through it. JSON's double-quoted strings are
// Jsonnet's (the same escapes, \uXXXX included), and a quote, a
// backslash or a line break in s is escaped, so nothing in s can end the
// string, open a ||| block or start a comment.
func jsonnetString(s string) string {
	b, err := json.Marshal(s)
	if err != nil {
		panic(err) // a string always marshals
	}
	return string(b)
}

// initFiles renders the suite and the workflow for an engine.
func initFiles(engine, name, suitePath string, st starter) (initOutput, error) {
	q := jsonnetString
	target := fmt.Sprintf("b.target.url(%s, model=%s)", q(st.URL), q(st.Model))
	apiKey := engine == "url"
	switch {
	case st.Launch != "":
		// Each word of the launch line is rendered on its own, so that a
		// model name with spaces stays one argument.
		var argv []string
		for _, word := range strings.Fields(st.Launch) {
			var a bytes.Buffer
			if err := template.Must(template.New("launch").Parse(word)).Execute(&a, st); err != nil {
				return initOutput{}, err
			}
			argv = append(argv, q(a.String()))
		}
		target = fmt.Sprintf("b.target.launch([%s], %s, model=%s)", strings.Join(argv, ", "), q(st.URL), q(st.Model))
	case apiKey:
		target = fmt.Sprintf("b.target.url(%s, model=%s, api_key_env='OPENAI_API_KEY')", q(st.URL), q(st.Model))
	}
	data := map[string]any{
		"Name": name, "Engine": engine, "Note": st.Note, "Path": suitePath, "Target": target,
		"NameString": q(name), "Description": q("Chat traffic on " + engine + " (" + st.Model + "), two rates"),
		"Launch": st.Launch != "", "APIKey": apiKey, "Baseline": layout.Baselines(layout.DefaultBaselines).Baseline(name),
	}
	var out initOutput
	for _, t := range []struct {
		text string
		dst  *[]byte
	}{{suiteTemplate, &out.suite}, {workflowTemplate, &out.workflow}} {
		var b bytes.Buffer
		if err := template.Must(template.New("init").Parse(t.text)).Execute(&b, data); err != nil {
			return initOutput{}, err
		}
		*t.dst = b.Bytes()
	}
	return out, nil
}
