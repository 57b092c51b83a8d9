package shard_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
)

// startInfoFront starts a loopback front to the real server backend that
// forwards everything both ways, except a COMMAND INFO about name: it
// answers that one itself with reply, or, when reply is nil, closes the
// connection instead (a server lost at that moment). It returns the
// front's address; it closes when the test ends.
func startInfoFront(t *testing.T, backend, name string, reply []byte) string {
	t.Helper()
	ask := []byte("$4\r\nINFO\r\n$" + strconv.Itoa(len(name)) + "\r\n" + name + "\r\n")
	return startLoopbackFront(t, backend, func(c, b net.Conn, _ <-chan struct{}) (up, down func()) {
		var wmu sync.Mutex // the client's writes: the backend's replies and ours
		down = func() {
			defer c.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := b.Read(buf)
				if n > 0 {
					wmu.Lock()
					_, werr := c.Write(buf[:n])
					wmu.Unlock()
					if werr != nil {
						return
					}
				}
				if err != nil {
					return
				}
			}
		}
		up = func() {
			defer b.Close()
			buf := make([]byte, 32<<10)
			for {
				n, err := c.Read(buf)
				if n > 0 {
					// On the loopback a command arrives whole, and the
					// client sends COMMAND INFO alone on its connection.
					if bytes.Contains(buf[:n], ask) {
						if reply == nil {
							c.Close()
							return
						}
						wmu.Lock()
						_, werr := c.Write(reply)
						wmu.Unlock()
						if werr != nil {
							return
						}
						continue
					}
					if _, werr := b.Write(buf[:n]); werr != nil {
						return
					}
				}
				if err != nil {
					return // the client's close (io.EOF) or the test's end
				}
			}
		}
		return up, down
	})
}

// redis6CommandInfo is what a Redis 6 server answers to COMMAND INFO
// about a renamed GET: the 7-element entry of Redis 6, without the key
// specs and subcommands the client reads.
func redis6CommandInfo(name string) []byte {
	return []byte("*1\r\n*7\r\n$" + strconv.Itoa(len(name)) + "\r\n" + name + "\r\n:2\r\n*2\r\n+readonly\r\n+fast\r\n:1\r\n:1\r\n:1\r\n*3\r\n+@read\r\n+@string\r\n+@fast\r\n")
}

// A command the table does not know, which the server describes in a
// form the client cannot read, fails with ErrUnknownCommand and no
// *NodeError, its text naming the package once and saying what was wrong
// with the reply; one that the client could not ask about because the
// connection was lost fails with ErrUnknownCommand and a *NodeError. A
// caller tells the two apart with errors.As.
func TestReview12LearnBadCommandInfoReplyVersusLostConnection(t *testing.T) {
	ctx := context.Background()
	const name = "review12get"
	srv := redistest.StartTB(t, redistest.Options{Args: []string{"--rename-command", "GET", strings.ToUpper(name)}})

	t.Run("bad reply", func(t *testing.T) {
		front := startInfoFront(t, srv.Addr, name, redis6CommandInfo(name))
		c := newClient(t, ringConfig([]*redistest.Server{{Addr: front}}))
		_, err := c.Do(ctx, strings.ToUpper(name), "k")
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		t.Logf("%s", msg)
		checkPrefixOnce(t, msg)
		if !errors.Is(err, shard.ErrUnknownCommand) {
			t.Errorf("%q does not match ErrUnknownCommand", msg)
		}
		var ne *shard.NodeError
		if errors.As(err, &ne) {
			t.Errorf("%q holds a *NodeError, as if the server could not be reached", msg)
		}
		if !strings.Contains(msg, "COMMAND INFO reply") {
			t.Errorf("%q does not say the COMMAND INFO reply was wrong", msg)
		}
	})
	t.Run("lost connection", func(t *testing.T) {
		front := startInfoFront(t, srv.Addr, name, nil)
		c := newClient(t, ringConfig([]*redistest.Server{{Addr: front}}))
		_, err := c.Do(ctx, strings.ToUpper(name), "k")
		if err == nil {
			t.Fatal("no error")
		}
		msg := err.Error()
		t.Logf("%s", msg)
		checkPrefixOnce(t, msg)
		if !errors.Is(err, shard.ErrUnknownCommand) {
			t.Errorf("%q does not match ErrUnknownCommand", msg)
		}
		var ne *shard.NodeError
		if !errors.As(err, &ne) {
			t.Errorf("%q holds no *NodeError", msg)
		}
	})
}
