package cluster

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// twoLiveMastersShards is a CLUSTER SHARDS reply, as RESP2 bytes, of one
// shard that owns every slot and lists two masters that are both online,
// as Redis 7.2 and later reply during a failover before the old master
// (oldPort) is demoted; newPort has the slots.
func twoLiveMastersShards(oldPort, newPort int) []byte {
	node := func(id string, port int) string {
		p := strconv.Itoa(port)
		return "*14\r\n$2\r\nid\r\n$40\r\n" + id + "\r\n$4\r\nport\r\n:" + p + "\r\n" +
			"$2\r\nip\r\n$9\r\n127.0.0.1\r\n$8\r\nendpoint\r\n$9\r\n127.0.0.1\r\n" +
			"$4\r\nrole\r\n$6\r\nmaster\r\n$18\r\nreplication-offset\r\n:100\r\n" +
			"$6\r\nhealth\r\n$6\r\nonline\r\n"
	}
	return []byte("*1\r\n*4\r\n$5\r\nslots\r\n*2\r\n:0\r\n:16383\r\n$5\r\nnodes\r\n*2\r\n" +
		node(strings.Repeat("a", 40), oldPort) + node(strings.Repeat("b", 40), newPort))
}

// readRESP reads one reply from raw RESP bytes the way redigo reads a
// server's.
func readRESP(t *testing.T, raw []byte) any {
	t.Helper()
	client, server := net.Pipe()
	defer client.Close()
	go func() {
		defer server.Close()
		go func() { _, _ = io.Copy(io.Discard, server) }()
		_, _ = server.Write(raw)
	}()
	reply, err := redis.NewConn(client, 0, 0).Do("PING")
	if err != nil {
		t.Fatalf("decoding the canned reply: %v", err)
	}
	return reply
}

// TestParseShardsTwoLiveMastersIsAmbiguous checks that a shard listing two
// masters that are both online is reported as ErrAmbiguous (the reply
// does not say which one owns the slots), not as a malformed reply.
func TestParseShardsTwoLiveMastersIsAmbiguous(t *testing.T) {
	reply := readRESP(t, twoLiveMastersShards(7000, 7001))
	tab, err := ParseShards(reply, "127.0.0.1:7000")
	if tab != nil || !errors.Is(err, ErrAmbiguous) || errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v, %v; want ErrAmbiguous only", tab, err)
	}
	if !strings.Contains(err.Error(), "shard 0: nodes 0 and 1 are both masters") {
		t.Fatalf("error %q does not say where", err)
	}
}

// shardsOverride answers CLUSTER SHARDS with a canned reply and sends
// everything else to the real server.
type shardsOverride struct {
	redis.Conn
	reply any
	mu    *sync.Mutex
	cmds  *[]string
}

func (c shardsOverride) Do(cmd string, args ...any) (any, error) {
	return c.DoContext(context.Background(), cmd, args...)
}

func (c shardsOverride) DoContext(ctx context.Context, cmd string, args ...any) (any, error) {
	c.mu.Lock()
	*c.cmds = append(*c.cmds, strings.TrimSpace(cmd+" "+fmt.Sprint(args...)))
	c.mu.Unlock()
	if cmd == "CLUSTER" && len(args) == 1 && args[0] == "SHARDS" {
		return c.reply, nil
	}
	return redis.DoContext(c.Conn, ctx, cmd, args...)
}

// TestDiscoverTwoLiveMastersReadsSlots checks that Discover, given a
// CLUSTER SHARDS reply with two online masters in one shard (a failover
// under way on Redis 7.2+), reads CLUSTER SLOTS of the same node and
// gets the slots' real owner, instead of rejecting the seed (every node
// gives that reply until the old master is demoted, so no refresh could
// succeed meanwhile).
func TestDiscoverTwoLiveMastersReadsSlots(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{Cluster: true})
	if _, err := s.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); err != nil {
		t.Fatal(err)
	}
	reply := readRESP(t, twoLiveMastersShards(s.Port+1, s.Port))
	var mu sync.Mutex
	var cmds []string
	dial := func(ctx context.Context, addr string) (redis.Conn, error) {
		conn, err := redis.DialContext(ctx, "tcp", addr)
		if err != nil {
			return nil, err
		}
		return shardsOverride{Conn: conn, reply: reply, mu: &mu, cmds: &cmds}, nil
	}
	tab, err := Discover(testContext(t), []string{s.Addr}, dial)
	if err != nil {
		t.Fatal(err)
	}
	if want := "0-16383 " + s.Addr + " ()"; tab.String() != want {
		t.Fatalf("table %q, want %q", tab, want)
	}
	mu.Lock()
	defer mu.Unlock()
	if got := strings.Join(cmds, ", "); got != "CLUSTER SHARDS, CLUSTER SLOTS" {
		t.Fatalf("commands sent: %s", got)
	}
}

// TestParseShardsTwoFailedMastersIsAmbiguous checks that a shard that
// owns slots and lists two masters, both failed (the old master and the
// one that replaced it, before a third takes over), is ErrAmbiguous, so
// that Discover asks CLUSTER SLOTS for the slots' owner, rather than a
// malformed reply that fails the whole refresh.
func TestParseShardsTwoFailedMastersIsAmbiguous(t *testing.T) {
	raw := strings.ReplaceAll(string(twoLiveMastersShards(7000, 7001)), "$6\r\nonline\r\n", "$4\r\nfail\r\n")
	tab, err := ParseShards(readRESP(t, []byte(raw)), "127.0.0.1:7000")
	if tab != nil || !errors.Is(err, ErrAmbiguous) || errors.Is(err, ErrMalformed) {
		t.Fatalf("got %v, %v; want ErrAmbiguous only", tab, err)
	}
}
