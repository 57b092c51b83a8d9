package ring

import (
	"errors"

	"github.com/shardis/shardis/hashtag"
)

// Sentinel errors. Functions of this package wrap them with detail (the
// offending shard, entry or name), so test for them with errors.Is.
var (
	// ErrNoShards means the configuration or shard list holds no shard.
	ErrNoShards = errors.New("shardis: no shards")
	// ErrBadWeight means a shard weight is zero, negative, or so small
	// relative to the others that the shard would own no point.
	ErrBadWeight = errors.New("shardis: bad shard weight")
	// ErrDuplicateShard means two shards share a name, a server (the same
	// address, or two spellings of it such as "[::1]" and "[0::1]"), a
	// label or (ketama and modula) a continuum name.
	ErrDuplicateShard = errors.New("shardis: duplicate shard")
	// ErrTooManyPoints means the ring would hold more than MaxPoints
	// virtual nodes (or modula slots).
	ErrTooManyPoints = errors.New("shardis: too many ring points")
	// ErrBadShard means a shard has an invalid address or name.
	ErrBadShard = errors.New("shardis: bad shard")
	// ErrBadShardList means a shard list given to ParseShards is malformed.
	ErrBadShardList = errors.New("shardis: bad shard list")
	// ErrUnknownAlgorithm means Config.Algorithm names no known algorithm.
	ErrUnknownAlgorithm = errors.New("shardis: unknown ring algorithm")
	// ErrUnknownHash means Config.KeyHash names no key hash that the
	// algorithm supports.
	ErrUnknownHash = errors.New("shardis: unknown key hash")
	// ErrBadTag means Config.Tag names no valid hash-tag rule. It is
	// hashtag.ErrBadRule, so either name matches.
	ErrBadTag = hashtag.ErrBadRule
)
