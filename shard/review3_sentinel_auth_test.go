package shard_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// A Sentinel shard's master that starts refusing the client's credentials
// (the password was rotated on the server, not in the client) fails the
// call at once with the authentication error, as in cluster and ring
// mode: no failover brings credentials that work, so waiting FailoverWait
// for "a new master" only delays the real cause, and the error must not
// read as if the master were gone.
func TestSentinelWrongPasswordFailsAtOnce(t *testing.T) {
	set := startSentinelSetApart(t)
	cfg := sentinelConfig(set)
	const wait = 20 * time.Second
	cfg.Sentinel.FailoverWait = wait
	ctx := context.Background()
	client, err := shard.New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	if _, err := client.Do(ctx, "SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	// Rotate the password on the master and drop the client's
	// connections, so that the next command must dial and authenticate.
	if _, err := master.Do("ACL", "SETUSER", sentDataUser, "resetpass", ">rotated-elsewhere"); err != nil {
		t.Fatal(err)
	}
	if _, err := master.Do("CLIENT", "KILL", "USER", sentDataUser); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"SET", "GET"} {
		start := time.Now()
		args := []any{"k"}
		if cmd == "SET" {
			args = append(args, "v")
		}
		_, err := client.Do(ctx, cmd, args...)
		took := time.Since(start)
		t.Logf("%s: %v after %v", cmd, err, took)
		if !errors.Is(err, pool.ErrAuth) {
			t.Fatalf("%s = %v, want an error matching pool.ErrAuth", cmd, err)
		}
		var re *shard.RetryError
		if errors.As(err, &re) {
			t.Errorf("%s = %v: an authentication failure reported as a retry that found no new master", cmd, err)
		}
		var uo *shard.UnknownOutcomeError
		if errors.As(err, &uo) {
			t.Errorf("%s = %v: nothing was sent, yet the outcome is called unknown", cmd, err)
		}
		if took > wait/2 {
			t.Errorf("%s took %v: it waited for a failover that cannot fix credentials", cmd, took)
		}
	}
}
