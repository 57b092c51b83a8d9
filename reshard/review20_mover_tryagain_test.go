package reshard_test

import (
	"slices"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// TestReview20MoverSplitsABatchTheImportingMasterRefuses: a slot of the
// old cluster is left half moved by its operator, every key of it gone
// to the importing master, and a client deletes one of them there. The
// mover's batch of the slot's keys meets ASK at the slot's migrating
// master (none of them is there) and TRYAGAIN at the importing one (one
// of them is missing there): nothing ran. It is split into its keys,
// each moved from the importing master (ASKING); the deleted key is not
// brought back, and no key is waited for or left behind although the
// slot stays half moved for the whole run.
func TestReview20MoverSplitsABatchTheImportingMasterRefuses(t *testing.T) {
	r := newFallbackRig(t)
	deleted := r.tagKeys[7]
	var once sync.Once
	var hookErr error
	reshard.SetTestHookPage(func(n shard.Node) {
		if n.Addr != r.owner.Addr {
			return
		}
		once.Do(func() {
			if hookErr = r.halfMove(r.tagKeys); hookErr != nil {
				return
			}
			conn := newRawConn(t, r.other)
			if _, hookErr = conn.Do("ASKING"); hookErr == nil {
				_, hookErr = conn.Do("DEL", deleted)
			}
		})
	})
	defer reshard.SetTestHookPage(nil)
	// The deleted key is moved nowhere: checkOut wants it nowhere.
	r.keys = slices.DeleteFunc(r.keys, func(k string) bool { return k == deleted })
	moveAndCheck(t, r, "the slot was half moved", reshard.Options{}, &once, &hookErr)
	for _, s := range append(append([]*redistest.Server{}, r.old.Masters()...), r.servers...) {
		if n, err := s.Do("EXISTS", deleted); err == nil && n == "1" {
			t.Errorf("the deleted key %s is back on %s", deleted, s.Addr)
		}
	}
}
