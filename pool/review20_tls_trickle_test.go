package pool

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// startTLSTrickler is a byte-level fake TLS server with the certificate
// of the real TLS server s: it answers each command line with a 96-byte
// bulk string, one byte (one TLS record) every interval.
func startTLSTrickler(t *testing.T, s *redistest.Server, interval time.Duration) string {
	t.Helper()
	cert, err := tls.LoadX509KeyPair(s.TLS.CertFile, s.TLS.KeyFile)
	if err != nil {
		t.Fatal(err)
	}
	ln, err := tls.Listen("tcp", "127.0.0.1:0", &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12})
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer c.Close()
				r := bufio.NewReader(c)
				for {
					// Commands come as RESP arrays: skip to the value's line.
					if _, err := r.ReadString('\n'); err != nil { // *N
						return
					}
					if _, err := r.ReadString('\n'); err != nil { // $len
						return
					}
					if _, err := r.ReadString('\n'); err != nil { // the name
						return
					}
					for _, b := range redistest.TrickleReply {
						select {
						case <-done:
							return
						case <-time.After(interval):
						}
						if _, err := c.Write([]byte{b}); err != nil {
							return
						}
					}
				}
			}()
		}
	}()
	t.Cleanup(func() {
		close(done)
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// Over TLS as over plain TCP, ReadTimeout bounds a whole reply: a server
// that sends one a byte (a TLS record) every 50 ms fails the read after
// about ReadTimeout, not ReadTimeout per byte.
func TestReview20TLSTrickledReplyTimesOutWithinReadTimeout(t *testing.T) {
	const readTimeout = 400 * time.Millisecond
	srv := redistest.StartTB(t, redistest.Options{TLS: true})
	addr := startTLSTrickler(t, srv, 50*time.Millisecond)
	conf := srv.TLS.ClientConfig()
	set := newTestSet(t, Options{ReadTimeout: readTimeout, DialTimeout: 2 * time.Second, TLSConfig: conf})
	for round := 1; ; round++ {
		c, err := set.Get(context.Background(), addr)
		if err != nil {
			t.Fatal(err)
		}
		start := time.Now()
		_, err = c.Do("PING")
		took := time.Since(start)
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("Do = %v, want a timeout", err)
		}
		if c.Err() == nil {
			t.Error("a timed-out TLS connection is not failed for good")
		}
		c.Close()
		if took < readTimeout+readTimeout/10 {
			break
		}
		if round == 3 {
			t.Fatalf("a trickled TLS reply took %v to time out with ReadTimeout %v", took, readTimeout)
		}
		t.Logf("round %d took %v; again", round, took)
	}
}
