package pool

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// insecureTLS is a client configuration for servers that never finish a
// handshake anyway.
func insecureTLS() *tls.Config {
	return &tls.Config{InsecureSkipVerify: true} //nolint:gosec // test only: the peer never answers
}

func TestTLSEndToEnd(t *testing.T) {
	srv := aclServer(t, true)
	client := srv.TLS
	set := newTestSet(t, Options{TLSConfig: client, Username: "alice", Password: "s3cret", DB: 1})
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("SET", "over-tls", "1"); err != nil {
		t.Fatal(err)
	}
	admin := adminConn(t, srv, redis.DialUsername("alice"), redis.DialPassword("s3cret"), redis.DialDatabase(1))
	if n, err := redis.Int(admin.Do("EXISTS", "over-tls")); err != nil || n != 1 {
		t.Errorf("EXISTS over-tls in DB 1 = %d, %v; want 1", n, err)
	}
	if client.ServerName != "" {
		t.Errorf("the caller's tls.Config was modified: ServerName = %q", client.ServerName)
	}
}

func TestTLSChecksCertificate(t *testing.T) {
	srv := startServer(t, redistest.Options{TLS: true})
	tests := []struct {
		name string
		conf *tls.Config
	}{
		{"unknown CA", &tls.Config{RootCAs: x509.NewCertPool()}},
		{"wrong server name", &tls.Config{RootCAs: srv.TLS.RootCAs, ServerName: "redis.example"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			set := newTestSet(t, Options{TLSConfig: tt.conf})
			_, err := set.Get(context.Background(), srv.Addr)
			var de *DialError
			if !errors.As(err, &de) {
				t.Fatalf("Get = %v, want *DialError", err)
			}
			var unknownCA x509.UnknownAuthorityError
			var badHost x509.HostnameError
			if !errors.As(err, &unknownCA) && !errors.As(err, &badHost) {
				t.Errorf("Get = %v, want a certificate verification error", err)
			}
		})
	}
}

func TestPlainClientOnTLSServerFails(t *testing.T) {
	srv := startServer(t, redistest.Options{TLS: true})
	set := newTestSet(t, Options{ClientName: "plain"})
	_, err := set.Get(context.Background(), srv.Addr)
	var de *DialError
	if !errors.As(err, &de) {
		t.Fatalf("Get = %v, want *DialError", err)
	}
}
