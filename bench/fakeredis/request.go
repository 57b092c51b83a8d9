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
			return out, 0, fmt.Errorf("%w: negative bulk length in a command", errProtocol)
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
// with CRLF, up to limit, as redis-server reads lengths: no sign but '-',
// no leading zero, no other byte. A negative number is returned as is (a
// count below 1 is an empty command, a negative bulk length an error). It
// returns the number and the position after the CRLF, or next == 0 when
// the line is not complete.
func parseLength(buf []byte, pos, limit int) (v, next int, err error) {
	i := bytes.IndexByte(buf[pos:], '\n')
	if i < 0 {
		if len(buf)-pos > maxLenDigit+3 {
			return 0, 0, fmt.Errorf("%w: length line too long", errProtocol)
		}
		return 0, 0, nil
	}
	line := buf[pos : pos+i]
	if len(line) == 0 || line[len(line)-1] != '\r' {
		return 0, 0, fmt.Errorf("%w: length not ended by CRLF", errProtocol)
	}
	line = line[:len(line)-1]
	digits, neg := bytes.CutPrefix(line, []byte("-"))
	// "0" alone, else a first digit of 1-9 (redis-server refuses "01"
	// and "-0": a client that sends them has a bug to show).
	if len(digits) == 0 || len(digits) > maxLenDigit || (digits[0] == '0' && (len(digits) > 1 || neg)) {
		return 0, 0, fmt.Errorf("%w: bad length %q", errProtocol, line)
	}
	for _, c := range digits {
		if c < '0' || c > '9' {
			return 0, 0, fmt.Errorf("%w: bad length %q", errProtocol, line)
		}
		v = v*10 + int(c-'0')
	}
	if v > limit {
		return 0, 0, fmt.Errorf("%w: length %s over the limit of %d", errProtocol, line, limit)
	}
	if neg {
		v = -v
	}
	return v, pos + i + 1, nil
}

// parseInline parses an inline command: a line up to a newline (an
// optional CR before it is dropped), split into words as redis-server
// splits it: words are separated by spaces, tabs, CRs and LFs; a word may
// be quoted, in double quotes with the escapes \n, \r, \t, \b, \a and \xHH
// (any other escaped byte stands for itself), or in single quotes where
// only \' is an escape; a closing quote must end the word, and a quote
// left open is a protocol error. A NUL byte ends the line, as the C string
// redis-server splits. A blank line is a command without arguments.
func parseInline(buf []byte, out [][]byte) ([][]byte, int, error) {
	i := bytes.IndexByte(buf, '\n')
	if i < 0 {
		if len(buf) > maxInline {
			return out, 0, fmt.Errorf("%w: inline command too long", errProtocol)
		}
		return out, 0, nil
	}
	line := bytes.TrimSuffix(buf[:i], []byte("\r"))
	if nul := bytes.IndexByte(line, 0); nul >= 0 {
		line = line[:nul]
	}
	out, err := splitArgs(line, out)
	if err != nil {
		return out[:0], 0, err
	}
	return out, i + 1, nil
}

// isSpace is C's isspace in the C locale.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// splitArgs splits line as redis-server's sdssplitargs does (see
// parseInline), appending the words to out.
func splitArgs(line []byte, out [][]byte) ([][]byte, error) {
	p := 0
	for {
		for p < len(line) && isSpace(line[p]) {
			p++
		}
		if p == len(line) {
			return out, nil
		}
		word := []byte{}
		inDouble, inSingle := false, false
		for done := false; !done; {
			switch {
			case inDouble:
				switch {
				case p == len(line):
					return out, fmt.Errorf("%w: unbalanced quotes in request", errProtocol)
				case line[p] == '\\' && p+3 < len(line) && line[p+1] == 'x' && isHex(line[p+2]) && isHex(line[p+3]):
					word = append(word, hexVal(line[p+2])<<4|hexVal(line[p+3]))
					p += 3
				case line[p] == '\\' && p+1 < len(line):
					p++
					c := line[p]
					switch c {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'b':
						c = '\b'
					case 'a':
						c = '\a'
					}
					word = append(word, c)
				case line[p] == '"':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return out, fmt.Errorf("%w: unbalanced quotes in request", errProtocol)
					}
					done = true
				default:
					word = append(word, line[p])
				}
			case inSingle:
				switch {
				case p == len(line):
					return out, fmt.Errorf("%w: unbalanced quotes in request", errProtocol)
				case line[p] == '\\' && p+1 < len(line) && line[p+1] == '\'':
					p++
					word = append(word, '\'')
				case line[p] == '\'':
					if p+1 < len(line) && !isSpace(line[p+1]) {
						return out, fmt.Errorf("%w: unbalanced quotes in request", errProtocol)
					}
					done = true
				default:
					word = append(word, line[p])
				}
			default:
				switch {
				case p == len(line), line[p] == ' ', line[p] == '\n', line[p] == '\r', line[p] == '\t':
					done = true
				case line[p] == '"':
					inDouble = true
				case line[p] == '\'':
					inSingle = true
				default:
					word = append(word, line[p])
				}
			}
			if p < len(line) {
				p++
			}
		}
		out = append(out, word)
	}
}

func isHex(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F'
}

func hexVal(c byte) byte {
	switch {
	case c >= 'a':
		return c - 'a' + 10
	case c >= 'A':
		return c - 'A' + 10
	}
	return c - '0'
}
