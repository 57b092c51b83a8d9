// Package hashtag decides which bytes of a key are hashed when keys are
// spread over servers.
//
// A hash tag lets related keys land on the same server: with the Redis
// Cluster rule, "{user1000}.following" and "{user1000}.followers" both hash
// "user1000". Different clients disagree on how a tag is found, so a [Rule]
// names the convention to follow:
//
//   - [Cluster]: the Redis Cluster rule (the first '{', then the first '}'
//     after it, with at least one byte between them).
//   - [Jedis]: the default key-tag pattern of Jedis's ShardedJedis and
//     JedisSharding, the Java regular expression \{(.+?)\}.
//   - [Pair]: twemproxy's hash_tag setting, two delimiter bytes. twemproxy
//     takes any two bytes; Pair takes printable ASCII ones only, and not
//     two letters or digits ("no", "ok": a misspelt name, not delimiters).
//   - [None]: the whole key is hashed.
//
// A tag is always a substring of the key, and finding it never allocates.
// Rules are small comparable values, safe to copy and to use from many
// goroutines at once.
package hashtag
