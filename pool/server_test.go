package pool

import (
	"crypto/tls"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// testServer is a redis-server process owned by one test.
type testServer struct {
	Addr string
	TLS  *tls.Config // client configuration trusting the server, or nil
}

// startServer runs a redis-server configured by opts on a free 127.0.0.1
// port and stops it when the test ends. A TLS server's client configuration
// has an empty ServerName, so the Set has to fill it in from the address.
func startServer(t testing.TB, opts redistest.Options) *testServer {
	t.Helper()
	s := redistest.StartTB(t, opts)
	srv := &testServer{Addr: s.Addr}
	if s.TLS != nil {
		srv.TLS = s.TLS.ClientConfig()
		srv.TLS.ServerName = ""
		srv.TLS.Certificates = nil // the servers do not ask for one
	}
	return srv
}

// plainServer runs a redis-server with extra command line arguments.
func plainServer(t testing.TB, args ...string) *testServer {
	t.Helper()
	return startServer(t, redistest.Options{Args: args})
}

// aclServer runs a redis-server where only ACL user alice (password s3cret,
// every permission) can log in.
func aclServer(t testing.TB, tlsOn bool) *testServer {
	t.Helper()
	return startServer(t, redistest.Options{
		Users: []redistest.User{{Name: "alice", Password: "s3cret"}},
		TLS:   tlsOn,
	})
}

// adminConn is a connection outside any Set, for inspecting the server.
func adminConn(t testing.TB, srv *testServer, opts ...redis.DialOption) redis.Conn {
	t.Helper()
	opts = append([]redis.DialOption{redis.DialConnectTimeout(2 * time.Second), redis.DialReadTimeout(2 * time.Second)}, opts...)
	if srv.TLS != nil {
		opts = append(opts, redis.DialUseTLS(true), redis.DialTLSConfig(srv.TLS))
	}
	c, err := redis.Dial("tcp", srv.Addr, opts...)
	if err != nil {
		t.Fatalf("admin dial %s: %v", srv.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}
