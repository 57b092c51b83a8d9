// Package placement compares key placement strategies offline: no server is
// contacted. For every strategy and every shard layout it measures, over one
// set of keys,
//
//   - balance: how many keys each shard gets, against its fair share (the
//     share its weight entitles it to);
//   - movement: which fraction of the keys changes shard when one shard is
//     added and when one is removed, against the least possible fraction,
//     and whether any key moves between two shards that are in both layouts
//     (a consistent strategy moves none);
//   - lookup cost: nanoseconds and heap allocations per lookup, measured in
//     the same process run for every strategy;
//   - memory: the heap bytes the routing structure keeps.
//
// The strategies are the ring algorithms of package ring (murmur3, jedis,
// ketama, modula), Redis Cluster hash slots (slots) and two baselines that
// shardis does not offer but that are often suggested: rendezvous hashing as
// the Ring client of go-redis does it and Lamping and Veach's jump
// consistent hash (see package bench).
//
// Run does the measuring; Report holds the figures and marshals to JSON.
// Package report turns a Report into tables, Markdown and charts.
package placement
