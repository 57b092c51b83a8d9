package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// busyServer runs an endless script on s (busy-reply-threshold 20 ms) and
// returns once s answers BUSY (to PING: in cluster mode a GET may be
// answered MOVED before the node looks at its script). end kills the
// script and waits for it to stop, and must succeed; if the test does not
// call it, the script is killed when the test ends, where a server the
// test killed meanwhile is no failure.
func busyServer(t *testing.T, s *redistest.Server) (end func()) {
	t.Helper()
	_, err := s.Do("CONFIG", "SET", "busy-reply-threshold", "20")
	require.NoError(t, err)
	script, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	ran := make(chan error, 1)
	go func() {
		_, err := script.Do("EVAL", "while true do end", 0)
		ran <- err
	}()
	probe, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	ended := false
	stop := func(strict bool) {
		if ended {
			return
		}
		ended = true
		defer script.Close()
		defer probe.Close()
		_, err := probe.Do("SCRIPT", "KILL")
		if strict {
			require.NoError(t, err)
		}
		select {
		case <-ran:
		case <-time.After(10 * time.Second):
			t.Error("the script did not end")
		}
	}
	t.Cleanup(func() { stop(false) })
	waitFor(t, 10*time.Second, "the script to make the server busy", func() bool {
		_, err := probe.Do("PING")
		var re redis.Error
		return errors.As(err, &re) && strings.HasPrefix(string(re), "BUSY")
	})
	return func() { stop(true) }
}

// busyHome is the set-up of the tests of a cluster home that turns BUSY:
// a subscription carrying prefix+":x", whose home (old) is then made busy
// (end lets it go), and a Subscribe of prefix+":y" that the busy home
// refuses (ne).
type busyHome struct {
	masters []*redistest.Server
	sub     *shard.Subscription
	old     *redistest.Server
	end     func()
	ne      *shard.NodeError
}

func startBusyHome(t *testing.T, prefix string) busyHome {
	t.Helper()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: 20 * time.Second})
	c := newClient(t, clusterConfig(rc.Seeds()...))
	ctx := context.Background()
	h := busyHome{masters: rc.Masters()}
	require.Len(t, h.masters, 3)
	sub, err := c.NewSubscription(shard.SubscriptionOptions{PingInterval: time.Minute, PingTimeout: time.Minute})
	require.NoError(t, err)
	t.Cleanup(func() { sub.Close() })
	h.sub = sub
	require.NoError(t, sub.Subscribe(ctx, prefix+":x"))
	h.old = homeOf(t, h.masters, prefix+":x")
	h.end = busyServer(t, h.old)
	err = sub.Subscribe(ctx, prefix+":y")
	require.True(t, errors.As(err, &h.ne), "%v", err)
	return h
}
