package shard_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// TestLearnUnknownCommandRetriedSoon: a command the server does not know
// (INSPECT, before the server renames OBJECT to it) fails as unknown.
// Once the server is restarted, on the same port, with the rename, the
// command works within a few seconds, not after the half minute the
// refusal used to be kept.
func TestLearnUnknownCommandRetriedSoon(t *testing.T) {
	ctx := context.Background()
	s := redistest.StartTB(t, redistest.Options{})
	c := newClient(t, ringConfig([]*redistest.Server{s}))

	if _, err := c.Do(ctx, "SET", "retry:k", "12"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do(ctx, "INSPECT", "ENCODING", "retry:k"); !errors.Is(err, shard.ErrUnknownCommand) {
		t.Fatalf("INSPECT before the server knows it: %v, want ErrUnknownCommand", err)
	}

	confs, err := filepath.Glob(filepath.Join(s.Dir, "*.conf"))
	if err != nil || len(confs) != 1 {
		t.Fatalf("the server's configuration file: %v, %v", confs, err)
	}
	f, err := os.OpenFile(confs[0], os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.WriteString("rename-command OBJECT INSPECT\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(); err != nil {
		t.Fatal(err)
	}
	restarted := time.Now()
	if _, err := c.Do(ctx, "SET", "retry:k", "12"); err != nil {
		// The pool's connection to the old process may fail once.
		if _, err := c.Do(ctx, "SET", "retry:k", "12"); err != nil {
			t.Fatal(err)
		}
	}

	// A second or so after the restart is fine; a half minute is not.
	const bound = 10 * time.Second
	var lastErr error
	for time.Since(restarted) < bound {
		enc, err := redis.String(c.Do(ctx, "INSPECT", "ENCODING", "retry:k"))
		if err == nil {
			if enc != "int" {
				t.Fatalf("INSPECT ENCODING = %q, want \"int\"", enc)
			}
			return
		}
		lastErr = err
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatalf("INSPECT still fails %v after the server learned it: %v", bound, lastErr)
}
