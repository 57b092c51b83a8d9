package cmdspec

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os/exec"
	"strconv"
	"time"

	"github.com/gomodule/redigo/redis"
)

// DefaultServerPath is where the generator looks for redis-server.
const DefaultServerPath = "/usr/bin/redis-server"

// Server is a throw-away redis-server process listening on 127.0.0.1.
type Server struct {
	// Addr is the server's host:port.
	Addr string
	cmd  *exec.Cmd
	done chan struct{}
}

// StartServer runs bin on a free 127.0.0.1 port with persistence off and
// returns once the server answers PING. Close stops it.
func StartServer(ctx context.Context, bin string) (*Server, error) {
	var last error
	for attempt := 0; attempt < 5; attempt++ {
		s, err := tryStart(ctx, bin)
		if err == nil {
			return s, nil
		}
		last = err
		if ctx.Err() != nil {
			break
		}
	}
	return nil, last
}

func tryStart(ctx context.Context, bin string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1",
		"--save", "", "--appendonly", "no", "--daemonize", "no", "--logfile", "")
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("cmdspec: start %s: %w", bin, err)
	}
	s := &Server{Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), cmd: cmd, done: make(chan struct{})}
	go func() {
		_ = cmd.Wait()
		close(s.done)
	}()
	deadline := time.NewTimer(10 * time.Second)
	defer deadline.Stop()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		if s.ping(ctx) == nil {
			return s, nil
		}
		select {
		case <-s.done:
			return nil, fmt.Errorf("cmdspec: %s exited before answering on %s", bin, s.Addr)
		case <-ctx.Done():
			s.Close()
			return nil, ctx.Err()
		case <-deadline.C:
			s.Close()
			return nil, fmt.Errorf("cmdspec: %s did not answer PING on %s", bin, s.Addr)
		case <-tick.C:
		}
	}
}

func (s *Server) ping(ctx context.Context) error {
	c, err := s.Dial(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = redis.DoContext(c, ctx, "PING")
	return err
}

// Dial opens a connection to the server.
func (s *Server) Dial(ctx context.Context) (redis.Conn, error) {
	return redis.DialContext(ctx, "tcp", s.Addr,
		redis.DialConnectTimeout(time.Second), redis.DialReadTimeout(10*time.Second), redis.DialWriteTimeout(10*time.Second))
}

// Close kills the server and waits for it to exit.
func (s *Server) Close() {
	_ = s.cmd.Process.Kill()
	<-s.done
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("cmdspec: find a free port: %w", err)
	}
	defer l.Close()
	addr, ok := l.Addr().(*net.TCPAddr)
	if !ok {
		return 0, errors.New("cmdspec: listener has no TCP address")
	}
	return addr.Port, nil
}

// Generate starts bin, reads its command table and renders it.
func Generate(ctx context.Context, bin string) ([]byte, error) {
	s, err := StartServer(ctx, bin)
	if err != nil {
		return nil, err
	}
	defer s.Close()
	c, err := s.Dial(ctx)
	if err != nil {
		return nil, fmt.Errorf("cmdspec: dial %s: %w", s.Addr, err)
	}
	defer c.Close()
	version, cmds, err := Fetch(ctx, c)
	if err != nil {
		return nil, err
	}
	return Render(version, cmds)
}
