package pool

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// TLS options against a redis-server that speaks plain text (a topology
// given with rediss:// whose servers have no TLS): the server waits for
// the end of an inline command that the ClientHello never gives, so the
// handshake ends at DialTimeout. The error said only "context deadline
// exceeded"; it names the TLS handshake, so that the mismatch can be
// told from a server that does not answer at all.
func TestReview14TLSHandshakeTimeoutIsNamed(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{DefaultPassword: "pw-hidden-14"})
	set := newTestSet(t, Options{TLSConfig: insecureTLS(), Password: "pw-hidden-14", DialTimeout: 300 * time.Millisecond})
	_, err := set.Get(context.Background(), srv.Addr)
	var de *DialError
	if !errors.As(err, &de) {
		t.Fatalf("Get = %v, want *DialError", err)
	}
	if !strings.Contains(err.Error(), "TLS handshake") {
		t.Errorf("error %q does not name the TLS handshake", err)
	}
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("error %q does not wrap context.DeadlineExceeded", err)
	}
	if strings.Contains(err.Error(), "pw-hidden-14") {
		t.Errorf("error %q contains the password", err)
	}
}
