package layout

import (
	"os"
	"path/filepath"
	"testing"
)

func TestPaths(t *testing.T) {
	r := Results("results")
	vj, vm := r.Variants("chat")
	for _, tc := range []struct{ got, want string }{
		{Name("chat", 0, 1), "chat"},
		{Name("chat", 2, 4), "chat.shard-2-of-4"},
		{r.Result("chat"), "results/chat.json"},
		{r.Result("chat/fp8"), "results/chat/fp8.json"},
		{r.Result(Name("chat", 1, 2)), "results/chat.shard-1-of-2.json"},
		{r.Requests("chat"), "results/chat.requests.jsonl"},
		{r.Slices("chat"), "results/chat.slices"},
		{r.ServerLog("chat"), "results/chat.server.log"},
		{r.ShardPattern("chat", 4), "results/chat.shard-*-of-4.json"},
		{vj, "results/chat.variants.json"},
		{vm, "results/chat.variants.md"},
		{r.VariantsCharts("chat"), "results/chat"},
		{r.Report(), "results/benchci-report.md"},
		{Baselines("baselines").Baseline("chat/fp8"), "baselines/chat/fp8.json"},
		{SuiteOf("results/chat.json"), "chat"},
	} {
		if tc.got != filepath.FromSlash(tc.want) {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	if !IsVariants(vj) || IsVariants(r.Result("chat")) || !IsResult(r.Result("chat")) {
		t.Error("IsVariants/IsResult misread a path")
	}
}

// The shards run writes are the shards merge finds, and nothing else is.
func TestShardsFindsWhatRunWrites(t *testing.T) {
	dir := t.TempDir()
	r := Results(dir)
	want := []string{r.Result(Name("chat", 0, 2)), r.Result(Name("chat", 1, 2))}
	for _, p := range append(want, r.Result("chat"), r.Requests(Name("chat", 0, 2))) {
		if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := r.Shards()
	if err != nil || len(got) != 2 || got[0] != want[0] || got[1] != want[1] {
		t.Errorf("Shards() = %v, %v; want %v", got, err, want)
	}
}
