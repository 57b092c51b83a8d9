package reshard

import (
	"errors"
	"strconv"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/shard"
)

// markerElsewhere reports a cluster node's redirect for the fence's
// marker. When the old topology is a Redis Cluster (a migration out of a
// cluster, such as the rollback of one into it), the marker is a key like
// any other: only the master of its slot takes it, and the others answer
// MOVED. Clients read the marker on every old node and take the furthest
// phase any shows, so the slot's master is enough; the others are skipped.
func markerElsewhere(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	switch cluster.ErrorCode(string(re)) {
	case "MOVED", "ASK":
		return true
	}
	return false
}

// batchOf names the batch that key k joins on its way to owner: keys
// that go to the same node travel in one MIGRATE ... KEYS, but a cluster
// node (the old topology is a cluster) takes only keys of one slot in it
// (CROSSSLOT otherwise). DUMP/RESTORE moves (Options.Dump) send one
// command per key and keep whole batches.
func (m *mover) batchOf(owner shard.Node, k string) string {
	if _, ok := m.from.(*shard.ClusterRouter); !ok || m.opts.Dump {
		return owner.Addr
	}
	return owner.Addr + "#" + strconv.Itoa(cluster.Slot(k))
}
