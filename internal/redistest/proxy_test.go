package redistest

import (
	"bytes"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

func TestProxyForwardsAndSeesWhatClientsSend(t *testing.T) {
	Require(t)
	s := StartTB(t, Options{})
	var sets atomic.Int64
	p := StartProxy(t, s.Addr, ProxyOptions{OnSend: func(chunk []byte) bool {
		if bytes.Contains(bytes.ToUpper(chunk), []byte("$3\r\nSET\r\n")) {
			sets.Add(1)
		}
		return true
	}})
	c, err := redis.Dial("tcp", p.Addr, redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("SET", "k", "through the proxy"); err != nil {
		t.Fatal(err)
	}
	if got, err := redis.String(c.Do("GET", "k")); err != nil || got != "through the proxy" {
		t.Fatalf("GET k through the proxy = %q, %v", got, err)
	}
	if got, err := s.Do("GET", "k"); err != nil || got != "through the proxy" {
		t.Fatalf("GET k at the server = %q, %v", got, err)
	}
	if n := sets.Load(); n != 1 {
		t.Errorf("OnSend saw %d SETs, want 1", n)
	}
}

func TestProxyOnSendFalseClosesTheProxy(t *testing.T) {
	Require(t)
	s := StartTB(t, Options{})
	p := StartProxy(t, s.Addr, ProxyOptions{OnSend: func(chunk []byte) bool {
		return !bytes.Contains(bytes.ToUpper(chunk), []byte("$3\r\nDEL\r\n"))
	}})
	other, err := redis.Dial("tcp", p.Addr, redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Do("PING"); err != nil {
		t.Fatal(err)
	}
	c, err := redis.Dial("tcp", p.Addr, redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("SET", "k", "v"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("DEL", "k"); err == nil {
		t.Fatal("DEL through the proxy answered: want the connection closed")
	}
	if got, err := s.Do("EXISTS", "k"); err != nil || got != "1" {
		t.Errorf("EXISTS k = %q, %v: the DEL reached the server", got, err)
	}
	if _, err := other.Do("PING"); err == nil {
		t.Error("another connection still answers")
	}
	if c, err := net.DialTimeout("tcp", p.Addr, time.Second); err == nil {
		c.Close()
		t.Error("the proxy still accepts connections")
	}
}

func TestProxyOnSendCanHoldACommand(t *testing.T) {
	Require(t)
	s := StartTB(t, Options{})
	held, release := make(chan struct{}), make(chan struct{})
	p := StartProxy(t, s.Addr, ProxyOptions{OnSend: func(chunk []byte) bool {
		if bytes.Contains(bytes.ToUpper(chunk), []byte("$4\r\nINCR\r\n")) {
			close(held)
			<-release
		}
		return true
	}})
	c, err := redis.Dial("tcp", p.Addr, redis.DialReadTimeout(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("INCR", "n"); err == nil {
		t.Fatal("INCR answered while held")
	}
	<-held
	c.Close() // the client gives up; the command is on its way still
	if got, err := s.Do("GET", "n"); err != nil || got != "" {
		t.Fatalf("GET n = %q, %v before the release, want nil", got, err)
	}
	close(release)
	deadline := time.Now().Add(10 * time.Second)
	for {
		got, err := s.Do("GET", "n")
		if err == nil && got == "1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET n = %q, %v after the release, want 1: the held INCR was lost", got, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestProxyCloseDelay(t *testing.T) {
	Require(t)
	s := StartTB(t, Options{})
	const delay = 300 * time.Millisecond
	p := StartProxy(t, s.Addr, ProxyOptions{CloseDelay: delay})
	c, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write([]byte("QUIT\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
	buf := make([]byte, 5)
	if _, err := io.ReadFull(c, buf); err != nil || string(buf) != "+OK\r\n" {
		t.Fatalf("QUIT's reply = %q, %v", buf, err)
	}
	start := time.Now()
	if n, err := c.Read(buf); !errors.Is(err, io.EOF) {
		t.Fatalf("after QUIT's reply: %d bytes, %v; want EOF", n, err)
	}
	if took := time.Since(start); took < delay/2 {
		t.Errorf("the server's close reached the client after %v, want about %v", took, delay)
	}
}

func TestProxyCutAndHold(t *testing.T) {
	Require(t)
	s := StartTB(t, Options{})
	p := StartProxy(t, s.Addr, ProxyOptions{})
	c, err := redis.Dial("tcp", p.Addr, redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Do("PING"); err != nil {
		t.Fatal(err)
	}
	p.CutAndHold()
	if _, err := c.Do("PING"); err == nil {
		t.Fatal("a forwarded connection still answers after CutAndHold")
	}
	h, err := net.Dial("tcp", p.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	select {
	case <-p.Held():
	case <-time.After(10 * time.Second):
		t.Fatal("a new connection was not reported held")
	}
	if _, err := h.Write([]byte("PING\r\n")); err != nil {
		t.Fatal(err)
	}
	_ = h.SetReadDeadline(time.Now().Add(200 * time.Millisecond))
	var ne net.Error
	if _, err := h.Read(make([]byte, 16)); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a held connection: %v, want no answer (a read timeout)", err)
	}
	p.Release()
	_ = h.SetReadDeadline(time.Now().Add(10 * time.Second))
	// Closed with the PING unread: EOF or a reset.
	if n, err := h.Read(make([]byte, 16)); err == nil || errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("a released connection: %d bytes, %v; want it closed", n, err)
	}
}

func TestProxyOnReplyCanSplitAndHoldAReply(t *testing.T) {
	Require(t)
	s := StartTB(t, Options{})
	release := make(chan struct{})
	var held atomic.Bool
	p := StartProxy(t, s.Addr, ProxyOptions{OnReply: func(chunk []byte, forward func([]byte) error) {
		if !bytes.HasPrefix(chunk, []byte("$5\r\nhello")) {
			_ = forward(chunk)
			return
		}
		if forward(chunk[:4]) != nil {
			return
		}
		held.Store(true)
		<-release
		_ = forward(chunk[4:])
	}})
	free := sync.OnceFunc(func() { close(release) })
	t.Cleanup(free) // before the proxy's own Close, which waits for OnReply
	c, err := redis.Dial("tcp", p.Addr, redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := redis.DoWithTimeout(c, 200*time.Millisecond, "ECHO", "hello"); err == nil {
		t.Fatal("ECHO answered in full although the proxy held the reply's tail")
	}
	if !held.Load() {
		t.Fatal("OnReply did not see the reply")
	}
	free()
	// The read that timed out failed the connection: a new one gets the
	// reply whole.
	c2, err := redis.Dial("tcp", p.Addr, redis.DialReadTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer c2.Close()
	if got, err := redis.String(c2.Do("ECHO", "world")); err != nil || got != "world" {
		t.Fatalf("ECHO world through the proxy = %q, %v", got, err)
	}
}
