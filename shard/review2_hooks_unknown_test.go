package shard_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// startResetter is a byte-level fake server for a protocol fault: it
// reads each connection's first command and closes the connection without
// a reply, as a server that crashed after it got the command.
func startResetter(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer conn.Close()
				r := bufio.NewReader(conn)
				_ = conn.SetReadDeadline(time.Now().Add(10 * time.Second))
				line, err := r.ReadString('\n') // "*<n>": the command has arrived
				if err != nil || !strings.HasPrefix(line, "*") {
					return
				}
			}()
		}
	}()
	return ln.Addr().String()
}

// TestHooksRingWriteResetAfterSendIsUnknown checks that in ring mode, as in
// cluster mode, hooks report a write whose connection failed after it was
// sent as OutcomeUnknown (it may have run), for the attempt and for the
// operation, and a read that failed so as a plain failure.
func TestHooksRingWriteResetAfterSendIsUnknown(t *testing.T) {
	addr := startResetter(t)
	tests := []struct {
		name string
		args []any
		want shard.Outcome
	}{
		{"write", []any{"INCR", "n"}, shard.OutcomeUnknown},
		{"read", []any{"GET", "n"}, shard.OutcomeFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rec := &recorder{}
			cfg := shard.Config{Shards: []ring.Shard{{Name: "s", Addr: addr, Weight: 1}}}
			cfg.Pool.DialTimeout, cfg.Pool.ReadTimeout = time.Second, 5*time.Second
			cfg.Health.Interval = -1
			cfg.Hooks = rec.hooks()
			c := newClient(t, cfg)
			_, err := c.Do(context.Background(), tt.args[0].(string), tt.args[1:]...)
			var uo *shard.UnknownOutcomeError
			if got := errors.As(err, &uo); got != (tt.want == shard.OutcomeUnknown) {
				t.Fatalf("%v: %v: an *UnknownOutcomeError is %v, want %v", tt.args, err, got, !got)
			}
			got := rec.snapshot()
			if len(got.commands) != 1 || len(got.ops) != 1 {
				t.Fatalf("%d command events and %d ops, want 1 each", len(got.commands), len(got.ops))
			}
			if o := got.commands[0].Outcome; o != tt.want {
				t.Errorf("attempt outcome %v, want %v (%v)", o, tt.want, got.commands[0].Err)
			}
			if o := got.ops[0].Outcome; o != tt.want {
				t.Errorf("operation outcome %v, want %v (%v)", o, tt.want, got.ops[0].Err)
			}
		})
	}
}
