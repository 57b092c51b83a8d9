// Package reshard moves every key whose owner changes between two shardis
// topologies (ring to ring, ring to Redis Cluster, or any shard.Router) while
// clients in migration mode keep serving them, and verifies that each key
// sits on the node that owns it.
//
// The mover and the clients build their routers the same way (a
// shard.Client with Config.Migration), so they can never disagree about a
// key's owner. See docs/resharding.md for the protocol a deployment
// follows and why each step is safe.
package reshard
