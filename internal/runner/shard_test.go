package runner

import (
	"strings"
	"testing"

	"github.com/benchci/benchci/framework/suite"
	"github.com/benchci/benchci/internal/loadgen"
)

// A run is split only where the shards can share it: one server they all
// reach, and points fixed in advance.
func TestShardable(t *testing.T) {
	sh := loadgen.Shard{Index: 0, Count: 4}
	for _, c := range []struct {
		name string
		s    suite.Suite
		want string
	}{
		{"sim", suite.Suite{Target: suite.Target{Kind: "sim"}, Sweep: suite.Sweep{Kind: suite.SweepRate}}, "runs inside each shard"},
		{"capacity", suite.Suite{Target: suite.Target{Kind: "url"}, Sweep: suite.Sweep{Kind: suite.SweepCapacity}}, "chooses each point"},
		{"too few workers", suite.Suite{Target: suite.Target{Kind: "url"}, Sweep: suite.Sweep{Kind: suite.SweepConcurrency, Concurrencies: []int{8, 2}}}, "concurrency 2 cannot be split over 4"},
		{"rates", suite.Suite{Target: suite.Target{Kind: "url"}, Sweep: suite.Sweep{Kind: suite.SweepRate}}, ""},
	} {
		err := shardable(&c.s, sh)
		if (c.want == "") != (err == nil) || (err != nil && !strings.Contains(err.Error(), c.want)) {
			t.Errorf("%s: %v, want %q", c.name, err, c.want)
		}
	}
	if err := shardable(&suite.Suite{Target: suite.Target{Kind: "sim"}}, loadgen.Shard{}); err != nil {
		t.Errorf("an unsharded run: %v", err)
	}
}
