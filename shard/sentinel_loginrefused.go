package shard

import (
	"context"
	"sync"
)

// loginRefusals counts, over one query of the Sentinels, how many times
// each master they named failed its check because it refused the
// client's credentials (an authentication failure, pool.ErrAuth). A
// master named so by a majority of the Sentinels is installed though ROLE
// could not confirm it (query), as a +switch-master to it is (switched):
// keeping the master in use instead would send the writes to the master
// the Sentinels failed over from, which takes them for as long as they
// cannot make it a replica and loses them all when they do. Installed,
// each command fails at once with the authentication error, the cause,
// and nothing is written anywhere.
type loginRefusals struct {
	mu sync.Mutex
	n  map[string]int // by the address as a Sentinel named it
}

// rank wraps a check of the Sentinels' answers (RankedMasterAddr's),
// counting its authentication failures. Each Sentinel's answer is checked
// at most once in a query.
func (r *loginRefusals) rank(check func(ctx context.Context, addr string) (int, error)) func(ctx context.Context, addr string) (int, error) {
	return func(ctx context.Context, addr string) (int, error) {
		n, err := check(ctx, addr)
		if isAuthFailure(err) {
			r.mu.Lock()
			if r.n == nil {
				r.n = map[string]int{}
			}
			r.n[addr]++
			r.mu.Unlock()
		}
		return n, err
	}
}

// majority returns the master that refused the client's credentials as
// named by more than half of the sentinels Sentinels, if one was.
func (r *loginRefusals) majority(sentinels int) (string, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for a, n := range r.n {
		if n > sentinels/2 {
			return a, true
		}
	}
	return "", false
}
