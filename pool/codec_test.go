package pool

import (
	"bytes"
	"errors"
	"io"
	"math"
	"net"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// scriptedConn is a net.Conn that serves fixed bytes, at most chunk bytes
// per Read, and records what is written to it.
type scriptedConn struct {
	in      []byte
	chunk   int
	out     bytes.Buffer
	reads   int
	writes  int
	closed  bool
	timeout time.Time
}

func (c *scriptedConn) Read(p []byte) (int, error) {
	if len(c.in) == 0 {
		return 0, io.EOF
	}
	c.reads++
	n := min(len(p), len(c.in))
	if c.chunk > 0 {
		n = min(n, c.chunk)
	}
	copy(p, c.in[:n])
	c.in = c.in[n:]
	return n, nil
}

func (c *scriptedConn) Write(p []byte) (int, error) {
	c.writes++
	return c.out.Write(p)
}

func (c *scriptedConn) Close() error                       { c.closed = true; return nil }
func (c *scriptedConn) LocalAddr() net.Addr                { return &net.TCPAddr{} }
func (c *scriptedConn) RemoteAddr() net.Addr               { return &net.TCPAddr{} }
func (c *scriptedConn) SetDeadline(t time.Time) error      { c.timeout = t; return nil }
func (c *scriptedConn) SetReadDeadline(t time.Time) error  { c.timeout = t; return nil }
func (c *scriptedConn) SetWriteDeadline(t time.Time) error { c.timeout = t; return nil }

// stringer is printed by fmt, as redigo does with types it does not know.
type stringer struct{ a, b int }

// argument converts itself, as redis.Argument allows.
type argument struct{ v any }

func (a argument) RedisArg() any { return a.v }

// Commands are encoded byte for byte as redigo encodes them, for every
// kind of argument redigo accepts.
func TestAppendCommandMatchesRedigo(t *testing.T) {
	tests := []struct {
		name string
		args []any
	}{
		{"no arguments", nil},
		{"string and bytes", []any{"key", []byte("value"), "", []byte{}}},
		{"binary", []any{"\r\n\x00\xff", []byte("$3\r\n")}},
		{"integers", []any{0, -1, 42, int64(-9223372036854775808), int64(9223372036854775807)}},
		{"floats", []any{1.5, math.Copysign(0, -1), 1e300, 3.0}}, // a true negative zero
		{"bools and nil", []any{true, false, nil}},
		{"argument", []any{argument{"x"}, argument{7}, argument{argument{"nested"}}}},
		{"other types", []any{int32(5), uint8(200), stringer{1, 2}, []int{1, 2}}},
		{"long", []any{strings.Repeat("v", 100_000)}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			sc := &scriptedConn{}
			rc := redis.NewConn(sc, 0, 0)
			require.NoError(t, rc.Send("CMD", tt.args...))
			require.NoError(t, rc.Flush())
			assert.Equal(t, sc.out.String(), string(appendCommand(nil, "CMD", tt.args)))
		})
	}
}

// parseAll parses replies until the stream ends or fails (at the end of
// the input, or at bytes that are not RESP: the error may differ, where
// the replies stop may not).
func parseAll(receive func() (any, error)) (replies []any) {
	for range 1000 {
		r, err := receive()
		var re redis.Error
		switch {
		case errors.As(err, &re):
			replies = append(replies, re)
		case err != nil:
			return replies
		default:
			replies = append(replies, r)
		}
	}
	return replies
}

// ours parses in as a liveConn does, serving chunk bytes per socket read.
func ours(in []byte, chunk int) []any {
	lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: in, chunk: chunk}}, 0)
	return parseAll(func() (any, error) { return lc.rd.reply(0, nil) })
}

// redigos parses in with redigo's own connection.
func redigos(in []byte) []any {
	rc := redis.NewConn(&scriptedConn{in: in}, 0, 0)
	return parseAll(rc.Receive)
}

// Replies parse to exactly the values redigo returns, however the bytes
// are split between socket reads.
func TestReplyReaderMatchesRedigo(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"status", "+OK\r\n+PONG\r\n+QUEUED\r\n+\r\n"},
		{"error", "-ERR wrong\r\n-MOVED 3999 127.0.0.1:6381\r\n"},
		{"integers", ":0\r\n:-1\r\n:9223372036854775807\r\n:-9223372036854775808\r\n"},
		{"bulk", "$5\r\nhello\r\n$0\r\n\r\n$-1\r\n$4\r\n\r\n\r\n\r\n"},
		{"arrays", "*0\r\n*-1\r\n*3\r\n$1\r\na\r\n:2\r\n*2\r\n+x\r\n-ERR in array\r\n"},
		{"null in array", "*2\r\n$-1\r\n*-1\r\n"},
		{"long line", "+" + strings.Repeat("s", 40_000) + "\r\n:1\r\n"},
		{"large bulk", "$50000\r\n" + strings.Repeat("b", 50_000) + "\r\n+OK\r\n"},
		{"bad terminator", "+OK\n"},
		{"bad type", "?what\r\n"},
		{"bad length", "$x\r\n"},
		{"bulk without CRLF", "$2\r\nabXY"},
		{"cut short", "*2\r\n:1\r\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			want := redigos([]byte(tt.in))
			for _, chunk := range []int{0, 1, 3, 4096} {
				assert.Equal(t, want, ours([]byte(tt.in), chunk), "chunk %d", chunk)
			}
		})
	}
}

// A length redigo would try to allocate: the differential fuzz leaves
// such inputs to the limits test below.
var hugeLength = regexp.MustCompile(`[$*:][-]?[0-9]{7,}`)

// FuzzReplyReader feeds arbitrary bytes to the parser: it never panics,
// and wherever redigo can parse safely it gives redigo's values.
func FuzzReplyReader(f *testing.F) {
	for _, s := range []string{
		"+OK\r\n", "-ERR x\r\n", ":12\r\n", "$3\r\nabc\r\n", "*2\r\n$1\r\na\r\n$-1\r\n",
		"*1\r\n*1\r\n*1\r\n:1\r\n", "$-1\r\n*-1\r\n", "$2\r\na\r\n", "*\r\n", ":-\r\n",
	} {
		f.Add([]byte(s), uint8(0))
	}
	f.Fuzz(func(t *testing.T, in []byte, chunk uint8) {
		got := ours(in, int(chunk))
		if hugeLength.Match(in) || bytes.Count(in, []byte("*")) > maxDepth {
			return
		}
		if want := redigos(in); !reflect.DeepEqual(want, got) {
			t.Fatalf("input %q: redigo %#v, ours %#v", in, want, got)
		}
	})
}

// Lengths, lines and nesting past the limits fail with ErrProtocol
// instead of allocating or recursing without bound.
func TestReplyReaderLimits(t *testing.T) {
	tests := []struct {
		name string
		in   string
	}{
		{"bulk over 512 MiB", "$536870913\r\n"},
		{"length of eleven digits", "$99999999999\r\n"},
		{"array over 2^31", "*2147483649\r\n"},
		{"integer out of range", ":9223372036854775808\r\n"},
		{"integer of twenty digits", ":12345678901234567890\r\n"},
		{"nested too deep", strings.Repeat("*1\r\n", maxDepth+1) + ":1\r\n"},
		{"integer line over 1 MiB", ":" + strings.Repeat("1", maxLine+10) + "\r\n"},
		{"length line over 1 MiB", "$" + strings.Repeat("1", maxLine+10) + "\r\n"},
		{"line of an unknown type over 1 MiB", "~" + strings.Repeat("x", maxLine+10)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: []byte(tt.in)}}, 0)
			_, err := lc.Receive()
			require.ErrorIs(t, err, ErrProtocol)
			assert.ErrorIs(t, lc.Err(), ErrProtocol, "the connection is failed for good")
		})
	}
}

// A pipeline's commands leave in one write per Flush, and replies that
// arrive together are parsed from one read.
func TestLiveConnBatchesSystemCalls(t *testing.T) {
	sc := &scriptedConn{in: []byte(strings.Repeat("+OK\r\n", 300))}
	lc := newLiveConn(&coarseConn{Conn: sc}, 0)
	for range 300 {
		require.NoError(t, lc.Send("SET", "key", "value"))
	}
	assert.Zero(t, sc.writes, "nothing is sent before Flush")
	require.NoError(t, lc.Flush())
	assert.Equal(t, 1, sc.writes)
	for range 300 {
		r, err := lc.Receive()
		require.NoError(t, err)
		require.Equal(t, "OK", r)
	}
	assert.Equal(t, 1, sc.reads)

	// Past maxWriteBuffer, Send writes what it has without waiting.
	sc.writes = 0
	big := strings.Repeat("v", maxWriteBuffer)
	require.NoError(t, lc.Send("SET", "key", big))
	assert.Equal(t, 1, sc.writes)
}

// Do follows redigo: it flushes, reads the pending replies and returns
// its own, or the first server error among them; Do("") returns the
// pending replies.
func TestLiveConnDoDrainsPending(t *testing.T) {
	sc := &scriptedConn{in: []byte("+OK\r\n-ERR first\r\n:3\r\n:1\r\n:2\r\n")}
	lc := newLiveConn(&coarseConn{Conn: sc}, 0)
	require.NoError(t, lc.Send("SET", "a", "1"))
	require.NoError(t, lc.Send("BAD"))
	r, err := lc.Do("INCR", "n")
	assert.Equal(t, redis.Error("ERR first"), err)
	assert.Equal(t, int64(3), r)

	require.NoError(t, lc.Send("INCR", "x"))
	require.NoError(t, lc.Send("INCR", "y"))
	r, err = lc.Do("")
	require.NoError(t, err)
	assert.Equal(t, []any{int64(1), int64(2)}, r)
	r, err = lc.Do("")
	assert.NoError(t, err)
	assert.Nil(t, r, "nothing pending")
}
