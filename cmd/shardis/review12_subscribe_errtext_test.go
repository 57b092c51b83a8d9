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

// With one shard of the ring down, "shardis subscribe" reports the down
// shard on stderr and keeps going: the report starts "shardis subscribe: "
// and the error follows without its own "shardis: " (it printed
// "shardis subscribe: shardis: ..."), as every other error the command
// prints.
func TestReview12SubscribeDownShardReportNamesThePackageOnce(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	url := fmt.Sprintf("redis-ring://%s,%s", servers[0].Addr, servers[1].Addr)
	cfg, err := shard.ParseURL(url)
	require.NoError(t, err)
	r, err := ring.New(cfg.RingConfig())
	require.NoError(t, err)
	require.Len(t, r.Shards(), 2)
	var names [2]string // a channel on each shard
	for i := 0; names[0] == "" || names[1] == ""; i++ {
		require.Less(t, i, 10000)
		n := fmt.Sprintf("r12cli:%d", i)
		j := 0
		if r.Shards()[r.Locate(n)].Addr == servers[1].Addr {
			j = 1
		}
		if names[j] == "" {
			names[j] = n
		}
	}
	require.NoError(t, servers[1].Kill())
	_, errOut, stop := startSubscribe("--url", url, names[0], names[1])
	waitOutput(t, "the down shard reported", func() bool {
		return strings.Contains(errOut.String(), "the names of the nodes above are subscribed once they answer")
	})
	assert.Equal(t, 0, stop(), errOut.String())
	text := errOut.String()
	t.Logf("stderr:\n%s", text)
	assert.Contains(t, text, "shardis subscribe: subscribe: node "+servers[1].Addr+": ") // as when it ends the command
	assert.NotContains(t, text, "shardis:", "an error printed with its own prefix after \"shardis subscribe: \"")
}
