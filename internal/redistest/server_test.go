package redistest

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// alive reports whether a process with this pid exists.
func alive(pid int) bool {
	return syscall.Kill(pid, 0) == nil
}

func TestStartStop(t *testing.T) {
	Require(t)
	t.Parallel()
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	if pid == 0 || !alive(pid) {
		t.Fatalf("PID() = %d, want a running process", pid)
	}
	if s.Addr != net.JoinHostPort("127.0.0.1", itoa(s.Port)) {
		t.Errorf("Addr = %q, Port = %d", s.Addr, s.Port)
	}
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("Do(PING) = %q, %v", got, err)
	}
	if got, err := s.Do("CONFIG", "GET", "bind"); err != nil || got != "bind\n127.0.0.1" {
		t.Errorf("CONFIG GET bind = %q, %v", got, err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, confName)); err != nil {
		t.Errorf("no redis.conf in the server directory: %v", err)
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if alive(pid) {
		t.Errorf("process %d still exists after Stop", pid)
	}
	if _, err := os.Stat(s.Dir); !os.IsNotExist(err) {
		t.Errorf("directory %s still exists after Stop (%v)", s.Dir, err)
	}
	if c, err := net.DialTimeout("tcp", s.Addr, time.Second); err == nil {
		c.Close()
		t.Errorf("something still listens on %s", s.Addr)
	}
	if err := s.Stop(); err != nil {
		t.Errorf("second Stop = %v, want nil", err)
	}
	if s.PID() != 0 {
		t.Errorf("PID after Stop = %d", s.PID())
	}
	if !strings.Contains(s.Log(), "Ready to accept connections") {
		t.Errorf("Log after Stop lacks the startup line:\n%s", s.Log())
	}
	for name, f := range map[string]func() error{
		"Restart": s.Restart, "Kill": s.Kill, "Pause": s.Pause, "Resume": s.Resume,
	} {
		if err := f(); !errors.Is(err, ErrStopped) {
			t.Errorf("%s after Stop = %v, want ErrStopped", name, err)
		}
	}
}

func TestKillRestart(t *testing.T) {
	t.Parallel()
	s := StartTB(t, Options{})
	if _, err := s.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	if err := s.Kill(); err != nil {
		t.Fatalf("Kill: %v", err)
	}
	if alive(pid) || s.PID() != 0 {
		t.Fatalf("process %d survived Kill (PID() = %d)", pid, s.PID())
	}
	if _, err := s.Do("PING"); err == nil {
		t.Fatal("PING answered after Kill")
	}
	if err := s.Kill(); err != nil {
		t.Errorf("Kill of a killed server = %v, want nil", err)
	}
	if err := s.Pause(); !errors.Is(err, ErrNotRunning) {
		t.Errorf("Pause of a killed server = %v, want ErrNotRunning", err)
	}
	if _, err := os.Stat(filepath.Join(s.Dir, confName)); err != nil {
		t.Fatalf("Kill removed the directory: %v", err)
	}
	addr := s.Addr
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart: %v", err)
	}
	if s.Addr != addr {
		t.Fatalf("Restart moved the server from %s to %s", addr, s.Addr)
	}
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING after Restart = %q, %v", got, err)
	}
	if s.PID() == pid || s.PID() == 0 {
		t.Errorf("PID after Restart = %d (was %d)", s.PID(), pid)
	}
	// save "" is set, so nothing survives a crash.
	if got, err := s.Do("GET", "k"); err != nil || got != "" {
		t.Errorf("GET k after Restart = %q, %v; want empty", got, err)
	}

	// Restart of a running server shuts it down first.
	pid = s.PID()
	if err := s.Restart(); err != nil {
		t.Fatalf("Restart of a running server: %v", err)
	}
	if alive(pid) || s.PID() == pid {
		t.Errorf("old process %d still running after Restart", pid)
	}
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING after second Restart = %q, %v", got, err)
	}
}

// pingWithin sends PING over a raw connection and waits at most d for
// the reply.
func pingWithin(addr string, d time.Duration) error {
	c, err := redis.Dial("tcp", addr, redis.DialConnectTimeout(d), redis.DialReadTimeout(d), redis.DialWriteTimeout(d))
	if err != nil {
		return err
	}
	defer c.Close()
	_, err = redis.String(c.Do("PING"))
	return err
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	s := StartTB(t, Options{})
	if err := pingWithin(s.Addr, time.Second); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(); err != nil {
		t.Fatalf("Pause: %v", err)
	}
	err := pingWithin(s.Addr, 300*time.Millisecond)
	var ne net.Error
	if !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("PING to a paused server = %v, want a timeout", err)
	}
	if err := s.Resume(); err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if err := pingWithin(s.Addr, time.Second); err != nil {
		t.Fatalf("PING after Resume: %v", err)
	}

	// A paused server still stops promptly: Stop continues it after SIGTERM.
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	pid := s.PID()
	start := time.Now()
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop of a paused server: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("Stop of a paused server took %s", d)
	}
	if alive(pid) {
		t.Errorf("process %d survived Stop", pid)
	}
}

// TestStartRetriesBusyPort forces the first port Start tries to be taken,
// by a plain listener or by another redis-server (which answers PING, so
// only the process id check tells it apart), and checks that Start moves
// to another port.
func TestStartRetriesBusyPort(t *testing.T) {
	Require(t)
	other := StartTB(t, Options{})
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	tests := []struct {
		name string
		busy int
	}{
		{"plain listener", l.Addr().(*net.TCPAddr).Port},
		{"another redis-server", other.Port},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var mu sync.Mutex
			calls := 0
			pickPort = func() (int, error) {
				mu.Lock()
				defer mu.Unlock()
				calls++
				if calls == 1 {
					return tt.busy, nil
				}
				return FreePort()
			}
			defer func() { pickPort = FreePort }()
			s := StartTB(t, Options{})
			if s.Port == tt.busy {
				t.Fatalf("Start kept the busy port %d", tt.busy)
			}
			if calls < 2 {
				t.Fatalf("Start asked for %d ports, want a retry", calls)
			}
			if got, err := s.Do("INFO", "server"); err != nil || !strings.Contains(got, "process_id:"+itoa(s.PID())) {
				t.Fatalf("the server on %s is not the started process: %v", s.Addr, err)
			}
		})
	}
}

func TestStartFailsCleanly(t *testing.T) {
	Require(t)
	t.Parallel()
	start := time.Now()
	_, err := Start(Options{Args: []string{"--no-such-directive", "1"}})
	if !errors.Is(err, ErrStartFailed) {
		t.Fatalf("Start with a bad directive = %v, want ErrStartFailed", err)
	}
	if !strings.Contains(err.Error(), "no-such-directive") {
		t.Errorf("error does not quote the server's complaint: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("a failed start took %s", d)
	}
}

func TestConcurrentUse(t *testing.T) {
	t.Parallel()
	s := StartTB(t, Options{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 20 {
				s.Do("PING")
				s.PID()
				s.Log()
			}
		})
	}
	wg.Go(func() {
		for range 3 {
			s.Pause()
			s.Resume()
		}
		s.Kill()
		if err := s.Restart(); err != nil {
			t.Errorf("Restart: %v", err)
		}
	})
	wg.Wait()
	if got, err := s.Do("PING"); err != nil || got != "PONG" {
		t.Fatalf("PING after concurrent use = %q, %v", got, err)
	}
}

// TestLeftoversCheck makes sure the end-of-run check in TestMain would
// notice a server that is still running, through the registry and, when
// the registry has lost it, through /proc. It must not run in parallel.
func TestLeftoversCheck(t *testing.T) {
	Require(t)
	if err := leftovers(); err != nil {
		t.Fatalf("before starting anything: %v", err)
	}
	s, err := Start(Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	if err := leftovers(); err == nil || !strings.Contains(err.Error(), itoa(s.PID())) {
		t.Errorf("leftovers with a running server = %v", err)
	}
	unregister(s)
	if _, err := os.Stat("/proc/self/cmdline"); err == nil {
		if err := leftovers(); err == nil || !strings.Contains(err.Error(), s.Dir) {
			t.Errorf("leftovers with an unregistered running server = %v", err)
		}
	}
	register(s)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if err := leftovers(); err != nil {
		t.Errorf("after Stop: %v", err)
	}
}
