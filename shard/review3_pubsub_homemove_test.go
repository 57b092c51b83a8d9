package shard_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
)

// When a cluster home answers BUSY, its channels move to another master;
// PUBLISH is broadcast to every node. The channel was subscribed at the
// new home at once while the busy node, which cannot take the
// UNSUBSCRIBE yet, kept it: from the end of the script until the
// UNSUBSCRIBE was sent again, every message was delivered twice, against
// the at-most-once rule. The new home now subscribes it once the old one
// has let it go. (The test holds the subscription's lock so that the
// UNSUBSCRIBE cannot be sent again while it counts.)
func TestReview3PubSubHomeMoveNeverSubscribedTwice(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	bh := startBusyHome(t, "r3hm")
	masters, sub, old, end := bh.masters, bh.sub, bh.old, bh.end
	// y went to the new home; x, in the old code with it (one SUBSCRIBE).
	var home *redistest.Server
	waitFor(t, 10*time.Second, "y at a new home", func() bool {
		for _, m := range masters {
			if m != old && numSub(t, m, "NUMSUB", "r3hm:y") == 1 {
				home = m
				return true
			}
		}
		return false
	})
	waitFor(t, 10*time.Second, "the old home's refusal of x's UNSUBSCRIBE", func() bool { return sub.Stats().ServerErrors >= 2 })

	h := shard.HoldSubscription(sub)
	released := false
	defer func() {
		if !released {
			h.Release()
		}
	}()
	end()
	assert.Equal(t, 1, numSub(t, old, "NUMSUB", "r3hm:x")+numSub(t, home, "NUMSUB", "r3hm:x"),
		"x subscribed on one master: a PUBLISH, broadcast, reaches the subscription once")
	h.Release()
	released = true

	waitFor(t, 10*time.Second, "x at the new home only", func() bool {
		return numSub(t, old, "NUMSUB", "r3hm:x") == 0 && numSub(t, home, "NUMSUB", "r3hm:x") == 1
	})
}
