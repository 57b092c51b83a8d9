package redistest

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// maxBulk bounds the size of one bulk string the harness accepts.
const maxBulk = 64 << 20

// maxDepth bounds how deeply arrays may nest in a reply.
const maxDepth = 16

// errProtocol marks a reply that is not valid RESP2.
var errProtocol = errors.New("shardis: malformed RESP reply")

// respConn is a minimal RESP2 connection the harness uses for its own
// checks (PING, INFO, CLUSTER ...), so that it depends on no client library.
type respConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialResp connects to addr (over TLS when cfg is not nil) and logs in
// when auth is true. The context bounds the dial and the login.
func dialResp(ctx context.Context, addr string, cfg *tls.Config, user, pass string, auth bool) (*respConn, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("shardis: dial %s: %w", addr, err)
	}
	if cfg != nil {
		tc := tls.Client(conn, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			conn.Close()
			return nil, fmt.Errorf("shardis: TLS handshake with %s: %w", addr, err)
		}
		conn = tc
	}
	c := &respConn{conn: conn, r: bufio.NewReader(conn)}
	if auth {
		args := []string{"AUTH", pass}
		if user != "" {
			args = []string{"AUTH", user, pass}
		}
		if _, err := c.do(ctx, args...); err != nil {
			c.close()
			return nil, fmt.Errorf("shardis: log in to %s: %w", addr, err)
		}
	}
	return c, nil
}

func (c *respConn) close() error { return c.conn.Close() }

// do sends one command and reads its reply. An error reply is returned as
// a *ReplyError; I/O errors (including the context's deadline) as they are.
func (c *respConn) do(ctx context.Context, args ...string) (any, error) {
	deadline, ok := ctx.Deadline()
	if !ok {
		deadline = time.Now().Add(10 * time.Second)
	}
	if err := c.conn.SetDeadline(deadline); err != nil {
		return nil, err
	}
	stop := context.AfterFunc(ctx, func() { c.conn.SetDeadline(time.Unix(1, 0)) })
	defer stop()
	if _, err := c.conn.Write(encodeCommand(args)); err != nil {
		return nil, ctxErr(ctx, err)
	}
	v, err := readReply(c.r, 0)
	if err != nil {
		return nil, ctxErr(ctx, err)
	}
	if e, ok := v.(*ReplyError); ok {
		return nil, e
	}
	return v, nil
}

// ctxErr prefers the context's error, which says why the I/O was cut.
func ctxErr(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%w (%w)", ctx.Err(), err)
	}
	return err
}

func encodeCommand(args []string) []byte {
	var b strings.Builder
	b.WriteString("*" + strconv.Itoa(len(args)) + "\r\n")
	for _, a := range args {
		b.WriteString("$" + strconv.Itoa(len(a)) + "\r\n" + a + "\r\n")
	}
	return []byte(b.String())
}

// readReply reads one RESP2 value: string (simple or bulk), int64, nil,
// []any, or *ReplyError for an error reply (returned as a value, not as
// the error, so that errors nested in arrays survive).
func readReply(r *bufio.Reader, depth int) (any, error) {
	if depth > maxDepth {
		return nil, fmt.Errorf("%w: arrays nested deeper than %d", errProtocol, maxDepth)
	}
	line, err := r.ReadString('\n')
	if err != nil {
		if errors.Is(err, io.EOF) && line != "" {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	if len(line) < 3 || line[len(line)-2] != '\r' {
		return nil, fmt.Errorf("%w: line %q", errProtocol, line)
	}
	kind, body := line[0], line[1:len(line)-2]
	switch kind {
	case '+':
		return body, nil
	case '-':
		return &ReplyError{Message: body}, nil
	case ':':
		n, err := strconv.ParseInt(body, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%w: integer %q", errProtocol, body)
		}
		return n, nil
	case '$':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > maxBulk {
			return nil, fmt.Errorf("%w: bulk length %q", errProtocol, body)
		}
		if n == -1 {
			return nil, nil
		}
		buf := make([]byte, n+2)
		if _, err := io.ReadFull(r, buf); err != nil {
			return nil, noEOF(err)
		}
		if buf[n] != '\r' || buf[n+1] != '\n' {
			return nil, fmt.Errorf("%w: bulk string not ended by CRLF", errProtocol)
		}
		return string(buf[:n]), nil
	case '*':
		n, err := strconv.Atoi(body)
		if err != nil || n < -1 || n > 1<<20 {
			return nil, fmt.Errorf("%w: array length %q", errProtocol, body)
		}
		if n == -1 {
			return nil, nil
		}
		out := make([]any, 0, min(n, 1024))
		for range n {
			v, err := readReply(r, depth+1)
			if err != nil {
				return nil, noEOF(err)
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: unknown type byte %q", errProtocol, kind)
}

func noEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// formatReply renders a reply like redis-cli does when its output is not a
// terminal: one line per string or integer, nil as an empty line, nested
// arrays flattened.
func formatReply(v any) string {
	var lines []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case nil:
			lines = append(lines, "")
		case string:
			lines = append(lines, x)
		case int64:
			lines = append(lines, strconv.FormatInt(x, 10))
		case *ReplyError:
			lines = append(lines, x.Message)
		case []any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	return strings.Join(lines, "\n")
}
