package shard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// normalClients counts the server's connections named name.
func normalClients(t *testing.T, s *redistest.Server, name string) int {
	t.Helper()
	out, err := s.Do("CLIENT", "LIST", "TYPE", "normal")
	require.NoError(t, err)
	n := 0
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, " name="+name+" ") {
			n++
		}
	}
	return n
}

// With MaxActive and Wait, callers whose contexts end at every stage
// (waiting for a vacancy, dialing, waiting for a reply) give back every
// vacancy and socket: afterwards the pool still serves at once, the
// server sees no more than MaxActive connections of the client, and no
// goroutine is left behind once the client is closed.
func TestReview20RingWaitCancelStormLeaksNothing(t *testing.T) {
	for _, tc := range []struct {
		name string
		auto bool
	}{{"pooled", false}, {"automatic pipeline and pipelines", true}} {
		t.Run(tc.name, func(t *testing.T) { waitCancelStorm(t, tc.auto) })
	}
}

// waitCancelStorm runs the storm on a two-shard ring, with or without the
// automatic pipeline (then every other call is a Pipeline of one key
// per shard).
func waitCancelStorm(t *testing.T, auto bool) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Pool.MaxActive, cfg.Pool.Wait = 2, true
	cfg.Pool.ClientName = "r20leak"
	cfg.DisableAutoPipeline = !auto
	before := runtime.NumGoroutine()
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			c.Close()
		}
	}()

	const callers = 16
	var wg sync.WaitGroup
	errs := make([]error, callers) // the first unexpected error of each
	stop := time.Now().Add(1500 * time.Millisecond)
	for g := range callers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(g), 7))
			for i := 0; time.Now().Before(stop); i++ {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(1+r.IntN(40))*time.Millisecond)
				var err error
				if auto && i%2 == 1 {
					p := c.Pipeline()
					for s := range 4 {
						p.Send("GET", fmt.Sprintf("r20leak:%d:%d", g, s))
					}
					var res []shard.Result
					if res, err = p.Exec(ctx); err == nil {
						for _, r := range res {
							if r.Err != nil {
								err = r.Err
								break
							}
						}
					}
				} else {
					// BLPOP on an empty list waits 20 ms on the server.
					_, err = c.Do(ctx, "BLPOP", fmt.Sprintf("r20leak:%d", g), "0.02")
				}
				cancel()
				if err != nil && !errors.Is(err, context.DeadlineExceeded) && errs[g] == nil {
					errs[g] = fmt.Errorf("call %d: %w", i, err)
				}
			}
		}()
	}
	wg.Wait()
	for g, err := range errs {
		assert.NoError(t, err, "caller %d", g)
	}

	// Every vacancy came back: two callers are served without waiting.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	var both sync.WaitGroup
	done := make([]error, 2)
	for j := range 2 {
		both.Add(1)
		go func() {
			defer both.Done()
			_, done[j] = c.Do(ctx, "BLPOP", fmt.Sprintf("r20leak:after:%d", j), "0.2")
		}()
	}
	both.Wait()
	require.NoError(t, done[0], "a vacancy was lost")
	require.NoError(t, done[1], "a vacancy was lost")

	for _, s := range servers {
		waitFor(t, 5*time.Second, "at most MaxActive connections on the server", func() bool {
			return normalClients(t, s, "r20leak") <= 2
		})
	}
	for _, n := range c.Stats().Nodes {
		assert.LessOrEqual(t, n.Pool.Active, 2, "pool of %s", n.Node.Addr)
	}

	require.NoError(t, c.Close())
	closed = true
	for _, s := range servers {
		waitFor(t, 5*time.Second, "no connection of the closed client", func() bool {
			return normalClients(t, s, "r20leak") == 0
		})
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > before {
		buf := make([]byte, 1<<20)
		t.Errorf("%d goroutines after Close, %d before New:\n%s", n, before, buf[:runtime.Stack(buf, true)])
	}
}
