package shard_test

import (
	"net"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// startLoopbackFront starts a TCP front on 127.0.0.1 to backend, for the
// tests that need to see or shape what passes between a client and a
// real server. For each connection it accepts, it dials backend and runs
// the two loops serve returns for the pair: up carries what the client
// sends to the server, down what the server sends to the client; each
// returns once a connection fails. When the test ends the front closes
// done, its listener and every connection, and waits for the loops. It
// returns the front's address.
func startLoopbackFront(t *testing.T, backend string, serve func(client, server net.Conn, done <-chan struct{}) (up, down func())) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	serveFront(t, ln, backend, serve)
	return ln.Addr().String()
}

// serveFront runs the front of startLoopbackFront on ln, whatever address
// it listens on.
func serveFront(t *testing.T, ln net.Listener, backend string, serve func(client, server net.Conn, done <-chan struct{}) (up, down func())) {
	t.Helper()
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		conns   []net.Conn
		stopped bool
	)
	track := func(cs ...net.Conn) bool {
		mu.Lock()
		defer mu.Unlock()
		conns = append(conns, cs...)
		return !stopped
	}
	done := make(chan struct{})
	t.Cleanup(func() {
		close(done)
		ln.Close()
		mu.Lock()
		stopped = true
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Add(1)
	go func() {
		defer wg.Done()
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
			if !track(c, b) { // accepted as the test ended
				c.Close()
				b.Close()
				return
			}
			up, down := serve(c, b, done)
			wg.Add(2)
			go func() {
				defer wg.Done()
				up()
			}()
			go func() {
				defer wg.Done()
				down()
			}()
		}
	}()
}
