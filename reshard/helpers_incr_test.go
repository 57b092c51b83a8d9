package reshard_test

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/shardis/shardis/shard"
)

// incrementer is an application that INCRs its counter keys in turn
// through a client until stopped, counting the increments acknowledged.
type incrementer struct {
	stopCh chan struct{}
	once   sync.Once
	wg     sync.WaitGroup
	incrs  []atomic.Int64
	err    atomic.Value // the first failed INCR's error
}

// startIncrementing starts an incrementer of keys on client; the test's
// end stops it if the test has not.
func startIncrementing(t *testing.T, ctx context.Context, client *shard.Client, keys []string) *incrementer {
	in := &incrementer{stopCh: make(chan struct{}), incrs: make([]atomic.Int64, len(keys))}
	in.wg.Add(1)
	go func() {
		defer in.wg.Done()
		for i := 0; ; i++ {
			select {
			case <-in.stopCh:
				return
			default:
			}
			c := i % len(keys)
			if _, err := client.Do(ctx, "INCR", keys[c]); err != nil {
				in.err.CompareAndSwap(nil, err)
				return
			}
			in.incrs[c].Add(1)
		}
	}()
	t.Cleanup(in.stop)
	return in
}

// stop ends the increments and waits for the last one; later calls do
// nothing.
func (in *incrementer) stop() {
	in.once.Do(func() {
		close(in.stopCh)
		in.wg.Wait()
	})
}

// acked returns how many increments of key i were acknowledged.
func (in *incrementer) acked(i int) int64 { return in.incrs[i].Load() }

// failed returns the first failed increment's error, or nil.
func (in *incrementer) failed() any { return in.err.Load() }
