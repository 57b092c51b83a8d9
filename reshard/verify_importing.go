package reshard

import (
	"context"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// A slot being moved inside a cluster (MIGRATING at its owner, IMPORTING
// at another master) has its keys at both masters: those moved so far,
// and every key written since that its owner did not hold, at the
// importing master, where the owner's ASK sends a cluster client (the
// mover puts a key of such a slot there too: to_cluster_moved.go). The
// cluster's map names the owner alone until the move ends, so the
// verification asks each master of a cluster which slots it imports, and
// a key of one of those found there is where it belongs.

// importingSlots returns the slots that node n, a master of a cluster,
// imports: the "[slot-<-id]" marks of the "myself" line of its CLUSTER
// NODES. A node that does not tell (out of cluster mode, an ACL that
// refuses CLUSTER NODES, not reached) imports none as far as the
// verification knows: its keys are judged by the map alone.
func importingSlots(ctx context.Context, pools *pool.Set, n shard.Node) map[int]bool {
	conn, err := pools.Get(ctx, n.Addr)
	if err != nil {
		return nil
	}
	defer conn.Close()
	text, err := redis.String(redis.DoContext(conn, ctx, "CLUSTER", "NODES"))
	if err != nil {
		return nil
	}
	return parseImporting(text)
}

// parseImporting returns the slots that the "myself" line of CLUSTER
// NODES text marks as importing.
func parseImporting(text string) map[int]bool {
	var slots map[int]bool
	for line := range strings.SplitSeq(text, "\n") {
		f := strings.Fields(line)
		if len(f) < 8 || !strings.Contains(","+f[2]+",", ",myself,") {
			continue
		}
		for _, r := range f[8:] {
			inner, ok := strings.CutPrefix(r, "[")
			if !ok {
				continue
			}
			slot, _, importing := strings.Cut(strings.TrimSuffix(inner, "]"), "-<-")
			if s, err := strconv.Atoi(slot); importing && err == nil && s >= 0 && s < cluster.SlotCount {
				if slots == nil {
					slots = map[int]bool{}
				}
				slots[s] = true
			}
		}
		return slots
	}
	return nil
}
