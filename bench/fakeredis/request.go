package main

import (
	"bytes"
	"errors"
	"fmt"
)

// Limits on what a client may send; redis-server's defaults are larger,
// but a benchmark never comes near these.
const (
	maxArgs     = 1 << 20  // arguments of one command
	maxBulk     = 64 << 20 // bytes of one argument
	maxInline   = 64 << 10 // bytes of an inline command line
	maxLenDigit = 10       // digits of a length
)

// errProtocol is wrapped by every error of parseCommand: the request
// stream is not RESP, and the connection is closed after an error reply.
var errProtocol = errors.New("fakeredis: protocol error")

// parseCommand parses one command from the front of buf: a RESP array of
// bulk strings, or an inline command (words separated by spaces, ended by
// a newline). It returns the arguments (slices of buf, valid until buf
// changes), appended to args[:0], and the number of bytes used. n is 0
// when buf does not hold a whole command yet; err is set when buf can
// never become one.
func parseCommand(buf []byte, args [][]byte) (out [][]byte, n int, err error) {
	out = args[:0]
	if len(buf) == 0 {
		return out, 0, nil
	}
	if buf[0] != '*' {
		return parseInline(buf, out)
	}
	count, pos, err := parseLength(buf, 1, maxArgs)
	if err != nil || pos == 0 {
		return out, 0, err
	}
	for range count {
		if pos >= len(buf) {
			return out, 0, nil
		}
		if buf[pos] != '$' {
			return out, 0, fmt.Errorf("%w: expected '$', got %q", errProtocol, buf[pos])
		}
		size, next, err := parseLength(buf, pos+1, maxBulk)
		if err != nil || next == 0 {
			return out, 0, err
		}
		if size < 0 {
			return out, 0, fmt.Errorf("%w: null bulk string in a command", errProtocol)
		}
		end := next + size
		if end+2 > len(buf) {
			return out, 0, nil
		}
		if buf[end] != '\r' || buf[end+1] != '\n' {
			return out, 0, fmt.Errorf("%w: argument not ended by CRLF", errProtocol)
		}
		out = append(out, buf[next:end])
		pos = end + 2
	}
	return out, pos, nil
}

// parseLength parses the decimal number that starts at buf[pos] and ends
// with CRLF, up to limit; -1 is accepted. It returns the number and the
// position after the CRLF, or next == 0 when the line is not complete.
func parseLength(buf []byte, pos, limit int) (v, next int, err error) {
	i := bytes.IndexByte(buf[pos:], '\n')
	if i < 0 {
		if len(buf)-pos > maxLenDigit+2 {
			return 0, 0, fmt.Errorf("%w: length line too long", errProtocol)
		}
		return 0, 0, nil
	}
	line := buf[pos : pos+i]
	if len(line) == 0 || line[len(line)-1] != '\r' {
		return 0, 0, fmt.Errorf("%w: length not ended by CRLF", errProtocol)
	}
	line = line[:len(line)-1]
	if string(line) == "-1" {
		return -1, pos + i + 1, nil
	}
	if len(line) == 0 || len(line) > maxLenDigit {
		return 0, 0, fmt.Errorf("%w: bad length %q", errProtocol, line)
	}
	for _, c := range line {
		if c < '0' || c > '9' {
			return 0, 0, fmt.Errorf("%w: bad length %q", errProtocol, line)
		}
		v = v*10 + int(c-'0')
	}
	if v > limit {
		return 0, 0, fmt.Errorf("%w: length %d over the limit of %d", errProtocol, v, limit)
	}
	return v, pos + i + 1, nil
}

// parseInline parses an inline command: space-separated words up to a
// newline (an optional CR before it is dropped). An empty line is a
// command without arguments.
func parseInline(buf []byte, out [][]byte) ([][]byte, int, error) {
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		if len(buf) > maxInline {
			return out, 0, fmt.Errorf("%w: inline command too long", errProtocol)
		}
		return out, 0, nil
	}
	line := bytes.TrimSuffix(buf[:i], []byte("\r"))
	return append(out, bytes.Fields(line)...), i + 1, nil
}
