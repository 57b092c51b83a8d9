package shard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// TestReview5ClusterScanSlotMovesBack: while a Scan walks the second of
// three masters, a slot with keys moves (IMPORTING/MIGRATING, MIGRATE,
// SETSLOT NODE: what redis-cli --cluster reshard does) from the third
// master, not walked yet, to the first, walked already. The keys were
// present for the whole Scan, so it must report them, as SCAN promises
// for one server; it reported none of them: they had left the third
// master before its walk and arrived on the first after its walk. Every
// key is reported once.
func TestReview5ClusterScanSlotMovesBack(t *testing.T) {
	ctx := context.Background()
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	cfg := clusterConfig(rc.Seeds()...)
	cfg.Cluster.RefreshInterval = -1
	c := newClient(t, cfg)
	ms := c.Nodes()
	require.Len(t, ms, 3)
	byAddr := map[string]*redistest.Server{}
	for _, s := range rc.Masters() {
		byAddr[s.Addr] = s
	}
	// Keys on every master, and the moving keys on the last.
	const fill = 300
	for i := 0; i < fill; i++ {
		_, err := c.Do(ctx, "SET", fmt.Sprintf("fill:%d", i), i)
		require.NoError(t, err)
	}
	var tag string
	for i := 0; ; i++ {
		tag = fmt.Sprintf("{mv%d}", i)
		n, err := c.Router().Route(tag)
		require.NoError(t, err)
		if n.Addr == ms[2].Addr {
			break
		}
	}
	const n = 20
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%d", tag, i)
		_, err := c.Do(ctx, "SET", keys[i], i)
		require.NoError(t, err)
	}
	slot := cluster.Slot(tag)
	src, dst := byAddr[ms[2].Addr], byAddr[ms[0].Addr]
	sc := c.Scan(shard.ScanOptions{Count: 5})
	seen := map[string]int{}
	moved := false
	for sc.Next(ctx) {
		k := sc.Key()
		seen[k]++
		if moved {
			continue
		}
		if o, _ := c.Router().Route(k); o.Addr == ms[1].Addr {
			// On the second master: the first is walked. The slot
			// moves from the third to the first.
			s := strconv.Itoa(slot)
			_, err := dst.Do("CLUSTER", "SETSLOT", s, "IMPORTING", nodeID(t, src))
			require.NoError(t, err)
			_, err = src.Do("CLUSTER", "SETSLOT", s, "MIGRATING", nodeID(t, dst))
			require.NoError(t, err)
			host, port, _ := strings.Cut(dst.Addr, ":")
			_, err = src.Do(append([]string{"MIGRATE", host, port, "", "0", "5000", "KEYS"}, keys...)...)
			require.NoError(t, err)
			for _, m := range byAddr {
				_, err = m.Do("CLUSTER", "SETSLOT", s, "NODE", nodeID(t, dst))
				require.NoError(t, err)
			}
			moved = true
		}
	}
	require.NoError(t, sc.Err())
	require.True(t, moved)
	require.Len(t, seen, fill+n, "every key, the moved ones too")
	for k, times := range seen {
		require.Equal(t, 1, times, k)
	}
	for _, k := range keys {
		require.Contains(t, seen, k, "a moved key present for the whole Scan")
	}
}
