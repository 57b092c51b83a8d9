package shard_test

import (
	"context"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// A candidate master that sends its ROLE reply a byte every 100 ms
// (seconds for the whole reply) fails the check within the data nodes'
// ReadTimeout: New gives up in time with a timeout, and a Refresh of a
// client already running does too, keeping the master it had.
func TestReview16SentinelTrickledRoleIsBoundedAsAWhole(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	name := set.Names()[0]
	master, err := set.Master(0)
	require.NoError(t, err)
	var trickle atomic.Bool
	trickle.Store(true)
	px := redistest.StartTrickleProxy(t, master.Addr, 100*time.Millisecond, func(cmd string, _ []byte) bool {
		return cmd == "ROLE" && trickle.Load()
	})
	pxPort, err := strconv.Atoi(px.Addr[strings.LastIndexByte(px.Addr, ':')+1:])
	require.NoError(t, err)
	s0 := set.Sentinels[0]
	_, err = s0.Do("SENTINEL", "REMOVE", name)
	require.NoError(t, err)
	monitorAs(t, s0, name, pxPort)
	waitSentinelNames(t, s0, name, pxPort)

	const readTimeout = 300 * time.Millisecond
	cfg := sentinelConfig(set)
	cfg.Pool = pool.Options{DialTimeout: time.Second, ReadTimeout: readTimeout, WriteTimeout: time.Second,
		Username: sentDataUser, Password: sentDataPW}
	cfg.Sentinel.RefreshInterval = -1
	// The ROLE reply is over 40 bytes: 4 s or more trickled. One
	// ReadTimeout, with room for a loaded machine.
	const bound = 2 * time.Second

	start := time.Now()
	c, err := shard.New(context.Background(), cfg)
	took := time.Since(start)
	if c != nil {
		c.Close()
	}
	require.Error(t, err, "the only candidate's ROLE did not come in time")
	require.True(t, isTimeout(err), "a timeout: %v", err)
	require.Less(t, took, bound, "New with a trickled ROLE: %v", err)

	trickle.Store(false)
	c = newClient(t, cfg)
	require.Equal(t, px.Addr, masterOf(c))
	trickle.Store(true)
	start = time.Now()
	err = c.Refresh(context.Background())
	took = time.Since(start)
	require.Error(t, err)
	require.True(t, isTimeout(err), "a timeout: %v", err)
	require.Less(t, took, bound, "Refresh with a trickled ROLE: %v", err)
	st := c.Stats().Sentinel[0]
	require.Equal(t, px.Addr, st.Master, "the master is kept")
	require.True(t, st.Stale)
}
