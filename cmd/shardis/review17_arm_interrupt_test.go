package main

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// Interrupted while it waited for the processes to acknowledge the fence,
// reshard said "interrupted; run the same command again to move the rest:
// arming the migration: context canceled", and left the marker at
// "fenced": every migrating process's command on a key that moves waits
// and fails until the fence is armed, which the message did not say (the
// timeout's error does). An operator who stops there, taking it for
// nothing done, leaves the application failing.
func TestReview17InterruptWhileArmingSaysTheFenceIsUp(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	const keys = 300
	for i := 0; i < keys; i++ {
		if _, err := servers[0].Do("SET", fmt.Sprintf("k%d", i), "v"); err != nil {
			t.Fatal(err)
		}
	}
	from := fmt.Sprintf("redis-ring://%s?names=a", servers[0].Addr)
	to := fmt.Sprintf("redis-ring://%s,%s?names=a,b", servers[0].Addr, servers[1].Addr)
	fromCfg, err := shard.ParseURL(from)
	if err != nil {
		t.Fatal(err)
	}
	toCfg, err := shard.ParseURL(to)
	if err != nil {
		t.Fatal(err)
	}
	// A migrating process that has not acknowledged the fence (stuck).
	beacon := fmt.Sprintf("shardis:stuck1:migrating:%s>%s", shard.TopologyID(fromCfg), shard.TopologyID(toCfg))
	c, err := redis.Dial("tcp", servers[0].Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("CLIENT", "SETNAME", beacon); err != nil {
		t.Fatal(err)
	}
	fence := shard.FenceKey(shard.TopologyID(fromCfg), shard.TopologyID(toCfg))

	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	var stdout, stderr lockedBuffer
	done := make(chan int, 1)
	go func() {
		done <- run(ctx, &cliEnv{stdin: strings.NewReader(""), stdout: &stdout, stderr: &stderr},
			[]string{"reshard", "--from", from, "--to", to, "--allow-unnamed", "--quiet"})
	}()
	// Interrupt once the fence is up and the mover waits on the beacon.
	var code int
	deadline := time.Now().Add(time.Minute)
	for {
		v, err := servers[0].Do("GET", fence)
		if p, _, ok := shard.ParseFenceValue(v); err == nil && ok && p == shard.PhaseFenced {
			cancel()
			code = <-done
			break
		}
		select {
		case code = <-done:
			t.Fatalf("reshard ended (exit %d) before the fence went up\nstdout: %s\nstderr: %s", code, stdout.String(), stderr.String())
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("the fence never went up\nstderr: %s", stderr.String())
		}
	}
	errOut := stderr.String()
	t.Log(errOut)
	if code != 130 { // interrupted (errInterrupted), not failed
		t.Errorf("exit %d, want 130\nstderr: %s", code, errOut)
	}
	if strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("want one line on stderr:\n%s", errOut)
	}
	for _, want := range []string{"interrupted", "run the same command again", `"fenced"`, "wait"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}

	// The process is gone: the same command arms, moves and verifies.
	c.Close()
	code, out, errOut2 := runCLI(t, "", "reshard", "--from", from, "--to", to, "--allow-unnamed", "--quiet")
	if code != 0 || !strings.Contains(out, "0 misplaced") {
		t.Fatalf("the second run: exit %d\nstdout: %s\nstderr: %s", code, out, errOut2)
	}
	a, b := review17DBSize(t, servers[0]), review17DBSize(t, servers[1])
	if a+b != keys || b == 0 {
		t.Errorf("after the second run: %d keys on a, %d on b; want %d in all, some on b", a, b, keys)
	}
	code, out, errOut2 = runCLI(t, "", "verify", "--config", to)
	if code != 0 {
		t.Errorf("verify after the second run: exit %d\nstdout: %s\nstderr: %s", code, out, errOut2)
	}
}
