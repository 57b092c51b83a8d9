package cluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// testTimeout bounds every exchange of these tests with a server.
const testTimeout = 10 * time.Second

func testContext(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// dialRedis opens a plain redigo connection, closed when the test ends.
func dialRedis(t *testing.T, addr string) redis.Conn {
	t.Helper()
	conn, err := redis.DialContext(testContext(t), "tcp", addr)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// deadAddr returns a loopback address where nothing listens.
func deadAddr(t *testing.T) string {
	t.Helper()
	port, err := redistest.FreePort()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

// recordingConn remembers the commands sent through it.
type recordingConn struct {
	redis.Conn
	mu   *sync.Mutex
	cmds *[]string
}

func (c recordingConn) record(cmd string, args []any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	*c.cmds = append(*c.cmds, strings.TrimSpace(cmd+" "+fmt.Sprint(args...)))
}

func (c recordingConn) Do(cmd string, args ...any) (any, error) {
	c.record(cmd, args)
	return c.Conn.Do(cmd, args...)
}

func (c recordingConn) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	c.record(cmd, args)
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

func TestDiscoverNoSeeds(t *testing.T) {
	if _, err := Discover(context.Background(), nil, nil); !errors.Is(err, ErrNoSeeds) {
		t.Fatalf("err = %v, want ErrNoSeeds", err)
	}
}

func TestDiscoverStopsWhenContextEnds(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	dials := 0
	dial := func(ctx context.Context, addr string) (redis.Conn, error) {
		dials++
		return nil, errors.New("should not be called")
	}
	_, err := Discover(ctx, []string{"127.0.0.1:1", "127.0.0.1:2"}, dial)
	if !errors.Is(err, context.Canceled) || dials != 0 {
		t.Fatalf("err = %v after %d dials, want context.Canceled and no dial", err, dials)
	}
}

func TestDiscoverAllSeedsDead(t *testing.T) {
	seeds := []string{deadAddr(t), deadAddr(t)}
	tab, err := Discover(testContext(t), seeds, nil)
	if err == nil || tab != nil {
		t.Fatalf("got %v, %v; want an error", tab, err)
	}
	msg := err.Error()
	for _, seed := range seeds {
		// One line per seed, without the prefix the first line gives.
		if !strings.Contains(msg, "\nseed "+seed+": dial") {
			t.Errorf("error does not name seed %s:\n%s", seed, msg)
		}
	}
	if !strings.HasPrefix(msg, "shardis: no seed gave a usable cluster topology (2 of 2 tried)") {
		t.Errorf("error = %q", msg)
	}
	var se *SeedError
	if !errors.As(err, &se) || se.Seed != seeds[0] {
		t.Errorf("errors.As(*SeedError) = %v", se)
	}
}

func TestDiscoverNotCluster(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	_, err := Discover(testContext(t), []string{s.Addr}, nil)
	if !errors.Is(err, ErrNotCluster) {
		t.Fatalf("err = %v, want ErrNotCluster", err)
	}
	if !strings.Contains(err.Error(), "cluster support disabled") {
		t.Fatalf("error does not quote the server: %v", err)
	}
	var re redis.Error
	if !errors.As(err, &re) {
		t.Fatalf("the server's redis.Error is not in the chain: %v", err)
	}
}

// TestDiscoverOneNodeCluster uses a real 1-node cluster, whose node does
// not know its own IP: every reply gives an empty endpoint, so the
// address must come from the seed.
func TestDiscoverOneNodeCluster(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{Cluster: true})
	if _, err := s.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); err != nil {
		t.Fatal(err)
	}
	seed := "localhost:" + strconv.Itoa(s.Port)
	want := "0-16383 " + seed + " ()"

	tab, err := Discover(testContext(t), []string{seed}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if tab.String() != want {
		t.Fatalf("table %q, want %q", tab, want)
	}

	conn := dialRedis(t, s.Addr)
	slots, err := conn.Do("CLUSTER", "SLOTS")
	if err != nil {
		t.Fatal(err)
	}
	nodes, err := redis.String(conn.Do("CLUSTER", "NODES"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(nodes, " :"+strconv.Itoa(s.Port)+"@") {
		t.Fatalf("the node knows its IP after all, so this test shows nothing:\n%s", nodes)
	}
	fromSlots, err := ParseSlots(slots, seed)
	if err != nil {
		t.Fatal(err)
	}
	fromNodes, err := ParseNodes(nodes, seed)
	if err != nil {
		t.Fatal(err)
	}
	if fromSlots.String() != want || fromNodes.String() != want {
		t.Fatalf("CLUSTER SLOTS gave %q and CLUSTER NODES %q, want %q", fromSlots, fromNodes, want)
	}
}

// TestDiscoverFallsBackToSlots makes a real server refuse CLUSTER SHARDS
// (with an ACL, as an old server would with "unknown subcommand") and
// checks that Discover reads CLUSTER SLOTS instead.
func TestDiscoverFallsBackToSlots(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{Cluster: true})
	for _, cmd := range [][]string{
		{"CLUSTER", "ADDSLOTSRANGE", "0", "16383"},
		{"ACL", "SETUSER", "noshards", "on", "nopass", "~*", "&*", "+@all", "-cluster|shards"},
	} {
		if _, err := s.Do(cmd...); err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	var cmds []string
	dial := func(ctx context.Context, addr string) (redis.Conn, error) {
		conn, err := redis.DialContext(ctx, "tcp", addr, redis.DialUsername("noshards"), redis.DialPassword("any"))
		if err != nil {
			return nil, err
		}
		return recordingConn{Conn: conn, mu: &mu, cmds: &cmds}, nil
	}
	tab, err := Discover(testContext(t), []string{s.Addr}, dial)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0-16383 " + s.Addr + " ()"; tab.String() != want {
		t.Fatalf("table %q, want %q", tab, want)
	}
	if got := strings.Join(cmds, ", "); got != "CLUSTER SHARDS, CLUSTER SLOTS" {
		t.Fatalf("commands sent: %s", got)
	}
}
