// Package shard is a Redis client that spreads keys over many servers. One
// Client type serves two modes, chosen by Config.Mode, and the same
// application code runs on either:
//
//   - Ring mode (ModeRing, the default) hashes each key on the client to
//     one of several plain redis-servers, the shards, with consistent
//     hashing (package ring). Placement can match Jedis's ShardedJedis and
//     twemproxy's ketama or modula, so services in other languages share
//     the same shards without moving data.
//   - Cluster mode (ModeCluster) talks to a Redis Cluster: it learns the
//     slot map from seed addresses, sends each command to the master (or a
//     replica, see ClusterOptions.ReadFrom) that owns its key's slot, and
//     follows MOVED and ASK redirects.
//
// # Configuration
//
// A Config names the servers and tunes pools, health checks and cluster
// behaviour; every zero field has a default, and Config.String shows the
// values that will be used. A Config can be written in Go, read from a URL
// with ParseURL:
//
//	redis-ring://user:password@10.0.0.1:6379,10.0.0.2:6379?hash=jedis&weights=2,1
//	rediss-cluster://10.0.1.1:7000,10.0.1.2:7000?read_from=replica-random
//
// or from a YAML or JSON file with LoadConfig (docs/config.md in the
// repository lists every field). Shard weights are 1 or more everywhere; a
// file or URL that leaves a weight out gets 1. Every configuration error
// matches ErrBadConfig and says which field is wrong.
//
// # Commands
//
// New connects and returns a Client, safe for concurrent use; Close it when
// done. Client.Do runs one command on the node that owns its key: the
// client knows where the keys of every Redis command are (package
// shard/command), so
//
//	client.Do(ctx, "SET", "user:1000:name", "Ada")
//	client.Do(ctx, "MGET", "a", "b", "c") // split per shard, merged in key order
//
// need no routing hints. Commands the table does not know (newer than its
// Redis version, module or renamed commands) are learned from the servers
// on first use, with COMMAND INFO checked against COMMAND GETKEYS; one that could not be learned (the
// servers do not know it yet: a module not loaded) is asked about again at most once a second. Commands whose keys live on several shards are
// split and merged when that keeps their meaning (MGET, MSET, DEL, EXISTS,
// TOUCH, UNLINK); others fail with a *CrossShardError and send nothing.
// Keys that share a hash tag, such as {user1000}.following and
// {user1000}.followers, always live together. Client.DoKey names the key
// to route by for commands without one (a script called by SHA, a
// command the table does not know), and Client.ForEachShard,
// ForEachMaster and ForEachNode run a function on every node (FLUSHDB,
// SCRIPT LOAD, INFO).
//
// Replies are redigo replies: convert them with the helpers of
// github.com/gomodule/redigo/redis (redis.String, redis.Int, redis.Values,
// redis.ScanStruct, ...).
//
// # Pipelines, transactions, redigo code, scans
//
//   - Client.Pipeline queues commands and sends them with Exec: one round
//     trip per node, all nodes in parallel, replies in the order sent, each
//     with its own error (Result).
//   - Client.Tx runs MULTI/EXEC on the one node that owns a set of keys,
//     with WATCH for optimistic locking; a changed watched key gives
//     ErrTxAborted.
//   - Client.Conn returns a redis.Conn whose Do, Send, Flush and Receive
//     route every command by its key, so existing redigo code, including
//     redis.NewScript and redis.ScanStruct, works unchanged.
//   - Client.Scan iterates over the keys of every shard (or every master of
//     a cluster), with an optional MATCH pattern and TYPE.
//
// Single commands that goroutines send to one node at the same time share
// a connection and are written in one batch (Config.DisableAutoPipeline
// turns this off).
//
// # Errors
//
// Errors are typed and wrap their cause, so callers use errors.Is and
// errors.As:
//
//   - *NodeError: one node could not be reached (dial, I/O, timeout, or
//     marked down by health checks, ErrNodeDown). Only commands for that
//     node fail; the others go on.
//   - *UnknownOutcomeError: a write was sent but its connection failed
//     before the reply, so it may or may not have run; it is never sent
//     again on its own.
//   - *CrossShardError (ErrCrossShard): the keys of one command live on
//     different shards; its Keys say where each one is.
//   - ErrUnknownCommand, ErrNoKey: the client cannot tell where a command
//     goes (neither the table nor the servers describe its keys); use DoKey
//     or ForEachShard.
//   - *RetryError: cluster mode gave up waiting for a slot to be served
//     (CLUSTERDOWN, TRYAGAIN, failover).
//   - redis.Error: the server's own error reply (WRONGTYPE, NOSCRIPT...),
//     returned as the reply of that command.
//
// Health checks PING every node in the background and mark a node down
// after HealthOptions.FailureLimit failures; commands for a down node fail
// fast with ErrNodeDown until it answers again. With HealthOptions.AutoEject
// (caches only) a down shard's keys are rehashed to the other shards,
// unless its server refuses the client's credentials: such a shard stays
// in the ring and its keys fail with pool.ErrAuth.
//
// Client.Stats and Client.Nodes report per-node counters and state; the
// shardis command (cmd/shardis) prints them, locates keys and checks
// placement.
package shard
