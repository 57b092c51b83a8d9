package main

import (
	"errors"
	"io"
	"net"
	"syscall"
	"testing"
	"time"
)

// FuzzReview19Server sends any bytes to a cluster node and ends the
// request stream: the node must answer with whole RESP values only and
// close the connection within a bound (it never hangs, nor panics, nor
// cuts a reply short).
func FuzzReview19Server(f *testing.F) {
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\nGET k\r\n"))
	f.Add([]byte("HELLO 3\r\nCLUSTER SHARDS\r\nCOMMAND INFO get\r\nMGET a b\r\n"))
	f.Add([]byte("PING \"a\\x41 b\"\r\nPING 'c'\r\nQUIT\r\nPING\r\n"))
	f.Add([]byte("*2\r\n$4\r\nPING\r\n$5\r\nhel"))
	f.Add([]byte("*1\r\n$04\r\nPING\r\n"))
	addr := startServers(f, 1, true)[0]
	f.Fuzz(func(t *testing.T, in []byte) {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(20 * time.Second))
		werr := make(chan error, 1)
		go func() {
			_, err := c.Write(in)
			c.(*net.TCPConn).CloseWrite()
			werr <- err
		}()
		got, err := io.ReadAll(c)
		// A reset (the node closed with part of the request unread) may
		// drop the end of what it sent.
		reset := errors.Is(err, syscall.ECONNRESET)
		if err != nil && !reset {
			t.Fatalf("after %d bytes of reply: %v", len(got), err)
		}
		<-werr
		for pos := 0; pos < len(got); {
			end, err := valueEnd(got, pos)
			if err != nil {
				if reset {
					break
				}
				t.Fatalf("reply %q: at %d: %v", got, pos, err)
			}
			pos = end
		}
	})
}
