package pool

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// TestReview13TLSPortAnswersPlainTextWithNothing captures what a
// redis-server listening with TLS only sends back to a plain-text RESP
// command: nothing at all, then the end of the stream or a reset (OpenSSL
// sends no alert to bytes that do not look like TLS). The hint of
// ErrClosedBeforeReply rests on this: no byte tells, only the close.
func TestReview13TLSPortAnswersPlainTextWithNothing(t *testing.T) {
	srv := startServer(t, redistest.Options{TLS: true})
	for _, cmd := range []string{
		"*1\r\n$4\r\nPING\r\n",
		"*2\r\n$4\r\nAUTH\r\n$6\r\nsecret\r\n",
		"*3\r\n$6\r\nCLIENT\r\n$7\r\nSETNAME\r\n$3\r\napp\r\n",
	} {
		nc, err := net.DialTimeout("tcp", srv.Addr, 2*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := nc.Write([]byte(cmd)); err != nil {
			nc.Close()
			t.Fatal(err)
		}
		_ = nc.SetReadDeadline(time.Now().Add(5 * time.Second))
		got, err := io.ReadAll(nc)
		nc.Close()
		t.Logf("%q: the server sent %d bytes % x, then %v", cmd[:8], len(got), got, err)
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("%q: the TLS port kept the plain-text connection open: %v", cmd, err)
		}
		if err != nil && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("%q: the connection ended with %v, want the end of the stream or a reset", cmd, err)
		}
		if len(got) > 0 && !bytes.HasPrefix(got, []byte{0x15, 0x03}) {
			t.Errorf("%q: the TLS port sent % x, neither nothing nor a TLS alert record", cmd, got)
		}
	}
}

// alertServer accepts plain-text connections, reads the first command and
// answers it with a TLS alert record (content type 21, version 3.x, two
// bytes: level fatal, description), as a TLS server built on a library
// other than OpenSSL may do to bytes that are not TLS; then it closes the
// connection, or, with hold, keeps it open until the test ends.
func alertServer(t *testing.T, description byte, hold bool) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu    sync.Mutex
		conns []net.Conn
		wg    sync.WaitGroup
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				buf := make([]byte, 512)
				if _, err := c.Read(buf); err != nil {
					return
				}
				_, _ = c.Write([]byte{0x15, 0x03, 0x03, 0x00, 0x02, 0x02, description})
				if !hold {
					// Read what is left first: a close with unread bytes
					// would be a reset, which may drop the alert.
					_ = c.SetReadDeadline(time.Now().Add(20 * time.Millisecond))
					_, _ = c.Read(buf)
					c.Close()
				}
			}()
		}
	}()
	t.Cleanup(func() {
		l.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	return l.Addr().String()
}

// TestReview13TLSAlertNamesTLS: a plain-text connection whose server
// answers the first command with a TLS alert record was reported as a
// bare protocol error ("line not ended by CRLF", when the alert's
// description byte is 10, unexpected_message, a '\n') or, when the server
// holds the connection open after the alert, as a read timeout: no word of
// TLS. Those two bytes (0x15 0x03) can begin no RESP reply; they are
// a TLS server's answer, and the error must say so at once, as the close
// of a redis-server TLS port does (ErrClosedBeforeReply).
func TestReview13TLSAlertNamesTLS(t *testing.T) {
	bg := context.Background()
	tests := []struct {
		name        string
		description byte
		hold        bool
	}{
		{"unexpected_message, then closed", 10, false},
		{"protocol_version, then closed", 70, false},
		{"protocol_version, held open", 70, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			addr := alertServer(t, tt.description, tt.hold)
			for _, setup := range []bool{true, false} {
				opts := Options{ReadTimeout: 10 * time.Second, DialTimeout: 10 * time.Second}
				if setup {
					opts.Password = "never-shown-pw"
				}
				set := newTestSet(t, opts)
				start := time.Now()
				c, err := set.Get(bg, addr)
				if !setup {
					if err != nil {
						t.Fatalf("a dial with no setup command failed: %v", err)
					}
					_, err = c.Do("PING")
					c.Close()
				}
				if elapsed := time.Since(start); elapsed > 5*time.Second {
					t.Errorf("setup %v: the error came after %v, want it at the alert", setup, elapsed)
				}
				if err == nil {
					t.Fatalf("setup %v: no error from a TLS alert", setup)
				}
				if !errors.Is(err, ErrClosedBeforeReply) || !strings.Contains(err.Error(), "TLS") {
					t.Errorf("setup %v: error %q, want one matching ErrClosedBeforeReply and naming TLS", setup, err)
				}
				if !errors.Is(err, ErrProtocol) {
					t.Errorf("setup %v: error %q, want one matching ErrProtocol (the bytes are no RESP)", setup, err)
				}
				var de *DialError
				if setup != errors.As(err, &de) {
					t.Errorf("setup %v: error %q: *DialError %v", setup, err, !setup)
				}
				if errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "never-shown-pw") {
					t.Errorf("setup %v: error %q is an auth failure or shows the password", setup, err)
				}
			}
		})
	}
}

// TestReview13FullServerRefusalEveryTime: a server at maxclients writes
// its refusal and closes at once, racing the dial's first command; the
// refusal must reach the caller on every dial, whichever setup command
// (or the caller's own first command) meets it, never a bare EOF or reset.
func TestReview13FullServerRefusalEveryTime(t *testing.T) {
	srv := plainServer(t, "--maxclients", "1")
	holder := review5TakeOnlyConn(t, srv)
	defer holder.Close()
	bg := context.Background()
	const rounds = 30
	for _, opts := range []Options{{Password: "unused-pw"}, {ClientName: "full"}, {DB: 1}, {}} {
		set := newTestSet(t, opts)
		for i := range rounds {
			c, err := set.Get(bg, srv.Addr)
			if err == nil {
				_, err = c.Do("PING")
				c.Close()
			}
			review5CheckRefusal(t, "Get+PING", err, srv.Addr)
			if errors.Is(err, ErrClosedBeforeReply) {
				t.Fatalf("round %d: refusal %q also reads as a TLS port's close", i, err)
			}
			if t.Failed() {
				t.Fatalf("options %+v, round %d of %d", opts, i, rounds)
			}
		}
	}
}

// TestReview13HungServerIsATimeout: a redis-server that accepts and never
// answers (SIGSTOP) is bounded by DialTimeout while a setup command or the
// TLS handshake waits, and by ReadTimeout for the caller's first command
// when the dial sent none; the error says it is a timeout, not a closed
// connection, a TLS port or an authentication failure.
func TestReview13HungServerIsATimeout(t *testing.T) {
	plain := redistest.StartTB(t, redistest.Options{})
	tlsSrv := redistest.StartTB(t, redistest.Options{TLS: true})
	t.Cleanup(func() { _ = plain.Resume(); _ = tlsSrv.Resume() }) // before the servers' own cleanup
	tlsConf := tlsSrv.TLS.ClientConfig()
	for _, s := range []*redistest.Server{plain, tlsSrv} {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	const short = 300 * time.Millisecond
	tests := []struct {
		name  string
		addr  string
		opts  Options
		first bool // the caller's first command meets the silence
		bound time.Duration
	}{
		{"AUTH under DialTimeout", plain.Addr, Options{Password: "pw-hidden", DialTimeout: short, ReadTimeout: time.Minute}, false, short},
		{"AUTH under a shorter ReadTimeout", plain.Addr, Options{Password: "pw-hidden", DialTimeout: time.Minute, ReadTimeout: short}, false, short},
		{"CLIENT SETNAME", plain.Addr, Options{ClientName: "hung", DialTimeout: short, ReadTimeout: time.Minute}, false, short},
		{"TLS handshake", tlsSrv.Addr, Options{TLSConfig: tlsConf, DialTimeout: short, ReadTimeout: time.Minute}, false, short},
		{"no setup: the first command", plain.Addr, Options{DialTimeout: time.Minute, ReadTimeout: short}, true, short},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, tt.opts)
			start := time.Now()
			c, err := set.Get(context.Background(), tt.addr)
			if tt.first {
				if err != nil {
					t.Fatalf("Get = %v, want a connection (nothing to wait for)", err)
				}
				_, err = c.Do("PING")
				c.Close()
			}
			elapsed := time.Since(start)
			if err == nil {
				t.Fatal("no error from a hung server")
			}
			if elapsed < tt.bound-50*time.Millisecond || elapsed > tt.bound+2*time.Second {
				t.Errorf("error after %v, want about %v", elapsed, tt.bound)
			}
			var ne net.Error
			if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
				t.Errorf("error %q (%T) is not a timeout", err, err)
			}
			var de *DialError
			if !tt.first && !errors.As(err, &de) {
				t.Errorf("error %q, want a *DialError", err)
			}
			if errors.Is(err, ErrClosedBeforeReply) || errors.Is(err, ErrAuth) || strings.Contains(err.Error(), "pw-hidden") {
				t.Errorf("error %q reads as a TLS port, an auth failure, or shows the password", err)
			}
			var reply redis.Error
			if errors.As(err, &reply) {
				t.Errorf("error %q carries a server reply", err)
			}
		})
	}
}

// TestReview13FullTLSServerSaysSo: a redis-server at maxclients cannot
// send its refusal to a TLS client (no handshake was done) and drops the
// connection in the middle of the handshake: the caller got a bare
// "shardis: dial <addr>: EOF" (or a reset), which reads like a broken
// network. The error must say that the server closed the connection
// during the TLS handshake, name the maxclients refusal as the likely
// cause, keep the network's error matchable, and not be an
// authentication failure.
func TestReview13FullTLSServerSaysSo(t *testing.T) {
	srv := startServer(t, redistest.Options{TLS: true, DefaultPassword: "full-tls-pw", Args: []string{"--maxclients", "1"}})
	var holder redis.Conn
	deadline := time.Now().Add(10 * time.Second)
	for holder == nil {
		c, err := redis.Dial("tcp", srv.Addr, redis.DialUseTLS(true), redis.DialTLSConfig(srv.TLS),
			redis.DialPassword("full-tls-pw"), redis.DialConnectTimeout(2*time.Second), redis.DialReadTimeout(2*time.Second))
		if err == nil {
			if _, err = c.Do("PING"); err == nil {
				holder = c
				break
			}
			c.Close()
		}
		if time.Now().After(deadline) {
			t.Fatalf("could not take the server's only connection: %v", err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	defer holder.Close()

	set := newTestSet(t, Options{TLSConfig: srv.TLS, Password: "full-tls-pw"})
	for i := range 5 {
		c, err := set.Get(context.Background(), srv.Addr)
		if err == nil {
			c.Close()
			t.Fatal("Get succeeded on a server at maxclients")
		}
		var de *DialError
		if !errors.As(err, &de) || de.Addr != srv.Addr {
			t.Errorf("#%d: Get = %v (%T), want a *DialError for %s", i, err, err, srv.Addr)
		}
		if !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
			t.Errorf("#%d: Get = %v, want the network's EOF or reset still matchable", i, err)
		}
		if msg := err.Error(); !strings.Contains(msg, "TLS handshake") || !strings.Contains(msg, "maxclients") {
			t.Errorf("#%d: Get = %q, want it to say the server closed the TLS handshake and name maxclients", i, msg)
		}
		if errors.Is(err, ErrAuth) || errors.Is(err, ErrClosedBeforeReply) || strings.Contains(err.Error(), "full-tls-pw") {
			t.Errorf("#%d: Get = %q: an auth failure, a plain-text hint, or the password shown", i, err)
		}
	}
}
