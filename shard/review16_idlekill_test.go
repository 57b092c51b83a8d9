package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A client whose idle connections the server killed (CLIENT KILL TYPE
// normal from another connection, an operator's) sends its next command
// on a live connection: none fails because a connection died while
// nobody used it, with or without auto-pipelining, over TLS or not.
func TestReview16CommandAfterIdleConnectionsKilled(t *testing.T) {
	ctx := context.Background()
	plain := redistest.StartNTB(t, 1, redistest.Options{})
	tlsOn := redistest.StartNTB(t, 1, redistest.Options{TLS: true})
	for _, tc := range []struct {
		tls, autoPipe bool
		maxActive     int
	}{{false, true, 0}, {false, false, 0}, {false, true, 8}, {true, true, 0}, {true, false, 0}} {
		t.Run(fmt.Sprintf("tls=%v/autopipeline=%v/maxactive=%d", tc.tls, tc.autoPipe, tc.maxActive), func(t *testing.T) {
			servers := plain
			if tc.tls {
				servers = tlsOn
			}
			cfg := ringConfig(servers)
			if tc.tls {
				cfg.Pool.TLSConfig = servers[0].TLS.ClientConfig()
			}
			cfg.DisableAutoPipeline = !tc.autoPipe
			cfg.Pool.MaxActive = tc.maxActive
			cfg.Pool.Wait = tc.maxActive > 0
			c := newClient(t, cfg)
			const rounds, callers = 100, 4
			var mu sync.Mutex
			sent, failed := 0, 0
			var first error
			for range rounds {
				// Commands in parallel fill the pool (and the pipeline)
				// with connections that then sit idle until the kill.
				var wg sync.WaitGroup
				for j := range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						_, err := c.Do(ctx, "GET", fmt.Sprintf("k%d", j))
						mu.Lock()
						defer mu.Unlock()
						sent++
						if err != nil {
							failed++
							if first == nil {
								first = err
							}
						}
					}()
				}
				wg.Wait()
				out, err := servers[0].Do("CLIENT", "KILL", "TYPE", "normal")
				require.NoError(t, err)
				n, err := strconv.Atoi(out)
				require.NoError(t, err)
				require.Positive(t, n, "CLIENT KILL TYPE normal killed nothing")
			}
			assert.Zero(t, failed, "commands sent right after the idle connections were killed failed %d of %d times, the first with: %v", failed, sent, first)
		})
	}
}
