package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Trickler is a byte-level fake server for protocol-fault tests: it
// accepts RESP commands on a loopback port and answers every one of them
// with the same reply, sent one byte at a time, Interval apart — a server
// (or a network) that is alive but too slow to finish a reply. It is not
// a Redis: use real servers for anything that tests Redis behaviour.
type Trickler struct {
	// Addr is the host:port it listens on (127.0.0.1).
	Addr string
	// Reply is what every command gets, byte by byte.
	Reply []byte
	// Interval is the pause before each byte.
	Interval time.Duration

	ln       net.Listener
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    map[net.Conn]bool
	closed   bool
	accepted int
	proxy    *TrickleProxy // nil for a fake server
}

// TrickleReply is a 96-byte bulk string reply, the default of
// StartTrickler.
var TrickleReply = []byte("$89\r\n" + string(trickleValue()) + "\r\n")

func trickleValue() []byte {
	b := make([]byte, 89)
	for i := range b {
		b[i] = 'a' + byte(i%26)
	}
	return b
}

// StartTrickler starts a Trickler that sends reply (TrickleReply when nil)
// a byte every interval; it stops when the test ends.
func StartTrickler(tb testing.TB, interval time.Duration, reply []byte) *Trickler {
	tb.Helper()
	if reply == nil {
		reply = TrickleReply
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("trickler: listen: %v", err)
	}
	t := &Trickler{Addr: ln.Addr().String(), Reply: reply, Interval: interval, ln: ln, conns: map[net.Conn]bool{}}
	t.wg.Add(1)
	go t.accept()
	tb.Cleanup(t.Close)
	return t
}

// Accepted returns how many connections it has accepted.
func (t *Trickler) Accepted() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.accepted
}

// Close stops listening, closes every connection and waits for its
// goroutines.
func (t *Trickler) Close() {
	t.mu.Lock()
	t.closed = true
	for c := range t.conns {
		c.Close()
	}
	t.mu.Unlock()
	t.ln.Close()
	t.wg.Wait()
}

func (t *Trickler) accept() {
	defer t.wg.Done()
	for {
		c, err := t.ln.Accept()
		if err != nil {
			return
		}
		t.mu.Lock()
		if t.closed {
			t.mu.Unlock()
			c.Close()
			return
		}
		t.conns[c] = true
		t.accepted++
		t.wg.Add(1)
		t.mu.Unlock()
		if t.proxy != nil {
			go t.proxyServe(c)
			continue
		}
		go t.serve(c)
	}
}

// proxyServe forwards c's commands to the proxy's backend.
func (t *Trickler) proxyServe(c net.Conn) {
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		delete(t.conns, c)
		t.mu.Unlock()
		c.Close()
	}()
	t.proxy.forward(c)
}

// serve answers each command read from c, in order.
func (t *Trickler) serve(c net.Conn) {
	defer t.wg.Done()
	defer func() {
		t.mu.Lock()
		delete(t.conns, c)
		t.mu.Unlock()
		c.Close()
	}()
	r := bufio.NewReader(c)
	for {
		if err := SkipCommand(r); err != nil {
			return
		}
		for i := range t.Reply {
			time.Sleep(t.Interval)
			if _, err := c.Write(t.Reply[i : i+1]); err != nil {
				return
			}
		}
	}
}

// SkipCommand reads one RESP command (an array of bulk strings) from r
// and drops it; an error says the stream ended or is no such command.
// Byte-level fake servers use it to read a client's commands.
func SkipCommand(r *bufio.Reader) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	if len(line) < 4 || line[0] != '*' {
		return fmt.Errorf("trickler: not a command: %q", line)
	}
	n, err := strconv.Atoi(line[1 : len(line)-2])
	if err != nil {
		return err
	}
	for range n {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return err
		}
		if len(hdr) < 4 || hdr[0] != '$' {
			return errors.New("trickler: not a bulk string")
		}
		size, err := strconv.Atoi(hdr[1 : len(hdr)-2])
		if err != nil || size < 0 {
			return errors.New("trickler: bad length")
		}
		if _, err := r.Discard(size + 2); err != nil {
			return err
		}
	}
	return nil
}

// TrickleProxy is a loopback proxy to a real server for protocol-fault
// tests: it forwards every command, and sends the replies a test picks
// (Match) one byte at a time, Interval apart — a server alive but too
// slow to finish the replies of some commands — and the others as they
// come.
type TrickleProxy struct {
	*Trickler
	// Backend is the real server's host:port.
	Backend string
	// Match picks the replies to trickle: cmd is the upper-case name of
	// the command the reply answers, replies being taken in the order
	// the commands were sent ("" for a reply past them: a pub/sub
	// message, the confirmation of a second channel of one SUBSCRIBE),
	// reply the reply's bytes. Match is called from the proxy's
	// goroutines.
	Match func(cmd string, reply []byte) bool
}

// StartTrickleProxy starts a TrickleProxy to backend; it stops when the
// test ends.
func StartTrickleProxy(tb testing.TB, backend string, interval time.Duration, match func(cmd string, reply []byte) bool) *TrickleProxy {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatalf("trickle proxy: listen: %v", err)
	}
	p := &TrickleProxy{Backend: backend, Match: match}
	p.Trickler = &Trickler{Addr: ln.Addr().String(), Interval: interval, ln: ln, conns: map[net.Conn]bool{}, proxy: p}
	p.wg.Add(1)
	go p.accept()
	tb.Cleanup(p.Close)
	return p
}

// forward serves client c through a connection to the backend.
func (p *TrickleProxy) forward(c net.Conn) {
	b, err := net.DialTimeout("tcp", p.Backend, 5*time.Second)
	if err != nil {
		return
	}
	if !p.track(b) {
		b.Close()
		return
	}
	defer func() {
		p.mu.Lock()
		delete(p.conns, b)
		p.mu.Unlock()
		b.Close()
	}()
	var mu sync.Mutex
	var names []string // of the commands not answered yet, in order
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer c.Close()
		r := bufio.NewReader(b)
		for {
			reply, err := rawReply(r, nil)
			if err != nil {
				return
			}
			mu.Lock()
			cmd := ""
			if len(names) > 0 {
				cmd, names = names[0], names[1:]
			}
			mu.Unlock()
			if !p.Match(cmd, reply) {
				if _, err := c.Write(reply); err != nil {
					return
				}
				continue
			}
			for i := range reply {
				time.Sleep(p.Interval)
				if _, err := c.Write(reply[i : i+1]); err != nil {
					return
				}
			}
		}
	}()
	r := bufio.NewReader(c)
	for {
		args, err := readCommand(r)
		if err != nil {
			break
		}
		mu.Lock()
		names = append(names, strings.ToUpper(args[0]))
		mu.Unlock()
		if _, err := b.Write(encodeCommand(args)); err != nil {
			break
		}
	}
	b.Close()
	<-done
}

// track adds conn to those Close closes, unless the proxy is closed.
func (t *Trickler) track(conn net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return false
	}
	t.conns[conn] = true
	return true
}

// readCommand reads one RESP command (an array of bulk strings).
func readCommand(r *bufio.Reader) ([]string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 4 || line[0] != '*' {
		return nil, fmt.Errorf("trickle proxy: not a command: %q", line)
	}
	n, err := strconv.Atoi(line[1 : len(line)-2])
	if err != nil || n < 1 {
		return nil, fmt.Errorf("trickle proxy: bad command: %q", line)
	}
	args := make([]string, n)
	for i := range args {
		hdr, err := r.ReadString('\n')
		if err != nil {
			return nil, err
		}
		if len(hdr) < 4 || hdr[0] != '$' {
			return nil, errors.New("trickle proxy: not a bulk string")
		}
		size, err := strconv.Atoi(hdr[1 : len(hdr)-2])
		if err != nil || size < 0 {
			return nil, errors.New("trickle proxy: bad length")
		}
		b := make([]byte, size+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		args[i] = string(b[:size])
	}
	return args, nil
}

// rawReply reads one RESP2 or RESP3 reply from r and returns its bytes,
// appended to buf.
func rawReply(r *bufio.Reader, buf []byte) ([]byte, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return nil, err
	}
	if len(line) < 3 {
		return nil, fmt.Errorf("trickle proxy: bad reply line %q", line)
	}
	buf = append(buf, line...)
	n := 0
	switch line[0] {
	case '$', '=', '!', '*', '%', '~', '>', '|':
		if n, err = strconv.Atoi(line[1 : len(line)-2]); err != nil {
			return nil, fmt.Errorf("trickle proxy: bad reply line %q", line)
		}
	}
	switch line[0] {
	case '$', '=', '!':
		if n < 0 {
			return buf, nil
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return nil, err
		}
		return append(buf, b...), nil
	case '%', '|':
		n *= 2
		fallthrough
	case '*', '~', '>':
		for range max(n, 0) {
			if buf, err = rawReply(r, buf); err != nil {
				return nil, err
			}
		}
	}
	return buf, nil
}
