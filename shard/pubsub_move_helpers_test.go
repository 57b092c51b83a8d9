package shard_test

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// routedTo returns the first name prefix0, prefix1, ... that rr routes to
// the server at addr: a channel (or key) that lives there.
func routedTo(t *testing.T, rr *shard.RingRouter, prefix, addr string) string {
	t.Helper()
	for i := range 100000 {
		name := prefix + strconv.Itoa(i)
		if n, err := rr.Route(name); err == nil && n.Addr == addr {
			return name
		}
	}
	t.Fatalf("no name %sN is routed to %s", prefix, addr)
	return ""
}

// ejectableRing returns a client over a ring of servers without health
// checks (the test ejects shards itself), and its RingRouter.
func ejectableRing(t *testing.T, cfg shard.Config) (*shard.Client, *shard.RingRouter) {
	t.Helper()
	cfg.Health = shard.HealthOptions{}
	c := newClient(t, cfg)
	rr, ok := c.Router().(*shard.RingRouter)
	require.True(t, ok, "%T", c.Router())
	return c, rr
}
