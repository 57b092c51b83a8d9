package reshard

import (
	"bytes"
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// startHoldProxy starts a proxy that forwards connections to backend,
// except that it holds the first chunk a client sends that carries a
// RESTORE (or the EVALSHA that runs one) and everything sent after it,
// until release is closed: a RESTORE slow on its way to the new node.
// held is closed when a chunk is held.
func startHoldProxy(t *testing.T, backend string) (p *redistest.Proxy, held, release chan struct{}) {
	t.Helper()
	held, release = make(chan struct{}), make(chan struct{})
	var holdOnce sync.Once
	p = redistest.StartProxy(t, backend, redistest.ProxyOptions{OnSend: func(chunk []byte) bool {
		if bytes.Contains(chunk, []byte("$7\r\nRESTORE\r\n")) || bytes.Contains(chunk, []byte("$7\r\nEVALSHA\r\n")) {
			holdOnce.Do(func() { close(held) })
		}
		select {
		case <-held:
			<-release
		default:
		}
		return true
	}})
	// Before the proxy closes: it waits for what it holds.
	t.Cleanup(func() {
		select {
		case <-release:
		default:
			close(release)
		}
	})
	return p, held, release
}

// TestReview5DumpMoveLateRestoreUndoesNoDelete: a DUMP/RESTORE batch whose
// RESTORE replies do not come in time fails, and the old node's writes
// resume; the RESTORE, still on its way, must not land after that. Here a
// migrating client moves the key meanwhile (its MIGRATE finds no copy at
// the new owner) and deletes it there, an acknowledged DEL; then the
// mover's RESTORE arrives. It brought the deleted key back.
func TestReview5DumpMoveLateRestoreUndoesNoDelete(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	proxy, held, release := startHoldProxy(t, servers[1].Addr)
	from, err := shard.ParseURL("redis-ring://" + servers[0].Addr + "?names=a")
	require.NoError(t, err)
	to, err := shard.ParseURL("redis-ring://" + proxy.Addr + "?names=b")
	require.NoError(t, err)
	pools, err := pool.NewSet(moverPool(to.Pool))
	require.NoError(t, err)
	defer pools.Close()
	m := &mover{opts: Options{From: from, To: to, Dump: true, Timeout: 2 * time.Second}.withDefaults(), pools: pools, flows: map[[2]string]*Flow{}}
	src := shard.Node{Name: "a", Addr: servers[0].Addr}
	dst := shard.Node{Name: "b", Addr: proxy.Addr}
	_, err = servers[0].Do("SET", "k", "10")
	require.NoError(t, err)

	conn, err := pools.Get(ctx, src.Addr)
	require.NoError(t, err)
	_, err = m.dumpMove(ctx, conn, src, dst, []string{"k"})
	conn.Close()
	require.Error(t, err, "the RESTORE's reply never came in time")
	select {
	case <-held:
	default:
		t.Fatal("no RESTORE went to the new node")
	}

	// A migrating client touches k: its MIGRATE finds no copy at the new
	// owner and moves k there; it deletes k there.
	old, err := redis.Dial("tcp", servers[0].Addr, redis.DialReadTimeout(30*time.Second))
	require.NoError(t, err)
	defer old.Close()
	host, port, err := net.SplitHostPort(servers[1].Addr)
	require.NoError(t, err)
	reply, err := redis.String(old.Do("MIGRATE", host, port, "k", 0, 5000))
	require.NoError(t, err)
	require.Equal(t, "OK", reply, "the client's MIGRATE moved k")
	n, err := servers[1].Do("DEL", "k")
	require.NoError(t, err)
	require.Equal(t, "1", n, "the client deleted k at its new owner")

	// The mover's RESTORE arrives now.
	pools.Close()
	close(release)
	drained := make(chan struct{})
	go func() { proxy.Shutdown(); close(drained) }()
	select {
	case <-drained:
	case <-time.After(30 * time.Second):
		t.Fatal("the held commands did not reach the new node")
	}
	for _, s := range servers {
		v, err := s.Do("EXISTS", "k")
		require.NoError(t, err)
		require.Equal(t, "0", v, "k was deleted, yet %s has it again (a late RESTORE)", s.Addr)
	}
}
