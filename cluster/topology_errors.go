package cluster

import "errors"

// Sentinel errors of this package; match them with errors.Is.
var (
	// ErrMalformed means a topology reply (CLUSTER SHARDS, CLUSTER SLOTS or
	// CLUSTER NODES), or the shards given to NewTable, could not be
	// understood: a value of the wrong type, a number out of range, a
	// master without a usable address, a slot owned twice, and so on. The
	// message says what was wrong and where.
	ErrMalformed = errors.New("shardis: malformed cluster topology")

	// ErrIncomplete means the topology is well formed but some hash slots
	// have no owner, so no complete slot table can be built. The message
	// names the first uncovered range, e.g. "slots 5461-10922 not covered".
	// It is what a cluster reports while a slot is unassigned.
	ErrIncomplete = errors.New("shardis: incomplete slot table")

	// ErrAmbiguous means a CLUSTER SHARDS reply lists two masters in one
	// shard, neither of them failed (as Redis 7.2 and later do during a
	// failover until the old master is demoted) or all of them failed:
	// the reply does not say which of them owns the shard's slots.
	// Discover then reads CLUSTER SLOTS, which names each slot's owner.
	ErrAmbiguous = errors.New("shardis: ambiguous cluster topology")

	// ErrNotCluster means the server runs without cluster support
	// (cluster-enabled no): it answered a CLUSTER command with "ERR This
	// instance has cluster support disabled".
	ErrNotCluster = errors.New("shardis: server has no cluster support")

	// ErrOtherCluster means a node answered with the topology of another
	// cluster than the one the client knows: not one node ID in common (an
	// address the cluster used now serves another cluster). The answer is
	// not used while a node of the known cluster answers (see the
	// shard package's cluster refresh).
	ErrOtherCluster = errors.New("shardis: topology of another cluster")

	// ErrNoHostname means a master that owns slots is listed with the
	// endpoint "?" and no IP: the cluster is configured to give clients
	// hostnames (cluster-preferred-endpoint-type hostname) but the node
	// announces none (cluster-announce-hostname is empty), so the reply
	// does not say where the node is. Errors that wrap it also wrap
	// ErrMalformed. Setting cluster-announce-hostname on every node, or
	// the endpoint type back to ip, fixes the cluster. (A node with "?",
	// an empty IP and the port the client asked is the node that
	// answered, which does not know its own IP: it is reached at the
	// address the client asked, and is no error.)
	ErrNoHostname = errors.New("shardis: cluster prefers hostnames but a node announces none")

	// ErrNoSeeds means Discover was given no seed address.
	ErrNoSeeds = errors.New("shardis: no seed address to discover the cluster from")
)
