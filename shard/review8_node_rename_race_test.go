package shard_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview8NodeRenameWhileCommandsRun renames a Router's nodes again and
// again while commands, a pipeline and Stats run: every command succeeds,
// and each new name shows in Stats (run with -race: a rename must not
// race the command path's lock-free reads of the node).
func TestReview8NodeRenameWhileCommandsRun(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	rt := &renamingRouter{}
	for _, s := range servers {
		rt.addrs = append(rt.addrs, s.Addr)
	}
	first := "gen0-"
	rt.prefix.Store(&first)
	cfg := ringConfig(servers)
	cfg.Shards, cfg.Router = nil, rt
	c := newClient(t, cfg)

	stop := make(chan struct{})
	errs := make(chan error, 8)
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				k := fmt.Sprintf("rename:%d:%d", w, i%50)
				var err error
				if w%2 == 0 {
					_, err = c.Do(ctx, "SET", k, "v")
				} else {
					p := c.Pipeline()
					p.Send("SET", k, "v")
					p.Send("GET", k)
					_, err = p.Exec(ctx)
				}
				_ = c.Stats()
				if err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	for gen := 1; gen <= 10; gen++ {
		p := fmt.Sprintf("gen%d-", gen)
		rt.prefix.Store(&p)
		want := p + "1"
		require.Eventually(t, func() bool {
			return statsNames(c)[servers[0].Addr] == want
		}, 10*time.Second, 5*time.Millisecond, "Stats names %s %s", servers[0].Addr, want)
	}
	close(stop)
	wg.Wait()
	close(errs)
	for err := range errs {
		assert.NoError(t, err)
	}
}
