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

// holdProxy forwards connections to backend, except that it holds the
// first chunk a client sends that carries a RESTORE (or the EVALSHA that
// runs one) and everything after it, until release: a RESTORE slow on its
// way to the new node. done is closed once every connection it forwarded
// has been closed by the backend.
type holdProxy struct {
	ln      net.Listener
	backend string
	held    chan struct{} // closed when a chunk is held
	release chan struct{}

	holdOnce sync.Once
	wg       sync.WaitGroup
}

func startHoldProxy(t *testing.T, backend string) *holdProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	p := &holdProxy{ln: ln, backend: backend, held: make(chan struct{}), release: make(chan struct{})}
	var accept sync.WaitGroup
	accept.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			b, err := net.Dial("tcp", backend)
			if err != nil {
				c.Close()
				continue
			}
			p.wg.Go(func() { // backend to client, until the backend closes
				defer c.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := b.Read(buf)
					if n > 0 {
						c.Write(buf[:n]) // the client may have gone: the backend is read to its end anyway
					}
					if err != nil {
						return
					}
				}
			})
			p.wg.Go(func() { // client to backend; the client's end half-closes the backend
				defer b.(*net.TCPConn).CloseWrite()
				buf := make([]byte, 64<<10)
				for {
					n, err := c.Read(buf)
					if n > 0 {
						chunk := buf[:n]
						if bytes.Contains(chunk, []byte("$7\r\nRESTORE\r\n")) || bytes.Contains(chunk, []byte("$7\r\nEVALSHA\r\n")) {
							p.holdOnce.Do(func() { close(p.held) })
						}
						select {
						case <-p.held:
							<-p.release
						default:
						}
						if _, err := b.Write(chunk); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	t.Cleanup(func() {
		ln.Close()
		accept.Wait()
		select {
		case <-p.release:
		default:
			close(p.release)
		}
		p.wg.Wait()
	})
	return p
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
	proxy := startHoldProxy(t, servers[1].Addr)
	from, err := shard.ParseURL("redis-ring://" + servers[0].Addr + "?names=a")
	require.NoError(t, err)
	to, err := shard.ParseURL("redis-ring://" + proxy.ln.Addr().String() + "?names=b")
	require.NoError(t, err)
	pools, err := pool.NewSet(moverPool(to.Pool))
	require.NoError(t, err)
	defer pools.Close()
	m := &mover{opts: Options{From: from, To: to, Dump: true, Timeout: 2 * time.Second}.withDefaults(), pools: pools, flows: map[[2]string]*Flow{}}
	src := shard.Node{Name: "a", Addr: servers[0].Addr}
	dst := shard.Node{Name: "b", Addr: proxy.ln.Addr().String()}
	_, err = servers[0].Do("SET", "k", "10")
	require.NoError(t, err)

	conn, err := pools.Get(ctx, src.Addr)
	require.NoError(t, err)
	_, err = m.dumpMove(ctx, conn, src, dst, []string{"k"})
	conn.Close()
	require.Error(t, err, "the RESTORE's reply never came in time")
	select {
	case <-proxy.held:
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
	close(proxy.release)
	proxy.ln.Close()
	drained := make(chan struct{})
	go func() { proxy.wg.Wait(); close(drained) }()
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
