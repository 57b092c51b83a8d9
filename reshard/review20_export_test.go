package reshard

import "github.com/shardis/shardis/shard"

// SetTestHookDrained sets (nil: clears) what Move runs once the drain of
// an old node has ended.
func SetTestHookDrained(f func(n shard.Node)) { testHookDrained = f }
