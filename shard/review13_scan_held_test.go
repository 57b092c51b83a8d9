package shard

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReview13ParseHeldSlots: the slots a master holds keys of, as its
// CLUSTER NODES "myself" line says: those it serves and those it imports
// ("[slot-<-id]"), not those other nodes serve nor a migrating marker's
// alone ("[slot->-id]": the slot is listed as served too).
func TestReview13ParseHeldSlots(t *testing.T) {
	text := "aaa 127.0.0.1:7001@17001 master - 0 1 2 connected 5461-5463 [9000->-ccc]\n" +
		"bbb 127.0.0.1:7000@17000 myself,master - 0 0 1 connected 0-2 7 [9000-<-ccc] [5461->-aaa]\n" +
		"ccc 127.0.0.1:7002@17002 master - 0 1 3 connected 9000\n"
	held, ok := parseHeldSlots(text)
	require.True(t, ok)
	require.Equal(t, map[int]bool{0: true, 1: true, 2: true, 7: true, 9000: true}, held)

	_, ok = parseHeldSlots("aaa 127.0.0.1:7001@17001 master - 0 1 2 connected 0-16383\n")
	require.False(t, ok, "no myself line")
	_, ok = parseHeldSlots("bbb :7000@17000 myself,master - 0 0 1 connected 5-3\n")
	require.False(t, ok, "a malformed range")
}
