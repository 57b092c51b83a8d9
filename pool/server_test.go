package pool

import (
	"bytes"
	"crypto/tls"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// redisServer is the redis-server binary the tests run.
const redisServer = "/usr/bin/redis-server"

// testServer is a redis-server process owned by one test.
type testServer struct {
	Addr string
	TLS  *tls.Config // client configuration trusting the server, or nil
}

// startServer runs redis-server on a free 127.0.0.1 port with the extra
// arguments and stops it when the test ends.
func startServer(t testing.TB, args ...string) *testServer {
	t.Helper()
	return start(t, nil, args)
}

// startTLSServer runs redis-server accepting TLS only, with a throwaway
// certificate for 127.0.0.1.
func startTLSServer(t testing.TB, args ...string) *testServer {
	t.Helper()
	files, client := writeTestCerts(t, t.TempDir())
	tlsArgs := []string{
		"--tls-cert-file", files.cert,
		"--tls-key-file", files.key,
		"--tls-ca-cert-file", files.ca,
		"--tls-auth-clients", "no",
	}
	return start(t, client, append(tlsArgs, args...))
}

func start(t testing.TB, client *tls.Config, args []string) *testServer {
	t.Helper()
	if _, err := exec.LookPath(redisServer); err != nil {
		t.Skipf("%s not installed", redisServer)
	}
	var lastErr error
	for range 5 { // a port picked here may be taken by someone else first
		port := freePort(t)
		srv, err := tryStart(t, client, port, args)
		if err == nil {
			return srv
		}
		lastErr = err
	}
	t.Fatalf("start redis-server: %v", lastErr)
	return nil
}

func tryStart(t testing.TB, client *tls.Config, port int, args []string) (*testServer, error) {
	dir := t.TempDir()
	portArgs := []string{"--port", strconv.Itoa(port)}
	if client != nil {
		portArgs = []string{"--port", "0", "--tls-port", strconv.Itoa(port)}
	}
	all := append([]string{
		"--bind", "127.0.0.1",
		"--save", "",
		"--appendonly", "no",
		"--loglevel", "warning",
		"--dir", dir,
	}, portArgs...)
	all = append(all, args...)
	cmd := exec.Command(redisServer, all...)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	stop := sync.OnceFunc(func() {
		cmd.Process.Kill()
		<-done
	})
	addr := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	if err := waitReady(addr, client, done); err != nil {
		stop()
		return nil, errors.Join(err, errors.New(out.String()))
	}
	t.Cleanup(stop)
	return &testServer{Addr: addr, TLS: client}, nil
}

// waitReady waits until the server answers PING (a NOAUTH reply counts:
// the server is up) or the process ends.
func waitReady(addr string, client *tls.Config, exited <-chan struct{}) error {
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			return errors.New("redis-server exited")
		default:
		}
		opts := []redis.DialOption{redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(time.Second)}
		if client != nil {
			opts = append(opts, redis.DialUseTLS(true), redis.DialTLSConfig(client))
		}
		c, err := redis.Dial("tcp", addr, opts...)
		if err == nil {
			_, err = c.Do("PING")
			c.Close()
			var reply redis.Error
			if err == nil || errors.As(err, &reply) {
				return nil
			}
		}
		if time.Now().After(deadline) {
			return err
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// freePort asks the kernel for a port that is free right now.
func freePort(t testing.TB) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
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
