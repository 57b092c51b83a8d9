package main

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// marker ends every request stream of the wire tests: its reply ("$6\r\nMARKER\r\n") tells
// the reader that every reply before it has arrived.
const (
	markerCmd   = "*2\r\n$4\r\nPING\r\n$6\r\nMARKER\r\n"
	markerReply = "$6\r\nMARKER\r\n"
)

// exchange writes req to addr in pieces of chunk bytes (all at once when
// chunk is 0), reading at the same time, and returns everything read
// until the marker's reply or the end of the connection, and whether the
// server closed the connection.
func exchange(addr string, req []byte, chunk int, withMarker bool) ([]byte, bool, error) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, false, err
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(30 * time.Second))
	if withMarker {
		req = append(bytes.Clone(req), markerCmd...)
	}
	type result struct {
		got    []byte
		closed bool
		err    error
	}
	done := make(chan result, 1)
	go func() {
		var got []byte
		buf := make([]byte, 64<<10)
		for {
			if withMarker && bytes.HasSuffix(got, []byte(markerReply)) {
				done <- result{got, false, nil}
				return
			}
			n, err := c.Read(buf)
			got = append(got, buf[:n]...)
			if err == io.EOF || errors.Is(err, syscall.ECONNRESET) {
				// A reset: the server closed with some of the request unread.
				done <- result{got, true, nil}
				return
			}
			if err != nil {
				done <- result{got, false, err}
				return
			}
		}
	}()
	if chunk <= 0 {
		chunk = len(req)
	}
	for len(req) > 0 {
		n := min(chunk, len(req))
		if _, err := c.Write(req[:n]); err != nil {
			break // the server may close after an error reply
		}
		req = req[n:]
	}
	r := <-done
	return r.got, r.closed, r.err
}

func respCmd(args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	return b.String()
}

// TestReview19SameRepliesAsRedis sends the same request bytes, whole and
// cut into small pieces, to redis-server and to fakeredis: every reply
// must be the same bytes.
func TestReview19SameRepliesAsRedis(t *testing.T) {
	real := redistest.StartTB(t, redistest.Options{})
	fake := startServers(t, 1, false)[0]

	big := strings.Repeat("0123456789", 100_000) // 1 MB: many reads of one argument
	var pipeline strings.Builder
	for i := range 2000 {
		pipeline.WriteString(respCmd("PING", fmt.Sprint("p", i)))
	}
	tests := []struct {
		name string
		req  string
	}{
		{"inline", "PING\r\n"},
		{"inline argument", "PING hello\r\n"},
		{"inline LF only", "PING\nPING x\n"},
		{"inline blank lines", "\r\n\n   \r\nPING\r\n"},
		{"inline double quotes", "PING \"hello world\"\r\n"},
		{"inline single quotes", "PING 'a b'\r\n"},
		{"inline escapes", "PING \"a\\x41\\n\\\"\"\r\n"},
		{"inline single quote escape", "PING 'it\\'s'\r\n"},
		{"inline empty quotes", "PING \"\"\r\n"},
		{"inline SET GET", "SET k " + testValue + "\r\nGET k\r\n"},
		{"RESP PING", respCmd("PING")},
		{"RESP echo", respCmd("PING", "a\r\nb")},
		{"RESP empty argument", respCmd("PING", "")},
		{"SET GET MGET", respCmd("SET", "k", testValue) + respCmd("GET", "k") + respCmd("MGET", "k", "k")},
		{"empty arrays", "*0\r\n*-1\r\n" + respCmd("PING")},
		{"PING with two arguments", respCmd("PING", "a", "b")},
		{"GET without key", respCmd("GET")},
		{"mixed inline and RESP", "PING a\r\n" + respCmd("PING", "b") + "PING c\r\n"},
		{"pipeline of 2000", pipeline.String()},
		{"large argument", respCmd("PING", big)},
		{"large argument after a pipeline", pipeline.String() + respCmd("PING", big) + respCmd("PING", "after")},
	}
	for _, tc := range tests {
		for _, chunk := range []int{0, 1, 7, 4093} {
			if chunk > 0 && chunk < 100 && len(tc.req) > 100_000 {
				continue // a byte at a time through a megabyte takes too long
			}
			t.Run(fmt.Sprintf("%s/chunk %d", tc.name, chunk), func(t *testing.T) {
				want, _, err := exchange(real.Addr, []byte(tc.req), chunk, true)
				if err != nil {
					t.Fatalf("redis-server: %v after %d bytes", err, len(want))
				}
				got, _, err := exchange(fake, []byte(tc.req), chunk, true)
				if err != nil {
					t.Fatalf("fakeredis: %v after %d bytes", err, len(got))
				}
				if !bytes.Equal(got, want) {
					t.Errorf("fakeredis replied %d bytes %q, redis-server %d bytes %q", len(got), clip(got), len(want), clip(want))
				}
			})
		}
	}
}

// TestReview19MalformedRequestsAsRedis checks that a request redis-server
// refuses with an error reply and a closed connection gets the same from
// fakeredis, after the replies to the commands before it.
func TestReview19MalformedRequestsAsRedis(t *testing.T) {
	real := redistest.StartTB(t, redistest.Options{})
	fake := startServers(t, 1, false)[0]
	tests := []struct {
		name string
		req  string
	}{
		{"bulk length with a leading zero", "*1\r\n$04\r\nPING\r\n"},
		{"count with a leading zero", "*01\r\n$4\r\nPING\r\n"},
		{"negative bulk length", "*1\r\n$-2\r\n"},
		{"null bulk", "*1\r\n$-1\r\n"},
		{"not a bulk", "*1\r\n:4\r\n"},
		{"bad count", "*x\r\n"},
		{"unbalanced double quote", "PING \"abc\r\n"},
		{"unbalanced single quote", "PING 'abc\r\n"},
		{"closing quote not followed by a space", "PING \"a\"b\r\n"},
	}
	for _, tc := range tests {
		for _, chunk := range []int{0, 1} {
			t.Run(fmt.Sprintf("%s/chunk %d", tc.name, chunk), func(t *testing.T) {
				req := respCmd("PING", "before") + tc.req
				want, wantClosed, err := exchange(real.Addr, []byte(req), chunk, false)
				if err != nil {
					t.Fatalf("redis-server: %v after %q", err, want)
				}
				got, gotClosed, err := exchange(fake, []byte(req), chunk, false)
				if err != nil {
					t.Fatalf("fakeredis: %v after %q", err, got)
				}
				if !wantClosed || !bytes.HasPrefix(want, []byte("$6\r\nbefore\r\n-ERR Protocol error")) {
					t.Fatalf("redis-server: %q, closed %v; the test expects an error and a close", want, wantClosed)
				}
				if !gotClosed || !bytes.HasPrefix(got, []byte("$6\r\nbefore\r\n-ERR ")) {
					t.Errorf("fakeredis: %q, closed %v; redis-server: %q, closed", got, gotClosed, want)
				}
			})
		}
	}
}

func clip(b []byte) []byte {
	if len(b) > 200 {
		return append(b[:100:100], "..."...)
	}
	return b
}

// TestReview19WholePipelineWrittenBeforeReading writes a pipeline far
// larger than the socket buffers before reading any reply, as a client
// that flushes a batch and then reads does: redis-server keeps reading
// while its replies wait, and so must fakeredis, or the two deadlock.
func TestReview19WholePipelineWrittenBeforeReading(t *testing.T) {
	real := redistest.StartTB(t, redistest.Options{})
	fake := startServers(t, 1, false)[0]
	const n = 400_000
	one := respCmd("GET", "some:key:of:a:fair:length")
	req := []byte(strings.Repeat(one, n))
	for _, target := range []struct{ name, addr string }{{"redis-server", real.Addr}, {"fakeredis", fake}} {
		t.Run(target.name, func(t *testing.T) {
			c, err := net.Dial("tcp", target.addr)
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			c.SetDeadline(time.Now().Add(60 * time.Second))
			if _, err := c.Write(req); err != nil {
				t.Fatalf("writing %d bytes: %v", len(req), err)
			}
			// redis-server answers each GET with a nil ("$-1\r\n"),
			// fakeredis with its value: one line, or two.
			lines := n
			if target.name == "fakeredis" {
				lines = 2 * n
			}
			var got int64
			buf := make([]byte, 256<<10)
			for seen := 0; seen < lines; {
				m, err := c.Read(buf)
				if err != nil {
					t.Fatalf("after %d bytes of replies: %v", got, err)
				}
				got += int64(m)
				seen += bytes.Count(buf[:m], []byte("\n"))
			}
		})
	}
}
