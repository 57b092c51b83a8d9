package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReview16ParseInfoEpoch: cluster_my_epoch of a CLUSTER INFO reply
// (CRLF lines), not cluster_current_epoch; none without it or with a
// malformed value.
func TestReview16ParseInfoEpoch(t *testing.T) {
	text := "cluster_state:ok\r\ncluster_current_epoch:9\r\ncluster_my_epoch:4\r\ncluster_stats_messages_sent:10\r\n"
	e, ok := parseInfoEpoch(text)
	require.True(t, ok)
	require.Equal(t, uint64(4), e)

	_, ok = parseInfoEpoch("cluster_state:ok\r\ncluster_current_epoch:9\r\n")
	require.False(t, ok, "no cluster_my_epoch")
	_, ok = parseInfoEpoch("cluster_my_epoch:x\r\n")
	require.False(t, ok, "a malformed epoch")
}
