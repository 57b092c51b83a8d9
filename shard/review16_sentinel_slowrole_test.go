package shard_test

import (
	"bytes"
	"context"
	"net"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
)

// A master that answers ROLE a second late, well within the data nodes'
// ReadTimeout (3 s), is a good master, while the Sentinels answer within
// their own, much shorter, Timeout (100 ms). The bound on a whole
// background query was taken from the Sentinels' timeout alone (600 ms
// here), so that query gave up on the ROLE check: the shard did not
// follow the Sentinels to the new master they named, and was marked
// stale with its master answering.
func TestReview16SentinelSlowRoleWithinDataTimeoutIsWaitedFor(t *testing.T) {
	o := sentinelSetOptions(1)
	o.Sentinels = 1
	set := redistest.StartSentinelsTB(t, o)
	name := set.Names()[0]
	master, err := set.Master(0)
	require.NoError(t, err)
	s0 := set.Sentinels[0]

	const delay = time.Second
	// A master's ROLE reply: *3, then "master". Nothing else the
	// Sentinel or the client asks of it starts so.
	roleReply := []byte("*3\r\n$6\r\nmaster\r\n")
	var slow atomic.Bool
	proxyTo := func() (*redistest.Proxy, int) {
		px := redistest.StartProxy(t, master.Addr, redistest.ProxyOptions{
			OnReply: func(chunk []byte, forward func([]byte) error) {
				if slow.Load() && bytes.HasPrefix(chunk, roleReply) {
					time.Sleep(delay) // the server is slow to answer
				}
				_ = forward(chunk)
			},
		})
		return px, portOf(t, px.Addr)
	}
	first, firstPort := proxyTo()
	_, err = s0.Do("SENTINEL", "REMOVE", name)
	require.NoError(t, err)
	monitorAs(t, s0, name, firstPort)
	waitSentinelNames(t, s0, name, firstPort)

	cfg := sentinelConfig(set)
	cfg.Pool = pool.Options{DialTimeout: time.Second, ReadTimeout: 3 * time.Second, WriteTimeout: time.Second,
		Username: sentDataUser, Password: sentDataPW}
	cfg.Sentinel.Timeout = 100 * time.Millisecond
	cfg.Sentinel.RefreshInterval = -1
	c := newClient(t, cfg)
	require.Equal(t, first.Addr, masterOf(c))

	// The Sentinel now names another address of the master, slow to
	// answer ROLE.
	slow.Store(true)
	second, secondPort := proxyTo()
	_, err = s0.Do("SENTINEL", "REMOVE", name)
	require.NoError(t, err)
	monitorAs(t, s0, name, secondPort)
	waitSentinelNames(t, s0, name, secondPort)

	require.NoError(t, c.Refresh(context.Background()), "ROLE answered within the data nodes' ReadTimeout")
	st := c.Stats().Sentinel[0]
	require.Equal(t, second.Addr, st.Master, "the master the Sentinel names, confirmed by ROLE")
	require.False(t, st.Stale)
}

// portOf is the port of host:port addr.
func portOf(t *testing.T, addr string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(addr)
	require.NoError(t, err)
	n, err := strconv.Atoi(p)
	require.NoError(t, err)
	return n
}
