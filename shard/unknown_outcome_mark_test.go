package shard

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard/command"
)

// TestMarkUnknownOutcomes: which ring-mode failures become an
// *UnknownOutcomeError (a write that left and whose connection failed)
// and which stay as they are, keeping every error they wrap.
func TestMarkUnknownOutcomes(t *testing.T) {
	n := Node{Name: "a", Addr: "127.0.0.1:1"}
	nodeErr := func(err error) error { return &NodeError{Node: n, Err: err} }
	moved := &MigrateError{Key: "k", From: n, Err: nodeErr(io.EOF)}
	for _, tc := range []struct {
		name        string
		cmd         string
		err         error
		wantUnknown bool
	}{
		{"write, connection reset after sending", "SET", nodeErr(io.EOF), true},
		{"write, read timeout after sending", "INCR", nodeErr(fmt.Errorf("read: %w", os.ErrDeadlineExceeded)), true},
		{"write, the caller's deadline passed", "INCR", nodeErr(fmt.Errorf("read: %w", context.DeadlineExceeded)), false},
		{"unknown command, connection reset", "MYMODULE.WRITE", nodeErr(io.EOF), true},
		{"read, connection reset", "GET", nodeErr(io.EOF), false},
		{"write, refused dial", "SET", nodeErr(&pool.DialError{Addr: n.Addr, Err: io.EOF}), false},
		{"write, node marked down", "SET", nodeErr(ErrNodeDown), false},
		{"write, pool exhausted", "SET", nodeErr(redis.ErrPoolExhausted), false},
		{"write, caller cancelled", "SET", nodeErr(context.Canceled), false},
		{"write, a move that failed", "SET", moved, false},
		{"write, server error reply", "SET", redis.Error("WRONGTYPE x"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cl := &call{name: tc.cmd, info: command.Lookup(tc.cmd), err: tc.err}
			markUnknownOutcomes([]*call{cl})
			var uo *UnknownOutcomeError
			if got := errors.As(cl.err, &uo); got != tc.wantUnknown {
				t.Fatalf("UnknownOutcomeError: got %v, want %v (%v)", got, tc.wantUnknown, cl.err)
			}
			if !errors.Is(cl.err, tc.err) {
				t.Fatalf("the original error is no longer wrapped: %v", cl.err)
			}
			var me *MigrateError
			if errors.As(tc.err, &me) && !errors.As(cl.err, &me) {
				t.Fatalf("the MigrateError is hidden: %v", cl.err)
			}
		})
	}
}
