package reshard_test

import (
	"context"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/reshard"
)

// The arming probe's MIGRATE is waited for as long as its steps may take
// under the processes' MIGRATE timeout (five of them and a second, as its
// error says), not the pool's read timeout alone. With a read timeout of
// 3 s, the processes MIGRATE with a timeout of 1.5 s, which bounds each
// step (AUTH, SELECT, RESTORE), not the whole command: a new node behind
// a slow link answers each 1.26 s after the previous one, each step in
// time, the whole MIGRATE in 3.8 s. The probe gave up after the read
// timeout, said the old node had not answered "within 8.5s", and the Move
// failed before it began.
func TestReview15ProbeWaitsForASlowMigrateAsItSays(t *testing.T) {
	const pw = "pr0be-wait"
	servers := redistest.StartNTB(t, 2, redistest.Options{DefaultPassword: pw})
	u := func(s *redistest.Server, name string) string {
		return "redis-ring://:" + pw + "@" + s.Addr + "?names=" + name + "&read_timeout=3s&health_interval=200ms"
	}
	from, to := mustParse(t, u(servers[0], "s0")), mustParse(t, u(servers[1], "s1"))
	conn, err := redis.Dial("tcp", servers[0].Addr, redis.DialPassword(pw))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if _, err := conn.Do("SET", "pw:1", 1); err != nil {
		t.Fatal(err)
	}
	proxy := startSlowReplyProxy(t, servers[1].Addr, 1260*time.Millisecond, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	start := time.Now()
	rep, err := reshard.Move(ctx, reshard.Options{From: from, To: to, SkipClientCheck: true, SkipVerify: true,
		Addrs: map[string]string{servers[1].Addr: proxy.addr}, Timeout: 1500 * time.Millisecond, MaxBlock: time.Minute})
	t.Logf("after %v; %d answers passed on", time.Since(start), proxy.lines.Load())
	if err != nil {
		t.Fatalf("Move: %v", err)
	}
	if rep.Moved != 1 {
		t.Errorf("%d keys moved, want 1", rep.Moved)
	}
}
