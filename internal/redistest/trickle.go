package redistest

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"strconv"
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
		go t.serve(c)
	}
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
		if err := skipCommand(r); err != nil {
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

// skipCommand reads one RESP command (an array of bulk strings).
func skipCommand(r *bufio.Reader) error {
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
