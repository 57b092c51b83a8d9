package shard

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard/command"
)

// TestReview14WaitAOFBlocksLikeWait: WAITAOF (Redis 7.2) blocks like WAIT
// until its timeout, its third argument in milliseconds (0: forever),
// passes. The table, of an older Redis, does not know it, and blockFor
// took it for a command that answers at once: the executor waited for
// its reply for the read timeout only, and a lent connection given back
// with its reply unread drained it. It must block, with its timeout,
// whether the call carries the entry learned from a server's COMMAND
// INFO or none (a lent connection looks commands up in the table only).
func TestReview14WaitAOFBlocksLikeWait(t *testing.T) {
	// A Redis 7.2 server's COMMAND INFO WAITAOF entry, as redigo reads it.
	learned, err := command.FromCommandInfo([]any{
		[]byte("waitaof"), int64(4), []any{"noscript"}, int64(0), int64(0), int64(0),
		[]any{[]byte("@slow"), []byte("@connection")},
		[]any{[]byte("request_policy:all_shards"), []byte("response_policy:agg_min")},
		[]any{}, []any{},
	})
	require.NoError(t, err)
	require.Nil(t, lookupCommand("waitaof"), "the table knows WAITAOF: test it from the table too")

	tests := []struct {
		name  string
		args  []any
		info  *command.Info
		block bool
		wait  time.Duration // 0: without limit
	}{
		{"WAITAOF", []any{1, 0, 100}, learned, true, 100 * time.Millisecond},
		{"waitaof", []any{"0", "1", "2500"}, learned, true, 2500 * time.Millisecond},
		{"WAITAOF", []any{1, 0, 0}, learned, true, 0},
		{"WAITAOF", []any{1, 0}, learned, true, 0}, // the server refuses it; no limit assumed
		{"WAITAOF", []any{1, 0, 100}, nil, true, 100 * time.Millisecond},
		{"WaitAOF", []any{0, 1, "0"}, nil, true, 0},
		{"WAIT", []any{1, 100}, lookupCommand("wait"), true, 100 * time.Millisecond},
		{"WAITAOX", []any{1, 0, 100}, nil, false, 0},
		{"NOSUCH", []any{1, 0, 100}, nil, false, 0},
	}
	for _, tt := range tests {
		cl := &call{name: tt.name, args: tt.args, info: tt.info}
		d, ok := blockFor(cl)
		assert.Equal(t, tt.block, ok, "%s %v (entry %v) blocks", tt.name, tt.args, tt.info != nil)
		assert.Equal(t, tt.wait, d, "%s %v (entry %v) waits", tt.name, tt.args, tt.info != nil)
		assert.Equal(t, tt.block, isBlocking(cl))
	}
}
