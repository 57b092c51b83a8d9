package shard_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// In cluster mode a channel lives on one master, the subscription's home,
// and PUBLISH is broadcast to every node. A home that answers BUSY is
// left for another master; the UNSUBSCRIBE that takes the channel off the
// old home, refused BUSY too, was dropped because the channel was still
// wanted (elsewhere): the old home kept it subscribed for good, and every
// message published afterwards was delivered twice. It is sent again
// until the node takes it.
func TestReview3PubSubStrayUnsubscribeRefusedIsRetried(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster")
	}
	bh := startBusyHome(t, "r3mv")
	masters, sub, old, end, ne := bh.masters, bh.sub, bh.old, bh.end, bh.ne
	require.Equal(t, old.Addr, ne.Node.Addr)
	// The SUBSCRIBE, then the UNSUBSCRIBE of the channel the home carried
	// (sent once the node's backoff passed), were refused.
	waitFor(t, 10*time.Second, "the unsubscribe refused", func() bool { return sub.Stats().ServerErrors >= 2 })
	end()

	on := func(ch string) int {
		n := 0
		for _, m := range masters {
			n += numSub(t, m, "NUMSUB", ch)
		}
		return n
	}
	waitFor(t, 10*time.Second, "the old home to drop the channel", func() bool {
		return numSub(t, old, "NUMSUB", "r3mv:x") == 0
	})
	waitFor(t, 10*time.Second, "each channel on exactly one master", func() bool {
		return on("r3mv:x") == 1 && on("r3mv:y") == 1
	})
}
