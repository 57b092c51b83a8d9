package shard_test

import (
	"context"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestSentinelCloseDuringSwitchCheck: Close returns promptly while a
// +switch-master is being checked (ROLE) against a new master that does
// not answer, not after the check's dial and read timeouts.
func TestSentinelCloseDuringSwitchCheck(t *testing.T) {
	set := startSentinelSet(t)
	// A plain server with the Sentinels' password stands in for a fourth
	// Sentinel, so that the test can publish a +switch-master.
	fake := redistest.StartNTB(t, 1, redistest.Options{DefaultPassword: sentPW})[0]
	// A "new master" that accepts connections and never answers.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	cfg := sentinelConfig(set)
	cfg.Pool.DialTimeout, cfg.Pool.ReadTimeout = 0, 0 // the defaults: 5s, 3s
	cfg.Sentinel.Addrs = append(cfg.Sentinel.Addrs, fake.Addr)
	c, err := shard.New(context.Background(), cfg)
	require.NoError(t, err)
	waitFor(t, 30*time.Second, "subscriptions", func() bool { return c.Stats().Sentinel[0].Subscribed == 4 })
	old := c.Stats().Sentinel[0].Master
	_, port, _ := net.SplitHostPort(old)
	_, np, _ := net.SplitHostPort(ln.Addr().String())
	_, err = fake.Do("PUBLISH", "+switch-master", fmt.Sprintf("%s 127.0.0.1 %s 127.0.0.1 %s", set.Shards[0].Name, port, np))
	require.NoError(t, err)
	waitFor(t, 10*time.Second, "the message", func() bool { return c.Stats().Sentinel[0].SwitchMessages > 0 })
	start := time.Now()
	c.Close()
	took := time.Since(start)
	t.Logf("Close took %v", took)
	assert.Less(t, took, time.Second)
}
