package shard

import (
	"errors"
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/errtext"
)

// tlsHint adds to a MIGRATE's IOERR, when the client's pool options use
// TLS, what an old node needs to reach a new node that accepts TLS only:
// a server's MIGRATE dials in plain text unless it runs with tls-cluster
// yes, and then fails with IOERR on every key, however often the client
// retries. Other errors are returned as they are.
func (c *Client) tlsHint(err error) error {
	var re redis.Error
	if c.cfg.Pool.TLSConfig == nil || !errors.As(err, &re) || !strings.HasPrefix(string(re), "IOERR") {
		return err
	}
	return errtext.Errorf("%w (an old node's MIGRATE reaches a new node that accepts TLS only when the old node runs with tls-cluster yes and trusts the new node's certificate; see TLS between servers in docs/resharding.md)", err)
}

// migrateTarget returns the address an old owner reaches the new owner
// dst at, for MIGRATE. A Sentinel shard's node address is the key of its
// pools (sentinelPrefix + name), not a host:port that a server could connect
// to: its verified master at this moment is the target. Migration.Addrs
// maps either form.
func (c *Client) migrateTarget(m *migState, dst Node) (string, error) {
	if a, ok := m.addrs[dst.Addr]; ok && a != "" {
		return a, nil
	}
	addr, err := c.NodeAddr(dst)
	if err != nil {
		return "", err
	}
	if a, ok := m.addrs[addr]; ok && a != "" {
		return a, nil
	}
	return addr, nil
}

// NodeAddr returns the address (host:port) that the client's connections
// to node reach now. A Sentinel shard's Node.Addr names the shard
// ("sentinel/<name>"), not a server: NodeAddr returns the shard's verified
// master at this moment, or an error matching pool.ErrNoAddr while it has
// none. Any other node's address is returned as it is. A tool that reaches
// a client's nodes through connections of its own, or names a node to a
// server (MIGRATE's target), uses it: the mover of package reshard does.
func (c *Client) NodeAddr(node Node) (string, error) {
	if c.sent != nil && strings.HasPrefix(node.Addr, sentinelPrefix) {
		for _, sh := range c.sent.shards {
			if sh.key == node.Addr {
				return sh.resolve()
			}
		}
	}
	return node.Addr, nil
}

// sentinelMigrationErr says why a migration between the topologies of own
// (the client's config) and other (the one keys move from or to) cannot
// run with Sentinel shards, or returns nil:
//
//   - other names Sentinel shards: only the client's own Sentinel shards
//     have Sentinels to find their masters; other's would be routed to
//     their placeholder addresses, which never resolve.
//   - own reads from Sentinel replicas: a replica cannot take a moving key
//     (MIGRATE writes it to the node a read was sent to) and cannot see a
//     key that has not moved yet.
func sentinelMigrationErr(own, other Config) error {
	if len(other.Sentinel.Shards) > 0 {
		return errors.New("the other topology of a migration cannot have Sentinel shards (only the client's own Sentinel shards are followed)")
	}
	if len(own.Sentinel.Shards) > 0 {
		if rf := own.Sentinel.ReadFrom; rf != "" && rf != ReadMaster {
			return errors.New("replica reads cannot see keys being moved; read Sentinel shards from their masters during a migration")
		}
	}
	return nil
}
