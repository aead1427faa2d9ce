// Package layout names where benchci's files live: a run's results and the
// files beside them under the results directory, and the committed
// baselines. run writes these paths, and merge, baseline update, compare,
// history and the gate find them here, so a name spelled one way when
// written is found the same way when read.
package layout

import (
	"fmt"
	"path/filepath"
	"strings"
)

// Default directories, relative to the repository root.
const (
	DefaultResults   = "results"
	DefaultBaselines = "baselines"
	// DefaultReport is the gate's markdown report under the results.
	DefaultReport = "benchci-report.md"
)

const (
	ext          = ".json"
	variantsExt  = ".variants.json"
	variantsMD   = ".variants.md"
	requestsExt  = ".requests.jsonl"
	slicesSuffix = ".slices"
	shardGlob    = "*.shard-*-of-*" + ext
)

// Name is the name a run's files take: the suite's ("chat", or
// "chat/fp8" for a variant), and a shard's place when the run is one of
// several ("chat.shard-0-of-4").
func Name(suite string, shardIndex, shardCount int) string {
	if shardCount > 1 {
		return fmt.Sprintf("%s.shard-%d-of-%d", suite, shardIndex, shardCount)
	}
	return suite
}

// Results is a results directory.
type Results string

// Result is the results file of the run named name: <dir>/<name>.json.
func (d Results) Result(name string) string { return d.join(name, ext) }

// Requests is the run's per-request log: <dir>/<name>.requests.jsonl.
func (d Results) Requests(name string) string { return d.join(name, requestsExt) }

// ServerLog is the launched server's log: <dir>/<name>.server.log.
func (d Results) ServerLog(name string) string { return d.join(name, ".server.log") }

// ShardPattern is the glob of a run's shards, for a command line:
// <dir>/<suite>.shard-*-of-<count>.json.
func (d Results) ShardPattern(suite string, count int) string {
	return d.join(suite, fmt.Sprintf(".shard-*-of-%d%s", count, ext))
}

// Slices is the directory of the run's over-time charts: <dir>/<name>.slices.
func (d Results) Slices(name string) string { return d.join(name, slicesSuffix) }

// Variants are the variants comparison's files, JSON and markdown:
// <dir>/<suite>.variants.json and .md.
func (d Results) Variants(suite string) (jsonPath, markdownPath string) {
	return d.join(suite, variantsExt), d.join(suite, variantsMD)
}

// VariantsCharts is the directory of the variants comparison's charts:
// <dir>/<suite>/.
func (d Results) VariantsCharts(suite string) string { return d.join(suite, "") }

// Report is the gate's markdown report.
func (d Results) Report() string { return filepath.Join(string(d), DefaultReport) }

// Shards lists the shard results in the directory, sorted.
func (d Results) Shards() ([]string, error) {
	return filepath.Glob(filepath.Join(string(d), shardGlob))
}

func (d Results) join(name, suffix string) string {
	return filepath.Join(string(d), filepath.FromSlash(name)+suffix)
}

// IsVariants reports whether path is a variants comparison.
func IsVariants(path string) bool { return strings.HasSuffix(path, variantsExt) }

// SuiteOf is the suite name a results path stands for: its base name
// without .json ("results/chat.json" -> "chat").
func SuiteOf(path string) string { return strings.TrimSuffix(filepath.Base(path), ext) }

// IsResult reports whether path names a results file by its extension.
func IsResult(path string) bool { return strings.HasSuffix(path, ext) }

// Baselines is a baselines directory.
type Baselines string

// Baseline is the committed baseline of a suite (or variant, "chat/fp8"):
// <dir>/<suite>.json.
func (d Baselines) Baseline(suite string) string {
	return filepath.Join(string(d), filepath.FromSlash(suite)+ext)
}
