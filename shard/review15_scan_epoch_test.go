package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReview15ParseMyEpoch: the config epoch of the "myself" line of a
// CLUSTER NODES reply, not another node's; none without a myself line or
// with a malformed epoch.
func TestReview15ParseMyEpoch(t *testing.T) {
	text := "aaa 127.0.0.1:7001@17001 master - 0 1 7 connected 5461-10922\n" +
		"bbb 127.0.0.1:7000@17000 myself,master - 0 0 4 connected 0-5460\n"
	e, ok := parseMyEpoch(text)
	require.True(t, ok)
	require.Equal(t, uint64(4), e)

	_, ok = parseMyEpoch("aaa 127.0.0.1:7001@17001 master - 0 1 2 connected 0-16383\n")
	require.False(t, ok, "no myself line")
	_, ok = parseMyEpoch("bbb :7000@17000 myself,master - 0 0 x connected 0-3\n")
	require.False(t, ok, "a malformed epoch")
}
