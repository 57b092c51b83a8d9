package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// sentinelConfigEpoch reads the config-epoch field of SENTINEL MASTER
// name on s (rendered one element a line by Do).
func sentinelConfigEpoch(s *redistest.Server, name string) (int64, error) {
	out, err := s.Do("SENTINEL", "MASTER", name)
	if err != nil {
		return 0, err
	}
	f := strings.Split(out, "\n")
	for i := 0; i+1 < len(f); i += 2 {
		if strings.TrimSpace(f[i]) == "config-epoch" {
			return strconv.ParseInt(strings.TrimSpace(f[i+1]), 10, 64)
		}
	}
	return 0, fmt.Errorf("%s: no config-epoch in %q", s.Addr, out)
}

// waitSentinelNames waits until s names 127.0.0.1:port for name.
func waitSentinelNames(t *testing.T, s *redistest.Server, name string, port int) {
	t.Helper()
	want := fmt.Sprintf("127.0.0.1\n%d", port)
	waitFor(t, 60*time.Second, fmt.Sprintf("%s to name port %d", s.Addr, port), func() bool {
		got, err := s.Do("SENTINEL", "GET-MASTER-ADDR-BY-NAME", name)
		return err == nil && got == want
	})
}

// monitorAs makes Sentinel s monitor addr (127.0.0.1:port) as name, with
// the data nodes' credentials.
func monitorAs(t *testing.T, s *redistest.Server, name string, port int) {
	t.Helper()
	_, err := s.Do("SENTINEL", "MONITOR", name, "127.0.0.1", strconv.Itoa(port), "2")
	require.NoError(t, err)
	_, err = s.Do("SENTINEL", "SET", name, "auth-user", sentDataUser, "auth-pass", sentDataPW)
	require.NoError(t, err)
}

// staleSentinelSet is one master set after a failover that Sentinel s[0]
// missed: s[1] and s[2] followed it (config-epoch 1 or more) and name
// promoted; s[0] names stale, a server that says it is a master (an old
// master partitioned, or restarted empty), at config-epoch 0.
type staleSentinelSet struct {
	set             *redistest.SentinelSet
	s               []*redistest.Server
	name            string
	promoted, stale *redistest.Server
}

func startStaleSentinelSet(t *testing.T) staleSentinelSet {
	t.Helper()
	set := redistest.StartSentinelsTB(t, sentinelSetOptions(1))
	name := set.Names()[0]
	promoted, err := set.Replica(0)
	require.NoError(t, err)
	stale := redistest.StartTB(t, redistest.Options{Users: []redistest.User{{Name: sentDataUser, Password: sentDataPW}}})
	s := set.Sentinels
	_, err = s[0].Do("SENTINEL", "REMOVE", name) // s[0] takes no part in the failover
	require.NoError(t, err)
	_, err = s[1].Do("SENTINEL", "FAILOVER", name)
	require.NoError(t, err)
	waitSentinelNames(t, s[1], name, promoted.Port)
	waitSentinelNames(t, s[2], name, promoted.Port)
	monitorAs(t, s[0], name, stale.Port)
	waitSentinelNames(t, s[0], name, stale.Port)
	waitFor(t, 60*time.Second, "config-epoch 0 on the stale Sentinel, 1 or more on the others", func() bool {
		e0, err0 := sentinelConfigEpoch(s[0], name)
		e1, err1 := sentinelConfigEpoch(s[1], name)
		e2, err2 := sentinelConfigEpoch(s[2], name)
		return err0 == nil && err1 == nil && err2 == nil && e0 == 0 && e1 >= 1 && e2 >= 1
	})
	return staleSentinelSet{set: set, s: s, name: name, promoted: promoted, stale: stale}
}

// clientOver is a client of the set's one shard asking the Sentinels at
// addrs, in that order, only when asked (Refresh, a failed command).
func (x staleSentinelSet) clientOver(t *testing.T, addrs ...string) *shard.Client {
	t.Helper()
	cfg := sentinelConfig(x.set)
	cfg.Sentinel.Addrs = addrs
	cfg.Sentinel.RefreshInterval = -1
	return newClient(t, cfg)
}

func masterOf(c *shard.Client) string { return c.Stats().Sentinel[0].Master }

// A Sentinel that has forgotten the master set (SENTINEL REMOVE), while
// its view had the highest config epoch of all, names nothing: it has no
// say in the tie between the two others, which goes to the newer view
// (config-epoch 1 or more against 0) whichever is listed first. Nor has a
// Sentinel that is not listed: the config epochs are asked of the
// Sentinels that named a master in the same query, and nothing of them
// is kept from one query to the next.
func TestReview16SentinelForgottenSentinelHasNoSayInATie(t *testing.T) {
	x := startStaleSentinelSet(t)
	s := x.s
	_, err := s[2].Do("SENTINEL", "REMOVE", x.name)
	require.NoError(t, err)
	for _, addrs := range [][]string{
		{s[0].Addr, s[1].Addr, s[2].Addr},
		{s[2].Addr, s[0].Addr, s[1].Addr},
		{s[0].Addr, s[1].Addr}, // s[2] not listed
	} {
		c := x.clientOver(t, addrs...)
		require.Equal(t, x.promoted.Addr, masterOf(c), "Sentinels %v: the tie goes to the newest view, not the stale %s", addrs, x.stale.Addr)
		require.NoError(t, c.Refresh(context.Background()))
		require.Equal(t, x.promoted.Addr, masterOf(c), "Sentinels %v, after a Refresh", addrs)
		c.Close()
	}
	// s[2] monitors the stale server too, from scratch (config-epoch 0),
	// then forgets it again: the client that asked it when it named the
	// stale server keeps nothing of it.
	c := x.clientOver(t, s[0].Addr, s[1].Addr, s[2].Addr)
	monitorAs(t, s[2], x.name, x.stale.Port)
	require.NoError(t, c.Refresh(context.Background()))
	require.Equal(t, x.stale.Addr, masterOf(c), "two Sentinels of three name the stale server")
	_, err = s[2].Do("SENTINEL", "REMOVE", x.name)
	require.NoError(t, err)
	require.NoError(t, c.Refresh(context.Background()))
	require.Equal(t, x.promoted.Addr, masterOf(c), "once the second Sentinel forgot it, the tie goes to the newest view")
}

// The order of the Sentinels breaks a tie that the config epochs cannot
// (SENTINEL MASTER refused to the client's user, as here, or failed). The
// Sentinel that answered last was moved to the front of that order: a
// stale Sentinel that was the only one to answer while the one listed
// first was down (its master then taken, there being no other answer)
// kept the shard on the stale server once the other answered again. The
// tie now goes by the order the Sentinels are listed in, whatever
// answered before: the same answers name the same master.
func TestReview16SentinelTieOrderIsTheListedOrder(t *testing.T) {
	for _, epochs := range []bool{true, false} {
		t.Run(fmt.Sprintf("epochs=%t", epochs), func(t *testing.T) {
			x := startStaleSentinelSet(t)
			s := x.s
			require.NoError(t, s[2].Kill())
			if !epochs {
				for _, sx := range s[:2] {
					_, err := sx.Do("ACL", "SETUSER", "default", "-sentinel|master")
					require.NoError(t, err)
					_, err = sx.Do("SENTINEL", "MASTER", x.name)
					require.Error(t, err, "SENTINEL MASTER refused")
				}
			}
			c := x.clientOver(t, s[1].Addr, s[0].Addr)
			require.Equal(t, x.promoted.Addr, masterOf(c))

			// s[1] stops answering: s[0] alone names a master, the stale one.
			require.NoError(t, s[1].Pause())
			resumed := false
			t.Cleanup(func() {
				if !resumed {
					_ = s[1].Resume()
				}
			})
			require.NoError(t, c.Refresh(context.Background()))
			require.Equal(t, x.stale.Addr, masterOf(c), "the only answer")
			require.NoError(t, s[1].Resume())
			resumed = true

			require.NoError(t, c.Refresh(context.Background()))
			require.Equal(t, x.promoted.Addr, masterOf(c), "a one-to-one tie: the newest view, or the Sentinel listed first")
		})
	}
}
