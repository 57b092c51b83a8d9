package pool

import (
	"context"
	"crypto/tls"
	"errors"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// review7HungTLSConn returns a liveConn over TLS whose peer completed the
// handshake and then neither reads nor writes: every write on it blocks,
// as on a socket whose send buffer a hung server let fill up (net.Pipe has
// no buffer). The certificates are a TLS redis-server's.
func review7HungTLSConn(t *testing.T) *liveConn {
	t.Helper()
	rs := redistest.StartTB(t, redistest.Options{TLS: true})
	cert, err := tls.LoadX509KeyPair(rs.TLS.CertFile, rs.TLS.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	client, server := net.Pipe()
	t.Cleanup(func() { client.Close(); server.Close() })
	srvTLS := tls.Server(server, &tls.Config{Certificates: []tls.Certificate{cert}, SessionTicketsDisabled: true})
	handshook := make(chan error, 1)
	go func() { handshook <- srvTLS.Handshake() }()
	cliTLS := tls.Client(client, rs.TLS.ClientConfig())
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := cliTLS.HandshakeContext(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-handshook; err != nil {
		t.Fatal(err)
	}
	return newLiveConn(&coarseConn{Conn: cliTLS}, 0)
}

// TestReview7TLSCutOnHungPeerIsImmediate: cutting a connection short
// (GetAbortable's abort, a cancelled context, a failed read) closed it
// with tls.Conn.Close, which first writes close_notify, for up to 5 s on
// a peer that does not read, and only then closes the socket: the read it
// was meant to cut went on waiting all that time, and the connection's
// mutex was held meanwhile, so that every other call needing it (Err, a
// context's setup, the read's own failure) waited too. A cut must end the
// read in progress at once.
func TestReview7TLSCutOnHungPeerIsImmediate(t *testing.T) {
	tests := []struct {
		name string
		cut  func(lc *liveConn, cancel context.CancelFunc)
	}{
		{"abort", func(lc *liveConn, _ context.CancelFunc) { lc.closeLend(lc.lend()) }},
		{"context cancelled", func(_ *liveConn, cancel context.CancelFunc) { cancel() }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lc := review7HungTLSConn(t)
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			read := make(chan error, 1)
			go func() {
				_, err := lc.ReceiveContext(ctx) // no reply ever comes
				read <- err
			}()
			review7WaitStack(t, "(*pipe).read") // the read is blocked on the socket
			start := time.Now()
			go tt.cut(lc, cancel)
			select {
			case err := <-read:
				if err == nil {
					t.Fatal("the read cut short returned no error")
				}
				if took := time.Since(start); took > time.Second {
					t.Errorf("the read was cut after %v", took)
				}
			case <-time.After(3 * time.Second):
				t.Fatal("the read was not cut within 3 s (the close waited on close_notify to a peer that does not read)")
			}
			errc := make(chan error, 1)
			go func() { errc <- lc.Err() }()
			select {
			case err := <-errc:
				if err == nil {
					t.Error("Err = nil after the cut")
				}
			case <-time.After(3 * time.Second):
				t.Fatal("Err blocked on the connection's mutex")
			}
			// Whatever is left of the close must end: the test leaves no goroutine.
			if err := lc.Close(); err != nil && !errors.Is(err, net.ErrClosed) {
				t.Logf("Close: %v", err)
			}
		})
	}
}

// review7WaitStack waits until some goroutine's stack shows frame.
func review7WaitStack(t *testing.T, frame string) {
	t.Helper()
	buf := make([]byte, 1<<20)
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := runtime.Stack(buf, true)
		if strings.Contains(string(buf[:n]), frame) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no goroutine reached %s", frame)
		}
		runtime.Gosched()
	}
}
