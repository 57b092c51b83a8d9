package sentinel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// DialTimeout bounds the TLS handshake too: a Sentinel that accepts the
// TCP connection but never answers the handshake (here a stopped
// process, whose kernel still accepts) fails within DialTimeout, not
// after redigo's own 10 s handshake timeout, and a cancelled context
// stops the handshake.
func TestReview6SentinelTLSHandshakeBoundedByDialTimeout(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{TLS: true})
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Resume() })
	c, err := sentinel.New("mymaster", []string{srv.Addr}, sentinel.Options{
		TLSConfig:   srv.TLS.ClientConfig(),
		DialTimeout: 100 * time.Millisecond,
		ReadTimeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, _, err = c.MasterAddr(context.Background())
	took := time.Since(start)
	if err == nil {
		t.Fatal("MasterAddr succeeded against a stopped Sentinel")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %v does not match context.DeadlineExceeded", err)
	}
	// 10 s is redigo's handshake timeout; 100 ms is asked for.
	if took > 5*time.Second {
		t.Errorf("MasterAddr took %v with a DialTimeout of 100ms", took)
	}

	c2, err := sentinel.New("mymaster", []string{srv.Addr}, sentinel.Options{TLSConfig: srv.TLS.ClientConfig(), DialTimeout: time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start = time.Now()
	_, _, err = c2.Dial(ctx, srv.Addr)
	took = time.Since(start)
	if err == nil {
		t.Fatal("Dial succeeded against a stopped Sentinel")
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Dial's error %v does not match context.DeadlineExceeded", err)
	}
	if took > 5*time.Second {
		t.Errorf("Dial took %v under a context of 100ms", took)
	}
}
