package shard_test

import (
	"bytes"
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// The config epoch that breaks a tie is asked after the Sentinels have
// named their masters. A Sentinel whose view changed in between (it
// followed the latest failover, here by taking the promoted master
// again) answers with the epoch of its new view, which names another
// master: that epoch is no reason to prefer the master it named before.
// It was counted for it: the stale server, listed first, tied with the
// promoted master at equal epochs and won on the order, though both
// Sentinels named the promoted master by then. An epoch now counts only
// for the master that SENTINEL MASTER names with it.
func TestReview16SentinelEpochCountsForTheMasterItNames(t *testing.T) {
	x := startStaleSentinelSet(t)
	s := x.s
	require.NoError(t, s[2].Kill())

	held := make(chan struct{})
	release := make(chan struct{})
	var once sync.Once
	px := redistest.StartProxy(t, s[0].Addr, redistest.ProxyOptions{OnSend: func(chunk []byte) bool {
		if bytes.Contains(bytes.ToUpper(chunk), []byte("$6\r\nMASTER\r\n")) {
			once.Do(func() {
				close(held)
				<-release
			})
		}
		return true
	}})
	released := false
	t.Cleanup(func() {
		if !released {
			close(release)
		}
	})

	cfg := sentinelConfig(x.set)
	cfg.Sentinel.Addrs = []string{px.Addr, s[1].Addr}
	cfg.Sentinel.RefreshInterval = -1
	cfg.Sentinel.Timeout = 60 * time.Second // the epoch's reply waits for the change of view
	type result struct {
		c   *shard.Client
		err error
	}
	done := make(chan result, 1)
	go func() {
		c, err := shard.New(context.Background(), cfg)
		done <- result{c, err}
	}()
	select {
	case <-held:
	case r := <-done:
		if r.c != nil {
			r.c.Close()
		}
		t.Fatalf("New ended (%v) without asking the config epochs: no tie", r.err)
	case <-time.After(60 * time.Second):
		t.Fatal("the config epochs were not asked")
	}
	// The stale Sentinel has named the stale server; it now follows the
	// promoted master, whose epoch it learns from the other Sentinel.
	_, err := s[0].Do("SENTINEL", "REMOVE", x.name)
	require.NoError(t, err)
	monitorAs(t, s[0], x.name, x.promoted.Port)
	waitSentinelNames(t, s[0], x.name, x.promoted.Port)
	waitFor(t, 60*time.Second, "the Sentinel that followed to learn the failover's config epoch", func() bool {
		e0, err0 := sentinelConfigEpoch(s[0], x.name)
		e1, err1 := sentinelConfigEpoch(s[1], x.name)
		return err0 == nil && err1 == nil && e0 >= 1 && e0 == e1
	})
	close(release)
	released = true
	r := <-done
	require.NoError(t, r.err)
	t.Cleanup(func() { r.c.Close() })
	require.Equal(t, x.promoted.Addr, masterOf(r.c), "both Sentinels name %s by the time their epochs are read, not the stale %s", x.promoted.Addr, x.stale.Addr)
}
