package redistest

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Deadlines of the waits; none of them can hang.
const (
	startTimeout = 20 * time.Second // until the server answers PING
	stopGrace    = 5 * time.Second  // after SIGTERM, before SIGKILL
	exitTimeout  = 10 * time.Second // after SIGKILL
	doTimeout    = 10 * time.Second // one Do without a deadline of its own
	startTries   = 8                // ports tried when bind fails
)

// errPortBusy means redis-server could not bind its port.
var errPortBusy = errors.New("shardis: port already in use")

// Server is one redis-server process on 127.0.0.1, started by Start.
//
// The exported fields never change after Start returns. The methods are
// safe for concurrent use.
type Server struct {
	// Addr is "127.0.0.1:<Port>".
	Addr string
	// Port is the port clients connect to (the TLS port for a TLS server).
	Port int
	// Dir is the server's own temporary directory (configuration, logs,
	// nodes.conf, TLS files). Stop removes it.
	Dir string
	// TLS holds the certificate files of a TLS server; nil otherwise.
	TLS *TLSFiles

	opts Options
	// bin and conf, when set, replace redis-server and the generated
	// redis.conf (redis-sentinel processes; see sentinel.go).
	bin  string
	conf func(port int) string

	mu      sync.Mutex
	proc    *process // nil while not running
	paused  bool
	stopped bool
	lastLog string // the log, saved by Stop before the directory goes
}

// process is one run of redis-server.
type process struct {
	cmd       *exec.Cmd
	done      chan struct{} // closed when the process has exited and been reaped
	err       error         // Wait's result; read only after done is closed
	logOffset int64         // size of the log file when this run began
}

func (p *process) pid() int { return p.cmd.Process.Pid }

func (p *process) exited() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Start runs a redis-server configured by opts on a free loopback port and
// returns once it answers PING (within 20 s). If the port turns out to be
// taken, it tries another one.
func Start(opts Options) (*Server, error) {
	return StartContext(context.Background(), opts)
}

// StartContext is Start with a context that can cut the wait short.
func StartContext(ctx context.Context, opts Options) (*Server, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	if err := Available(); err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "shardis-redis-*")
	if err != nil {
		return nil, fmt.Errorf("shardis: create server directory: %w", err)
	}
	s := &Server{Dir: dir, opts: opts}
	if err := s.start(ctx); err != nil {
		os.RemoveAll(dir)
		return nil, err
	}
	return s, nil
}

// start prepares the TLS files and runs the server on fresh ports until
// one binds.
func (s *Server) start(ctx context.Context) error {
	if s.opts.TLS {
		a := s.opts.authority
		if a == nil {
			var err error
			if a, err = newAuthority(); err != nil {
				return err
			}
		}
		files, err := a.writeFiles(s.Dir)
		if err != nil {
			return err
		}
		s.TLS = files
	}
	var lastErr error
	for range startTries {
		port, err := pickPort()
		if err != nil {
			return err
		}
		s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		conf := configText(s.opts, port, s.Dir, s.TLS)
		if s.conf != nil {
			conf = s.conf(port)
		}
		if err := os.WriteFile(filepath.Join(s.Dir, confName), []byte(conf), 0o600); err != nil {
			release(port)
			return fmt.Errorf("shardis: write redis.conf: %w", err)
		}
		os.Remove(filepath.Join(s.Dir, logName))
		os.Remove(filepath.Join(s.Dir, outputName))
		p, err := s.run(ctx)
		if err == nil {
			hold(port)
			s.proc = p
			register(s)
			return nil
		}
		release(port)
		if !errors.Is(err, errPortBusy) {
			return err
		}
		lastErr = err
	}
	return fmt.Errorf("%w: no port could be bound after %d tries: %w", ErrStartFailed, startTries, lastErr)
}

// pickPort is FreePort; tests replace it to force a port collision.
var pickPort = FreePort

// run starts redis-server with the configuration already in Dir and
// waits until it answers. On failure the process is gone when run returns.
func (s *Server) run(ctx context.Context) (*process, error) {
	out, err := os.OpenFile(filepath.Join(s.Dir, outputName), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("shardis: open output file: %w", err)
	}
	defer out.Close() // the child has its own copy
	var offset int64
	if fi, err := os.Stat(filepath.Join(s.Dir, logName)); err == nil {
		offset = fi.Size()
	}
	bin := serverBin
	if s.bin != "" {
		bin = s.bin
	}
	cmd := exec.Command(bin, append([]string{filepath.Join(s.Dir, confName)}, s.opts.Args...)...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = out, out
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrStartFailed, err)
	}
	p := &process{cmd: cmd, done: make(chan struct{}), logOffset: offset}
	go func() {
		p.err = cmd.Wait()
		close(p.done)
	}()
	if err := s.waitReady(ctx, p); err != nil {
		p.cmd.Process.Kill()
		<-p.done
		return nil, err
	}
	return p, nil
}

// waitReady polls until the server answers PING and INFO says it is our
// process (not another server that happens to hold the port), the
// process exits, or the deadline passes.
func (s *Server) waitReady(ctx context.Context, p *process) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	// A probe stuck on whatever else holds the port ends when our process
	// exits.
	probeCtx, cancelProbe := context.WithCancel(ctx)
	defer cancelProbe()
	go func() {
		select {
		case <-p.done:
			cancelProbe()
		case <-probeCtx.Done():
		}
	}()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-p.done:
			text := s.logSince(p.logOffset)
			if strings.Contains(text, "Address already in use") {
				return fmt.Errorf("%w: %s", errPortBusy, s.Addr)
			}
			return fmt.Errorf("%w: redis-server for %s exited (%v); log:\n%s", ErrStartFailed, s.Addr, p.err, tail(text, 10))
		case <-ctx.Done():
			return fmt.Errorf("%w: redis-server for %s did not answer PING: %w; log:\n%s",
				ErrTimeout, s.Addr, ctx.Err(), tail(s.logSince(p.logOffset), 10))
		case <-tick.C:
		}
		if s.answers(probeCtx, p.pid()) {
			return nil
		}
	}
}

// answers reports whether the server on s.Addr replies PONG and is the
// process pid.
func (s *Server) answers(ctx context.Context, pid int) bool {
	ctx, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	c, err := s.dial(ctx)
	if err != nil {
		return false
	}
	defer c.close()
	if v, err := c.do(ctx, "PING"); err != nil || v != "PONG" {
		return false
	}
	v, err := c.do(ctx, "INFO", "server")
	if err != nil {
		var re *ReplyError
		return errors.As(err, &re) // no permission for INFO: trust PONG
	}
	text, _ := v.(string)
	return strings.Contains(text, "\nprocess_id:"+strconv.Itoa(pid)+"\r\n")
}

// dial opens a harness connection: TLS when the server uses it, logged in
// with the harness account.
func (s *Server) dial(ctx context.Context) (*respConn, error) {
	user, pass, auth := s.opts.credentials()
	return dialResp(ctx, s.Addr, s.tlsConfig(), user, pass, auth)
}

func (s *Server) tlsConfig() *tls.Config {
	if s.TLS == nil {
		return nil
	}
	return s.TLS.ClientConfig()
}

// PID returns the process id of the running redis-server, or 0 when it is
// not running.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil || s.proc.exited() {
		return 0
	}
	return s.proc.pid()
}

// Stop ends the server for good: SIGTERM (and SIGCONT, in case it is
// paused), then SIGKILL if it has not exited after 5 s. It then removes
// the server's directory. Stop is idempotent; the log stays readable
// through Log.
func (s *Server) Stop() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return nil
	}
	var err error
	if s.proc != nil {
		err = s.proc.terminate()
		s.proc = nil
	}
	s.paused = false
	s.stopped = true
	s.lastLog = s.logSince(0)
	unregister(s)
	release(s.Port)
	if rmErr := os.RemoveAll(s.Dir); rmErr != nil && err == nil {
		err = fmt.Errorf("shardis: remove %s: %w", s.Dir, rmErr)
	}
	return err
}

// terminate sends SIGTERM and waits, escalating to SIGKILL after
// stopGrace.
func (p *process) terminate() error {
	if p.exited() {
		return nil
	}
	sigTerm(p.cmd.Process)
	sigCont(p.cmd.Process) // a stopped process handles SIGTERM only once continued
	select {
	case <-p.done:
		return nil
	case <-time.After(stopGrace):
	}
	return p.kill()
}

// kill sends SIGKILL and waits for the process to be reaped.
func (p *process) kill() error {
	if p.exited() {
		return nil
	}
	p.cmd.Process.Kill()
	select {
	case <-p.done:
		return nil
	case <-time.After(exitTimeout):
		return fmt.Errorf("%w: process %d still running %s after SIGKILL", ErrTimeout, p.pid(), exitTimeout)
	}
}

// Kill ends the server at once with SIGKILL, as a crash would, and waits
// for it to exit. The directory stays, so Restart can bring the server
// back with its data and, for cluster nodes, its nodes.conf. Killing a
// server that is not running does nothing.
func (s *Server) Kill() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrStopped
	}
	if s.proc == nil {
		return nil
	}
	err := s.proc.kill()
	s.proc = nil
	s.paused = false
	return err
}

// Pause freezes the server with SIGSTOP: connections stay open but
// nothing is answered, like a hung host. Resume undoes it.
func (s *Server) Pause() error {
	return s.signal(true)
}

// Resume continues a paused server with SIGCONT.
func (s *Server) Resume() error {
	return s.signal(false)
}

func (s *Server) signal(pause bool) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrStopped
	}
	if s.proc == nil || s.proc.exited() {
		return fmt.Errorf("%w: %s", ErrNotRunning, s.Addr)
	}
	send := sigCont
	if pause {
		send = sigStop
	}
	if err := send(s.proc.cmd.Process); err != nil {
		return fmt.Errorf("shardis: signal redis-server %s: %w", s.Addr, err)
	}
	s.paused = pause
	return waitState(s.proc.pid(), pause, 2*time.Second)
}

// Restart runs the server again on the same port, in the same directory,
// with the same options, and waits until it answers PING. A running
// server is shut down first (SIGTERM); a killed one is simply started.
// Cluster nodes keep their nodes.conf and rejoin their cluster.
func (s *Server) Restart() error {
	return s.RestartContext(context.Background())
}

// RestartContext is Restart with a context that can cut the wait short.
func (s *Server) RestartContext(ctx context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return ErrStopped
	}
	if s.proc != nil {
		if err := s.proc.terminate(); err != nil {
			return err
		}
		s.proc = nil
		s.paused = false
	}
	p, err := s.run(ctx)
	if err != nil {
		return fmt.Errorf("shardis: restart %s: %w", s.Addr, err)
	}
	s.proc = p
	return nil
}

// Log returns the server's log file followed by anything the process
// printed itself (such as configuration errors). After Stop it returns the
// log as it was when the server stopped.
func (s *Server) Log() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stopped {
		return s.lastLog
	}
	return s.logSince(0)
}

// logSince returns the log file from offset on, plus the process output.
func (s *Server) logSince(offset int64) string {
	var b strings.Builder
	if data, err := os.ReadFile(filepath.Join(s.Dir, logName)); err == nil && int64(len(data)) >= offset {
		b.Write(data[offset:])
	}
	if data, err := os.ReadFile(filepath.Join(s.Dir, outputName)); err == nil && len(data) > 0 {
		b.WriteString("--- redis-server output ---\n")
		b.Write(data)
	}
	return b.String()
}

// tail returns the last n lines of text.
func tail(text string, n int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// running reports whether the process is up and not paused, that is
// whether it can be expected to answer.
func (s *Server) running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.exited() && !s.paused
}

// String returns the server's address.
func (s *Server) String() string { return s.Addr }
