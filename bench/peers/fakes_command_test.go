package peers

import (
	"context"
	"fmt"
	"log"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/shardis/shardis/internal/redistest"
)

// logRecorder keeps what go-redis logs.
type logRecorder struct {
	mu    sync.Mutex
	lines []string
}

func (l *logRecorder) Printf(_ context.Context, format string, v ...any) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.lines = append(l.lines, fmt.Sprintf(format, v...))
}

func (l *logRecorder) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// stderrLogger logs as go-redis does by default.
type stderrLogger struct{}

func (stderrLogger) Printf(_ context.Context, format string, v ...any) {
	log.Printf(format, v...)
}

// TestGoRedisClusterLearnsCommandsFromFakes checks that fakeredis
// describes its commands to go-redis's ClusterClient as redis-server
// does: without that, go-redis logs "info for cmd=... not found" on
// every single command, which is not what it costs against Redis.
func TestGoRedisClusterLearnsCommandsFromFakes(t *testing.T) {
	ctx := context.Background()
	rec := &logRecorder{}
	redis.SetLogger(rec)
	t.Cleanup(func() { redis.SetLogger(stderrLogger{}) })

	fake := newGoRedisCluster(t, startFakes(t, 3, true))
	for i := range 50 {
		key := fmt.Sprintf("k%d", i)
		if err := fake.Set(ctx, key, "v", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := fake.Get(ctx, key).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if lines := rec.all(); len(lines) > 0 {
		t.Fatalf("go-redis logged %d lines against fakeredis, the first: %q", len(lines), lines[0])
	}

	fakeInfo, err := fake.Command(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	srv := redistest.StartNTB(t, 1, redistest.Options{})[0]
	real := redis.NewClient(&redis.Options{Addr: srv.Addr})
	defer real.Close()
	realInfo, err := real.Command(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	// The commands the steady and single-command benchmarks send, and
	// those clients send on their own.
	names := strings.Fields("set get mget ping hello cluster command del exists unlink touch " +
		"dbsize info quit auth select client readonly readwrite asking flushall flushdb")
	if len(fakeInfo) != len(names) {
		t.Errorf("fakeredis describes %d commands, want %d", len(fakeInfo), len(names))
	}
	for _, name := range names {
		f, r := fakeInfo[name], realInfo[name]
		if f == nil || r == nil {
			t.Errorf("%s: fakeredis %v, redis-server %v", name, f, r)
			continue
		}
		if !reflect.DeepEqual(f, r) {
			t.Errorf("%s: fakeredis says %+v, redis-server %+v", name, *f, *r)
		}
	}
	if get := fakeInfo["get"]; get == nil || !get.ReadOnly || get.FirstKeyPos != 1 {
		t.Errorf("get: %+v, want read-only with its key at 1", get)
	}
}
