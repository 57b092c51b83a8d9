// Package bench holds the baselines that shardis is measured against and the
// workloads its benchmarks run.
//
// The baselines are small, self-contained key routers written the way other
// clients route keys, so that a benchmark can put them next to package ring
// in one run:
//
//   - Rendezvous: highest-random-weight hashing as the Ring client of
//     go-redis v9 does it (one xxhash of the key, then one mix per shard);
//   - TreeMap: Jedis's ShardedJedis lookup, a sorted array of
//     MurmurHash64A points searched with sort.Search, the way a Java
//     TreeMap.tailMap lookup works;
//   - Jump: Lamping and Veach's jump consistent hash over an xxhash of the
//     key.
//
// The workloads (Pipelined, HashMod, OneByOne, Keys) are shared by the
// benchmarks of this package and by the peer benchmarks of the nested module
// bench/peers, so that every client runs exactly the same commands.
//
// Everything here is for measuring: the routers are immutable after their
// constructor returns and safe for concurrent use, but they are not part of
// the library's API promise.
package bench
