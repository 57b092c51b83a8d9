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

// SetTestHookEach sets (nil: clears) what Move runs before each MIGRATE
// of a key moved on its own after its batch met BUSYKEY.
func SetTestHookEach(f func(n shard.Node, k string)) { testHookEach = f }

// SetTestHookDump sets (nil: clears) what Move runs as a DUMP/RESTORE
// batch begins, before it pauses the old node's writes.
func SetTestHookDump(f func(n shard.Node, keys []string)) { testHookDump = f }

// SetTestHookDelete sets (nil: clears) what Move runs once a DUMP/RESTORE
// batch is restored, before the old copies are deleted.
func SetTestHookDelete(f func(n shard.Node, keys []string)) { testHookDelete = f }
