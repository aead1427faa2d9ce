package loadgen

import (
	"context"
	"sync"
)

// MaxBodyBytes bounds the request bodies the load generator holds at
// once: built ahead of their send, or sent and not yet answered. Common
// workloads hold a few MiB, and images of 1-2 MB a request leave room
// for about a hundred in flight; a trace of 4M-token prompts would
// otherwise build hundreds of 20 MB bodies ahead and run the client out
// of memory (2 GB). Building one such body makes several times its size
// in garbage, which the soft memory limit a load command sets keeps
// collected (main.DefaultLoadMemoryLimit): such a run peaks at 0.42 GB
// resident at this bound, embedded simulator included (1.39 GB without
// the limit).
// Past the bound, building waits for requests to finish, the sends fall
// behind their schedule, and the trial is judged invalid for it: the
// client, not the server, limited the load.
var MaxBodyBytes int64 = 128 << 20

// budget counts bytes held against a limit. One item larger than the
// whole limit is let through when nothing else is held.
type budget struct {
	mu   sync.Mutex
	cond *sync.Cond
	used int64
	max  int64
	// full is signalled whenever take has to wait: a reader filling a
	// buffer ahead of the clock stops there instead of waiting forever.
	full chan struct{}
}

func newBudget(ctx context.Context, max int64) *budget {
	b := &budget{max: max, full: make(chan struct{}, 1)}
	b.cond = sync.NewCond(&b.mu)
	context.AfterFunc(ctx, func() {
		b.mu.Lock()
		b.cond.Broadcast()
		b.mu.Unlock()
	})
	return b
}

// take waits until n bytes fit, or ctx ends (false).
func (b *budget) take(ctx context.Context, n int64) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for b.used > 0 && b.used+n > b.max {
		if ctx.Err() != nil {
			return false
		}
		select {
		case b.full <- struct{}{}:
		default:
		}
		b.cond.Wait()
	}
	b.used += n
	return ctx.Err() == nil
}

// give returns n bytes.
func (b *budget) give(n int64) {
	if b == nil {
		return
	}
	b.mu.Lock()
	b.used -= n
	b.mu.Unlock()
	b.cond.Broadcast()
}

// weight is what an item holds: its body and its later turns'.
func (it *Item) weight() int64 {
	n := int64(len(it.Body))
	for i := range it.FollowUps {
		n += int64(len(it.FollowUps[i].Body))
	}
	return n
}
