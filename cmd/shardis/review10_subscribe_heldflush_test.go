package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// "shardis subscribe" flushed its output only when Buffered() was 0, and
// Buffered counts the messages a connection holds back while their
// channel moves to another node (for up to PingInterval+PingTimeout). A
// message of another channel delivered meanwhile was printed into the
// buffer and stayed there until the hold ended (up to PingInterval plus
// the read timeout). Each delivered message is written out before the command waits
// for the next one.
func TestReview10SubscribeCLIPrintsWhileAMessageIsHeld(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	// Auto-eject moves the paused shard's channel to the other shard. The
	// read timeout bounds the hold (PingInterval 1s + PingTimeout, the
	// read timeout): 7 s keeps the paused shard's connection, and so the
	// hold on its channel, alive while the test looks for the other
	// channel's message, and ends it within the final wait should the
	// paused shard not let the channel go in time.
	url := fmt.Sprintf("redis-ring://%s,%s?auto_eject=true&health_interval=50ms&health_timeout=200ms&failure_limit=2&read_timeout=6s",
		servers[0].Addr, servers[1].Addr)
	cfg, err := shard.ParseURL(url)
	require.NoError(t, err)
	r, err := ring.New(cfg.RingConfig())
	require.NoError(t, err)
	// A channel on each shard.
	var names [2]string
	for i := 0; names[0] == "" || names[1] == ""; i++ {
		require.Less(t, i, 10000)
		n := fmt.Sprintf("r10held:%d", i)
		j := 0
		if r.Shards()[r.Locate(n)].Addr == servers[1].Addr {
			j = 1
		}
		if names[j] == "" {
			names[j] = n
		}
	}
	stay, moving := names[0], names[1]

	out, errOut, stop := startSubscribe("--url", url, stay, moving)
	stopped := false
	defer func() {
		if !stopped {
			stop()
		}
	}()
	waitOutput(t, "both confirmations", func() bool {
		return strings.Contains(errOut.String(), "subscribe "+stay) && strings.Contains(errOut.String(), "subscribe "+moving)
	})

	require.NoError(t, servers[1].Pause())
	resumed := false
	t.Cleanup(func() {
		if !resumed {
			_ = servers[1].Resume()
		}
	})
	// Ejected: the moving channel is subscribed on the other shard, which
	// holds its messages back while the paused one has not let it go.
	waitOutput(t, "the moving channel subscribed on the other shard", func() bool { return subscribedOn(servers[0], moving) == 1 })
	publishTo(t, servers[0], moving, "held")
	publishTo(t, servers[0], stay, "now")
	waitOutput(t, "the other channel's message printed while the moving one's is held", func() bool {
		return strings.Contains(out.String(), stay+"\tnow\n")
	})
	assert.NotContains(t, out.String(), moving+"\theld", "the moving channel's message is held back while the paused shard has it")

	require.NoError(t, servers[1].Resume())
	resumed = true
	waitOutput(t, "the held message once the paused shard let the channel go", func() bool {
		return strings.Contains(out.String(), moving+"\theld\n")
	})
	stopped = true
	assert.Equal(t, 0, stop(), errOut.String())
}
