package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// publishTo publishes straight on s, bypassing the ring.
func publishTo(t *testing.T, s *redistest.Server, channel, payload string) {
	t.Helper()
	conn, err := redis.Dial("tcp", s.Addr)
	require.NoError(t, err)
	defer conn.Close()
	_, err = conn.Do("PUBLISH", channel, payload)
	require.NoError(t, err)
}

// subscribedOn reports how many subscribers s has for a channel (NUMSUB)
// or patterns (NUMPAT, channel "").
func subscribedOn(s *redistest.Server, channel string) int {
	conn, err := redis.Dial("tcp", s.Addr)
	if err != nil {
		return -1
	}
	defer conn.Close()
	if channel == "" {
		n, _ := redis.Int(conn.Do("PUBSUB", "NUMPAT"))
		return n
	}
	v, err := redis.Values(conn.Do("PUBSUB", "NUMSUB", channel))
	if err != nil || len(v) != 2 {
		return -1
	}
	n, _ := redis.Int(v[1], nil)
	return n
}

// With one shard of the ring down, "shardis subscribe" failed at once
// (the library's Client.Subscribe gives up, closing the subscription,
// when a node cannot be reached), although a Subscription keeps such
// names and subscribes them once their shard is back. It now subscribes
// what it can, reports the down shard on stderr and keeps going: the
// names of the down shard are subscribed when it returns.
func TestReview7SubscribeCLIWithOneShardDown(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	url := fmt.Sprintf("redis-ring://%s,%s", servers[0].Addr, servers[1].Addr)
	cfg, err := shard.ParseURL(url)
	require.NoError(t, err)
	r, err := ring.New(cfg.RingConfig())
	require.NoError(t, err)
	require.Len(t, r.Shards(), 2)
	// A channel on each shard.
	var names [2]string
	for i := 0; names[0] == "" || names[1] == ""; i++ {
		require.Less(t, i, 10000)
		n := fmt.Sprintf("r7cli:%d", i)
		j := r.Locate(n)
		if r.Shards()[j].Addr == servers[1].Addr {
			j = 1
		} else {
			j = 0
		}
		if names[j] == "" {
			names[j] = n
		}
	}

	for _, tc := range []struct {
		name     string
		args     []string
		confirm  [2]string          // the stderr line printed while a shard is down (if any), and once it is back
		channels [2]string          // a channel published on each shard
		line     func(i int) string // the output line for channels[i]
		numsub   [2]string          // what NUMSUB / NUMPAT looks at on each shard
	}{
		{
			name: "channels", args: []string{names[0], names[1]}, confirm: [2]string{"subscribe " + names[0], "subscribe " + names[1]},
			channels: names, numsub: names,
			line: func(i int) string { return names[i] + "\tmsg" },
		},
		{
			name: "pattern", args: []string{"--pattern", "r7pat:*"}, confirm: [2]string{"", "psubscribe r7pat:*"}, // confirmed once every shard has it
			channels: [2]string{"r7pat:a", "r7pat:b"},
			line:     func(i int) string { return fmt.Sprintf("r7pat:%c\tr7pat:*\tmsg", 'a'+i) },
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.NoError(t, servers[1].Kill())
			out, errOut, stopOnce := startSubscribe(append([]string{"--url", url}, tc.args...)...)
			code, stopped := 0, false
			stop := func() int {
				if !stopped {
					stopped, code = true, stopOnce()
				}
				return code
			}
			defer stop()
			waitOutput(t, "the live shard's confirmation", func() bool { return strings.Contains(errOut.String(), tc.confirm[0]) })
			waitOutput(t, "the down shard reported", func() bool { return strings.Contains(errOut.String(), servers[1].Addr) })
			waitOutput(t, "subscribed on the live shard: "+errOut.String(), func() bool { return subscribedOn(servers[0], tc.numsub[0]) == 1 })
			publishTo(t, servers[0], tc.channels[0], "msg")
			waitOutput(t, "the live shard's message", func() bool { return strings.Contains(out.String(), tc.line(0)) })

			require.NoError(t, servers[1].Restart())
			waitOutput(t, "subscribed on the shard back", func() bool { return subscribedOn(servers[1], tc.numsub[1]) == 1 })
			waitOutput(t, "the confirmation once it is back", func() bool { return strings.Contains(errOut.String(), tc.confirm[1]) })
			publishTo(t, servers[1], tc.channels[1], "msg")
			waitOutput(t, "the returned shard's message", func() bool { return strings.Contains(out.String(), tc.line(1)) })
			assert.Equal(t, 0, stop(), errOut.String())
		})
	}
}
