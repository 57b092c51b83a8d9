package pool

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// lateReplies is a proxy to a real server that, once armed, passes on
// only the first reply of the next chunk the server sends when more
// replies follow it in that chunk (the several replies of an UNSUBSCRIBE
// of several channels, say), and holds the rest back until the client
// sends something more: the server's write split, its tail arriving
// late, after the connection was given back and borrowed again.
type lateReplies struct {
	*redistest.Proxy
	armed   atomic.Bool
	held    atomic.Bool // a tail was held back
	release chan struct{}
}

func startLateReplies(t *testing.T, backend string) *lateReplies {
	t.Helper()
	lr := &lateReplies{release: make(chan struct{})}
	var once sync.Once
	free := func() { once.Do(func() { close(lr.release) }) }
	lr.Proxy = redistest.StartProxy(t, backend, redistest.ProxyOptions{
		OnSend: func([]byte) bool {
			if lr.held.Load() {
				free()
			}
			return true
		},
		OnReply: func(chunk []byte, forward func([]byte) error) {
			end := firstReplyEnd(chunk)
			if end <= 0 || end >= len(chunk) || !lr.armed.CompareAndSwap(true, false) {
				_ = forward(chunk)
				return
			}
			lr.held.Store(true) // before the first reply reaches the client
			if forward(chunk[:end]) != nil {
				return
			}
			<-lr.release
			_ = forward(chunk[end:])
		},
	})
	t.Cleanup(free) // registered after StartProxy's Close: runs before it
	return lr
}

// firstReplyEnd returns the length of the first reply in chunk when it is
// a pub/sub confirmation (an array whose last element is the count), or 0.
func firstReplyEnd(chunk []byte) int {
	if !bytes.HasPrefix(chunk, []byte("*3\r\n")) {
		return 0
	}
	i := bytes.Index(chunk, []byte("\r\n:"))
	if i < 0 {
		return 0
	}
	j := bytes.Index(chunk[i+3:], []byte("\r\n"))
	if j < 0 {
		return 0
	}
	return i + 3 + j + 2
}

// TestReview15MultiReplyCommandNotHandedOn: SUBSCRIBE, PSUBSCRIBE and
// SSUBSCRIBE of several names get one reply per name, and UNSUBSCRIBE,
// PUNSUBSCRIBE and SUNSUBSCRIBE one per name (or per subscription), even
// on a connection that has none; a Do or a Receive reads only the first.
// redigo's return reads a connection that sent SUBSCRIBE or PSUBSCRIBE
// up to the reply of an ECHO it sends last, but not one that sent only
// an unsubscribe: the replies left were dropped only when they were
// already in the read buffer at the next borrow. Here their tail arrives
// late (after the borrow check), as it may from a slow server or a split
// write: whichever way the connection is borrowed next (Get, the lender
// of Pool, GetReadOnly and ReadOnlyPool), its caller must get the reply to
// its own command, and a connection with replies unaccounted for must
// not be handed on.
func TestReview15MultiReplyCommandNotHandedOn(t *testing.T) {
	plain := plainServer(t)
	clustered := startServer(t, redistest.Options{Cluster: true}) // accepts READONLY
	tests := []struct {
		cmd  []any
		late bool // several replies: the proxy holds some back
		// fresh: the next caller must get another connection
		fresh bool
	}{
		{cmd: []any{"UNSUBSCRIBE", "a", "b", "c"}, late: true, fresh: true},
		{cmd: []any{"punsubscribe", "a", "b"}, late: true, fresh: true},
		{cmd: []any{"SUNSUBSCRIBE", "a", "b", "c"}, late: true, fresh: true},
		{cmd: []any{"UNSUBSCRIBE"}},
		{cmd: []any{"SUBSCRIBE", "a", "b", "c"}, late: true},
		{cmd: []any{"Psubscribe", "a*", "b*"}, late: true},
		{cmd: []any{"SSUBSCRIBE", "a", "b"}, late: true, fresh: true},
	}
	type borrow func(s *Set, addr string) (redis.Conn, error)
	ctx := context.Background()
	borrows := []struct {
		name     string
		readOnly bool
		get      borrow
	}{
		{"Get", false, func(s *Set, addr string) (redis.Conn, error) { return s.Get(ctx, addr) }},
		{"Pool", false, func(s *Set, addr string) (redis.Conn, error) { return s.Pool(addr).GetContext(ctx) }},
		{"GetReadOnly", true, func(s *Set, addr string) (redis.Conn, error) { return s.GetReadOnly(ctx, addr) }},
		{"ReadOnlyPool", true, func(s *Set, addr string) (redis.Conn, error) { return s.ReadOnlyPool(addr).GetContext(ctx) }},
	}
	sends := []struct {
		name string
		run  func(c redis.Conn, cmd []any) error
	}{
		{"Do", func(c redis.Conn, cmd []any) error { _, err := c.Do(cmd[0].(string), cmd[1:]...); return err }},
		{"Send", func(c redis.Conn, cmd []any) error {
			if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
				return err
			}
			if err := c.Flush(); err != nil {
				return err
			}
			_, err := c.Receive()
			return err
		}},
	}
	for _, tt := range tests {
		for _, b := range borrows {
			for _, send := range sends {
				name := strings.ReplaceAll(strings.Trim(fmtArgs(tt.cmd), "[]"), " ", "_") + "/" + b.name + "/" + send.name
				t.Run(name, func(t *testing.T) {
					backend := plain.Addr
					if b.readOnly {
						backend = clustered.Addr
					}
					if c := strings.ToLower(tt.cmd[0].(string)); b.readOnly && (strings.HasPrefix(c, "ss") || strings.HasPrefix(c, "sun")) {
						t.Skip("a node without slots refuses SSUBSCRIBE and SUNSUBSCRIBE")
					}
					lr := startLateReplies(t, backend)
					set := newTestSet(t, Options{MaxIdle: 1, TestOnBorrow: Never, ReadTimeout: 10 * time.Second})
					c, err := b.get(set, lr.Addr)
					if err != nil {
						t.Fatal(err)
					}
					id, err := redis.Int64(c.Do("CLIENT", "ID"))
					if err != nil {
						t.Fatal(err)
					}
					lr.armed.Store(true)
					if err := send.run(c, tt.cmd); err != nil {
						t.Fatalf("%v: %v", tt.cmd, err)
					}
					c.Close()
					if got := lr.held.Load(); got != tt.late {
						t.Fatalf("the proxy held replies back: %v, want %v", got, tt.late)
					}

					n, err := b.get(set, lr.Addr)
					if err != nil {
						t.Fatal(err)
					}
					defer n.Close()
					for _, word := range []string{"mine", "again"} {
						if reply, err := n.Do("ECHO", word); err != nil || !bytes.Equal(asBytes(reply), []byte(word)) {
							t.Fatalf("the next caller's ECHO %s = %s, %v: it read a reply left over from %v", word, fmtArgs(reply), err, tt.cmd)
						}
					}
					nid, err := redis.Int64(n.Do("CLIENT", "ID"))
					if err != nil {
						t.Fatal(err)
					}
					if tt.fresh && nid == id {
						t.Errorf("the next caller got the same connection (CLIENT ID %d) after %v, whose replies were not all read", id, tt.cmd)
					}
				})
			}
		}
	}
}

func asBytes(v any) []byte {
	b, _ := v.([]byte)
	return b
}

func fmtArgs(v any) string {
	switch v := v.(type) {
	case []any:
		parts := make([]string, len(v))
		for i, x := range v {
			parts[i] = fmtArgs(x)
		}
		return "[" + strings.Join(parts, " ") + "]"
	case []byte:
		return string(v)
	case string:
		return v
	case nil:
		return "nil"
	}
	return fmt.Sprint(v)
}
