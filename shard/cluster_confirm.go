package shard

import (
	"errors"
	"sync/atomic"
	"time"

	"github.com/shardis/shardis/cluster"
)

// A replica's empty answer is confirmed at the slot's master.
//
// A replica knows nothing of a resharding (MIGRATING is set on its master
// alone): for a key already moved to the importing master it answers as
// for a key that does not exist (GET nil, EXISTS 0, ...), for as long as
// the migration runs. A client that writes the slot meets the master's
// ASK and keeps the slot's reads off the replicas (cluster_migrating.go);
// one that only reads it from replicas meets none. So a replica read
// that answers "absent" (emptyReply) is sent again to the slot's master,
// which answers ASK when the key moved (the read follows it, and the slot
// is marked migrating: its later reads go to the master), or the same
// empty answer when it did not.
//
// Such an answer from the master says the slot was not migrating then:
// the slot is marked stable for confirmHold, and the replica's empty
// answers for it stand without a second round trip meanwhile. A client
// with replica reads thus sends at most one confirmation per slot per
// confirmHold, however many masters the cluster has and however many of
// its reads find nothing (a cache's misses), and none at all for reads
// that find something: no cost per read while nothing migrates. The
// price is a window: a migration that begins while a slot is marked
// stable is seen up to confirmHold late, a staleness of the order of a
// lagging replica's, which replica reads accept.
//
// Learning the migrating slots at each slot-map refresh instead was
// rejected: only a master's own line of its CLUSTER NODES shows them
// ("[slot->-id]"; CLUSTER SHARDS and CLUSTER SLOTS do not), so a refresh
// would have to fetch the whole node list from every master, some
// 300 KB from each of 1,000 masters, and keep every master busy writing
// it; and it would still see a migration only at the next refresh
// (RefreshInterval, a minute by default), during which moved keys read
// as absent.
type stableSlots struct {
	at atomic.Pointer[[cluster.SlotCount]atomic.Int64] // slot -> sinceEpoch() when confirmed +1; nil until the first
}

// confirmHold is how long a master's empty answer for a slot stands for
// its replicas' empty answers.
const confirmHold = time.Second

// confirmEpoch is the origin of stableSlots' monotonic times.
var confirmEpoch = time.Now()

func sinceEpoch() int64 { return int64(time.Since(confirmEpoch)) }

// mark notes that slot's master confirmed an empty answer now.
func (s *stableSlots) mark(slot int) {
	at := s.at.Load()
	if at == nil {
		s.at.CompareAndSwap(nil, new([cluster.SlotCount]atomic.Int64))
		at = s.at.Load()
	}
	at[slot].Store(sinceEpoch() + 1)
}

// has reports whether slot's master confirmed an empty answer within
// confirmHold.
func (s *stableSlots) has(slot int) bool {
	at := s.at.Load()
	if at == nil {
		return false
	}
	t := at[slot].Load()
	return t != 0 && sinceEpoch()+1-t < int64(confirmHold)
}

// The states of a call's confirmation (call.confirm).
const (
	confirmNone  uint8 = iota // not asked for
	confirmAsked              // sent again to the slot's master
	confirmDone               // the master's answer stands
)

// confirmEmpty reports whether cl, a call answered without error, is to
// be sent again to its slot's master: a replica's empty answer for a slot
// not marked stable. It points cl there. For a call so sent whose answer
// came, it marks the slot stable when the master gave the same empty
// answer itself (not an ASK followed to the importing master).
func (c *Client) confirmEmpty(cl *call) bool {
	if cl.confirm == confirmDone || cl.confirm == confirmNone && !cl.replica ||
		cl.old != nil || cl.group < 0 || cl.group >= cluster.SlotCount {
		return false
	}
	r := c.cl()
	if r == nil {
		return false
	}
	if cl.confirm == confirmAsked {
		cl.confirm, cl.held = confirmDone, nil
		if !cl.asking && emptyReply(cl.reply) && !r.migrating.has(cl.group) {
			r.stable.mark(cl.group)
		}
		return false
	}
	if !c.readReplicas.Load() || !c.nodes.get(cl.node).readOnly ||
		!emptyReply(cl.reply) || r.stable.has(cl.group) {
		return false
	}
	cl.confirm, cl.held, cl.replica, cl.reroute, cl.asking = confirmAsked, cl.reply, false, false, false
	cl.node = int(r.state.Load().master[cl.group])
	return true
}

// confirmUnreachable settles cl, a confirmation whose master could not
// be reached (refused, reset, timed out, marked down: not an error reply,
// such as ASK or TRYAGAIN, which the retry rules follow), with the
// replica's answer: a replica read stands without its master, as it did
// before it was confirmed, instead of waiting for a failover and failing
// where the replica answered. It reports whether it did.
func confirmUnreachable(cl *call) bool {
	if cl.confirm != confirmAsked {
		return false
	}
	var ne *NodeError
	if !errors.As(cl.err, &ne) {
		return false
	}
	cl.err, cl.reply, cl.held, cl.confirm = nil, cl.held, nil, confirmDone
	return true
}

// emptyReply reports whether v is what a read may answer for a key that
// does not exist: nil (GET, HGET, ZSCORE, ...), an empty array (LRANGE,
// SMEMBERS, HGETALL, ...) or one holding a nil (MGET), 0 (EXISTS, STRLEN,
// LLEN, ...), -2 (TTL, PTTL) or "none" (TYPE). Some answers about keys
// that exist look the same (GETBIT 0): those cost a confirmation too,
// bounded as every confirmation is (stableSlots).
func emptyReply(v any) bool {
	switch v := v.(type) {
	case nil:
		return true
	case int64:
		return v == 0 || v == -2
	case string:
		return v == "none"
	case []any:
		if len(v) == 0 {
			return true
		}
		for _, e := range v {
			if e == nil {
				return true
			}
		}
	}
	return false
}
