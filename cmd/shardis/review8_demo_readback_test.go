package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/shard"
)

// TestReview8DemoChecksWhatItClaims: the failure demo printed "only the
// stopped shard's keys failed" whatever the reads had found. The claim is
// now checked: each way a read can contradict it is reported.
func TestReview8DemoChecksWhatItClaims(t *testing.T) {
	a := shard.Node{Name: "a", Addr: "127.0.0.1:1"}
	b := shard.Node{Name: "b", Addr: "127.0.0.1:2"}
	down := &shard.NodeError{Node: b, Err: errors.New("connection refused")}
	ok := func(v string) shard.Result { return shard.Result{Reply: []byte(v)} }
	tests := []struct {
		name    string
		res     []shard.Result
		owners  []shard.Node
		keys    int
		wrong   string // "" when the claim holds
		okA     int
		failedB int
	}{
		{"holds", []shard.Result{ok("0"), {Err: down}, ok("2")}, []shard.Node{a, b, a}, 3, "", 2, 1},
		{"never written reads nil", []shard.Result{ok("0"), {Reply: nil}}, []shard.Node{a, a}, 1, "", 2, 0},
		{"other shard failed", []shard.Result{{Err: &shard.NodeError{Node: a, Err: errors.New("x")}}}, []shard.Node{a}, 1, "GET demo:user:0 on a", 0, 0},
		{"victim answered", []shard.Result{ok("0")}, []shard.Node{b}, 1, "succeeded on the stopped b", 0, 0},
		{"wrong value", []shard.Result{ok("7")}, []shard.Node{a}, 1, `read "7", want "0"`, 1, 0},
		{"written key missing", []shard.Result{{Reply: nil}}, []shard.Node{a}, 1, `read "", want "0"`, 1, 0},
		{"victim failed without a node error", []shard.Result{{Err: redis.Error("ERR x")}}, []shard.Node{b}, 1, "GET demo:user:0 on b failed", 0, 1},
		{"fewer replies", []shard.Result{ok("0")}, []shard.Node{a, a}, 2, "1 replies for 2 keys", 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rb := checkReadBack(tt.res, tt.owners, b, tt.keys)
			if tt.wrong == "" {
				require.NoError(t, rb.wrong)
			} else {
				require.Error(t, rb.wrong)
				require.Contains(t, rb.wrong.Error(), tt.wrong)
			}
			require.Equal(t, tt.okA, rb.ok[a.String()], fmt.Sprint(rb.ok))
			require.Equal(t, tt.failedB, rb.failed[b.String()], fmt.Sprint(rb.failed))
		})
	}
}
