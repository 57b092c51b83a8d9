package shard_test

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// faultServer is a byte-level fake for protocol faults: it answers the
// first command of its first connection with reply, then closes that
// connection when hangUp is set; every other command gets "+OK" (EXEC
// too: a test that reads its reply must send the fault there).
type faultServer struct {
	addr     string
	accepted atomic.Int32
}

func startFaultServer(t *testing.T, reply string, hangUp bool) *faultServer {
	return startFaultServerAt(t, 0, reply, hangUp)
}

// startFaultServerAt is startFaultServer with the fault answering the
// command numbered at (from 0) of the first connection.
func startFaultServerAt(t *testing.T, at int, reply string, hangUp bool) *faultServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	fs := &faultServer{addr: ln.Addr().String()}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			first := fs.accepted.Add(1) == 1
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				for n := 0; ; n++ {
					if redistest.SkipCommand(r) != nil {
						return
					}
					out := "+OK\r\n"
					if n == at && first {
						out = reply
					}
					if _, err := io.WriteString(c, out); err != nil {
						return
					}
					if n == at && first && hangUp {
						return
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return fs
}

// A server that hangs up in the middle of a reply, or answers with bytes
// that are no RESP2 reply (a RESP3 type, garbage, a length over the
// limits, a negative length), fails the command with a *NodeError that
// says so (ErrProtocol, or the early end of the stream), without a panic,
// and the connection is not used again: the next command dials afresh
// and succeeds.
func TestReview20RingFaultyRepliesFailTheCommandAndTheConnection(t *testing.T) {
	cases := []struct {
		name   string
		reply  string
		hangUp bool
		want   error // nil: the stream ended early
	}{
		{"hang-up inside a bulk string", "$10\r\nabc", true, nil},
		{"hang-up inside an array", "*3\r\n:1\r\n$2\r\nab\r\n", true, nil},
		{"hang-up inside a length line", "$12", true, nil},
		{"RESP3 map", "%1\r\n+a\r\n+b\r\n", false, pool.ErrProtocol},
		{"RESP3 double", ",1.5\r\n", false, pool.ErrProtocol},
		{"garbage", "hello world\r\n", false, pool.ErrProtocol},
		{"bulk length over 512 MiB", "$536870913\r\n", false, pool.ErrProtocol},
		{"bulk length of 20 digits", "$99999999999999999999\r\n", false, pool.ErrProtocol},
		{"negative bulk length", "$-2\r\n", false, pool.ErrProtocol},
		{"array length of 20 digits", "*99999999999999999999\r\n", false, pool.ErrProtocol},
		{"integer out of range", ":99999999999999999999\r\n", false, pool.ErrProtocol},
		{"bulk without its CRLF", "$2\r\nabXY\r\n", false, pool.ErrProtocol},
	}
	for _, tc := range cases {
		for _, way := range []string{"Do", "Pipeline", "auto-pipelined Do"} {
			t.Run(tc.name+"/"+way, func(t *testing.T) {
				fs := startFaultServer(t, tc.reply, tc.hangUp)
				cfg := faultConfig(fs.addr, 2*time.Second)
				cfg.DisableAutoPipeline = way != "auto-pipelined Do"
				c := newClient(t, cfg)
				if !cfg.DisableAutoPipeline {
					shard.AlwaysPipeline(c)
				}
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				start := time.Now()
				var err error
				if way != "Pipeline" {
					_, err = c.Do(ctx, "GET", "r20fault")
				} else {
					p := c.Pipeline()
					p.Send("GET", "r20fault")
					p.Send("GET", "r20fault:2")
					res, perr := p.Exec(ctx)
					require.NoError(t, perr)
					require.Len(t, res, 2)
					assert.Error(t, res[1].Err, "the reply after a faulty one was read as a reply")
					err = res[0].Err
				}
				require.Error(t, err)
				assert.Less(t, time.Since(start), time.Second, "a fault is no timeout: %v", err)
				var ne *shard.NodeError
				assert.ErrorAs(t, err, &ne)
				if tc.want != nil {
					assert.ErrorIs(t, err, tc.want)
				} else {
					assert.True(t, errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF), "%v", err)
				}
				// The next command does not get the faulty connection.
				_, err = c.Do(ctx, "SET", "r20fault", "v")
				require.NoError(t, err)
				assert.Equal(t, int32(2), fs.accepted.Load(), "connections dialed: the faulty one was used again")
			})
		}
	}
}

// A transaction whose EXEC reply is cut off or garbled fails with an
// error that says its outcome is unknown (the server may have run it),
// and the connection pinned to it is not used again.
func TestReview20RingFaultyExecReplyFailsTheTransaction(t *testing.T) {
	for _, tc := range []struct {
		name   string
		reply  string
		hangUp bool
	}{
		{"hang-up inside the EXEC array", "*1\r\n+O", true},
		{"garbled EXEC reply", "*1\r\n%0\r\n", false},
	} {
		for _, way := range []string{"Conn", "Tx"} {
			t.Run(tc.name+"/"+way, func(t *testing.T) {
				// WATCH, MULTI, SET (queued), EXEC: the fourth command.
				fs := startFaultServerAt(t, 3, tc.reply, tc.hangUp)
				c := newClient(t, faultConfig(fs.addr, 2*time.Second))
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				var err error
				if way == "Conn" {
					conn := c.Conn()
					for _, cmd := range [][]any{{"WATCH", "k"}, {"MULTI"}, {"SET", "k", "v"}} {
						_, err := conn.Do(cmd[0].(string), cmd[1:]...)
						require.NoError(t, err, "%v", cmd)
					}
					_, err = conn.Do("EXEC")
					conn.Close()
				} else {
					_, err = c.Tx(ctx, []string{"k"}, func(tx *shard.Tx) error { return tx.Queue("SET", "k", "v") })
				}
				require.Error(t, err)
				var ne *shard.NodeError
				assert.ErrorAs(t, err, &ne)
				var ue *shard.UnknownOutcomeError
				assert.ErrorAs(t, err, &ue, "the EXEC may have run: %v", err)
				_, err = c.Do(ctx, "SET", "k2", "v")
				require.NoError(t, err)
				assert.Equal(t, int32(2), fs.accepted.Load(), "the faulty connection was used again")
			})
		}
	}
}
