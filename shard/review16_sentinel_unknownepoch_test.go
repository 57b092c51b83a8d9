package shard_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
)

// Two Sentinels tie, one per master: the stale one (config-epoch 0,
// listed first) and one that followed the failover, whose SENTINEL
// MASTER does not answer in time, so that its view's epoch is not known.
// A view whose epoch is not known ranks below one whose epoch is, so the
// stale Sentinel's master is checked first; ROLE is what rejects it once
// the Sentinels have made it a replica, and the promoted master is
// taken. When the stale server still says it is a master, the next query
// that reads both epochs takes the promoted master (the newest view).
func TestReview16SentinelUnknownEpochInATie(t *testing.T) {
	x := startStaleSentinelSet(t)
	s := x.s
	require.NoError(t, s[2].Kill()) // one Sentinel each: a tie

	var stall atomic.Bool
	stall.Store(true)
	release := make(chan struct{})
	px := redistest.StartProxy(t, s[1].Addr, redistest.ProxyOptions{OnSend: func(chunk []byte) bool {
		if stall.Load() && bytes.Contains(bytes.ToUpper(chunk), []byte("$6\r\nMASTER\r\n")) {
			<-release // SENTINEL MASTER gets no answer: the epoch is not known
		}
		return true
	}})
	t.Cleanup(func() { close(release) })

	// The stale server is made a replica of the promoted master, as the
	// Sentinels do with an old master that comes back.
	_, err := x.stale.Do("REPLICAOF", "127.0.0.1", fmt.Sprint(x.promoted.Port))
	require.NoError(t, err)
	waitFor(t, 60*time.Second, "the stale server to say it is a replica", func() bool {
		out, err := x.stale.Do("ROLE")
		return err == nil && strings.HasPrefix(out, "slave")
	})
	got, err := s[0].Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", x.name)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprintf("127.0.0.1\n%d", x.stale.Port), got, "the stale Sentinel still names the stale server")

	c := x.clientOver(t, s[0].Addr, px.Addr)
	require.Equal(t, x.promoted.Addr, masterOf(c), "ROLE rejects the stale view's master, now a replica")

	// The stale server says it is a master again; the epochs are read.
	_, err = x.stale.Do("REPLICAOF", "NO", "ONE")
	require.NoError(t, err)
	stall.Store(false)
	require.NoError(t, c.Refresh(context.Background()))
	require.Equal(t, x.promoted.Addr, masterOf(c), "the newest view (config-epoch 1 or more against 0) wins the tie")
	require.False(t, c.Stats().Sentinel[0].Stale)
}
