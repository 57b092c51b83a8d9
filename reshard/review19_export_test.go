package reshard

import "github.com/shardis/shardis/shard"

// SetTestHookPage sets (nil: clears) what Move runs once a page of an old
// node's keys is sorted, before they move.
func SetTestHookPage(f func(n shard.Node)) { testHookPage = f }

// SetTestHookScan sets (nil: clears) what Move runs before the first SCAN
// of each old node.
func SetTestHookScan(f func(n shard.Node)) { testHookScan = f }

// SetTestHookBeforeFenceSet sets (nil: clears) what Arm and Move run
// before they write the fence's marker.
func SetTestHookBeforeFenceSet(f func()) { testHookBeforeFenceSet = f }
