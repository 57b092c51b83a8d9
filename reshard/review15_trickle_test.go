package reshard_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
	"github.com/shardis/shardis/shard"
)

// An old node that sends some replies a byte every 2 s (10 s or more for
// each) stops the mover with a timeout naming the node, within the
// mover's timeouts (a read timeout of 500 ms, a MIGRATE Timeout of
// 500 ms, whose reply is waited for twice that and a second), whichever
// of its replies it trickles: a SCAN page, a MIGRATE's answer, CLIENT
// LIST (the check of the connections), the arming probe's MIGRATE, a
// DUMP (Options.Dump); and so does Verify, with a trickled SCAN page.
func TestReview15TrickledOldNodeReplyEndsTheMoveInTime(t *testing.T) {
	const bound = 5 * time.Second
	for _, tc := range []struct {
		name  string
		match func(cmd string, reply []byte) bool
		opts  func(o *reshard.Options)
	}{
		{"SCAN", func(cmd string, _ []byte) bool { return cmd == "SCAN" }, func(o *reshard.Options) { o.SkipProbe = true }},
		{"MIGRATE", func(cmd string, _ []byte) bool { return cmd == "MIGRATE" }, func(o *reshard.Options) { o.SkipProbe = true }},
		{"CLIENT LIST", func(cmd string, reply []byte) bool { return cmd == "CLIENT" && bytes.HasPrefix(reply, []byte("$")) },
			func(o *reshard.Options) { o.SkipClientCheck = false; o.AllowUnnamed = true; o.SkipProbe = true }},
		{"probe", func(cmd string, _ []byte) bool { return cmd == "MIGRATE" }, func(o *reshard.Options) {}},
		{"DUMP", func(cmd string, _ []byte) bool { return cmd == "DUMP" }, func(o *reshard.Options) { o.Dump = true; o.SkipProbe = true }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			servers := redistest.StartNTB(t, 2, redistest.Options{})
			direct, err := redis.Dial("tcp", servers[0].Addr)
			if err != nil {
				t.Fatal(err)
			}
			defer direct.Close()
			for i := range 20 {
				if _, err := direct.Do("SET", fmt.Sprintf("tk:%d", i), i); err != nil {
					t.Fatal(err)
				}
			}
			px := redistest.StartTrickleProxy(t, servers[0].Addr, 2*time.Second, tc.match)
			from := mustParse(t, "redis-ring://"+px.Addr+"?names=s0&read_timeout=500ms&health_interval=1s")
			to := mustParse(t, "redis-ring://"+servers[1].Addr+"?names=s1&read_timeout=500ms&health_interval=1s")
			opts := reshard.Options{From: from, To: to, SkipClientCheck: true, Timeout: 500 * time.Millisecond}
			tc.opts(&opts)
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			start := time.Now()
			_, err = reshard.Move(ctx, opts)
			took := time.Since(start)
			t.Logf("after %v: %v", took, err)
			if err == nil {
				t.Fatal("the Move succeeded")
			}
			if ctx.Err() != nil || took > bound {
				t.Errorf("the Move took %v, over %v", took, bound)
			}
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Errorf("not a timeout: %v", err)
			}
			var nerr *shard.NodeError
			if !(errors.As(err, &nerr) && nerr.Node.Addr == px.Addr) && !strings.Contains(err.Error(), px.Addr) {
				t.Errorf("the old node %s is not named: %v", px.Addr, err)
			}
		})
	}
}

func TestReview15TrickledScanEndsVerifyInTime(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{})
	direct, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	if _, err := direct.Do("SET", "tk:1", 1); err != nil {
		t.Fatal(err)
	}
	px := redistest.StartTrickleProxy(t, srv.Addr, 2*time.Second, func(cmd string, _ []byte) bool { return cmd == "SCAN" })
	cfg := mustParse(t, "redis-ring://"+px.Addr+"?names=s0&read_timeout=500ms&health_interval=1s")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	start := time.Now()
	_, err = reshard.Verify(ctx, cfg, reshard.VerifyOptions{})
	took := time.Since(start)
	t.Logf("after %v: %v", took, err)
	var nerr *shard.NodeError
	var ne net.Error
	switch {
	case err == nil:
		t.Fatal("Verify succeeded")
	case ctx.Err() != nil || took > 3*time.Second:
		t.Errorf("Verify took %v", took)
	case !errors.As(err, &ne) || !ne.Timeout():
		t.Errorf("not a timeout: %v", err)
	case !(errors.As(err, &nerr) && nerr.Node.Addr == px.Addr) && !strings.Contains(err.Error(), px.Addr):
		t.Errorf("the node %s is not named: %v", px.Addr, err)
	}
}
