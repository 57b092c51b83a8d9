package pool

import (
	"bytes"
	"fmt"
	"io"
	"slices"

	"github.com/gomodule/redigo/redis"
)

// Limits that keep a garbled or hostile reply stream from exhausting
// memory or the stack; real Redis replies stay far below them.
const (
	maxLine       = 1 << 20   // an integer or length line
	maxTextLine   = maxBulk   // a status or error line (see replyReader.line)
	maxBulk       = 512 << 20 // Redis's own proto-max-bulk-len default
	maxArrayLen   = 1<<31 - 1 // elements of one array (an int on 32-bit platforms too)
	maxArrayAlloc = 1 << 16   // elements allocated before they arrive
	// maxDepth bounds nested arrays. A Lua script's nested tables come
	// back as nested arrays up to the depth of the server's Lua stack
	// (about 8000 levels in Redis 7): valid replies, which must not
	// fail the connection (and count against the node's health).
	maxDepth = 1 << 14
)

// replyReader parses RESP2 replies from a connection into the values
// redigo returns: "OK" and other status replies as string, errors as
// redis.Error, integers as int64, bulk strings as []byte, arrays as
// []any, nulls as nil. It reads up to readBufferSize bytes per system
// call and belongs to one goroutine at a time.
type replyReader struct {
	nc   *coarseConn
	buf  []byte // unread bytes are buf[r:w]
	r, w int
	// batch is the arena of the replies of one pipeline (batchArena).
	batch arena
}

// batchArena returns the arena of the next reply when more replies are
// pending after it: the small values of a pipeline's replies are then
// cut from shared chunks, as an array's are (arena.go), one allocation
// for a batch's GETs instead of one each. The last reply pending lets
// the chunk go, so that an idle connection holds none.
func (rd *replyReader) batchArena(pending int64) *arena {
	if pending <= 1 {
		rd.batch.chunk, rd.batch.boxes = nil, nil
		return nil
	}
	rd.batch.left = int(min(pending, arenaChunkMax))
	return &rd.batch
}

var (
	okReply   any = "OK"
	pongReply any = "PONG"
)

// reply reads one whole reply. ar, when not nil, is the arena of the
// array being read: its small bulk strings are cut from it.
func (rd *replyReader) reply(depth int, ar *arena) (any, error) {
	line, err := rd.line()
	if err != nil {
		return nil, err
	}
	if len(line) == 0 {
		return nil, protocolError("empty reply line")
	}
	switch line[0] {
	case '+':
		switch string(line[1:]) {
		case "OK":
			return okReply, nil
		case "PONG":
			return pongReply, nil
		}
		return string(line[1:]), nil
	case '-':
		return redis.Error(line[1:]), nil
	case ':':
		return parseInt(line[1:])
	case '$':
		n, err := parseLen(line[1:], maxBulk)
		if n < 0 || err != nil {
			return nil, err
		}
		if n > bulkUpfront {
			return rd.bigBulk(n)
		}
		p, err := rd.bulk(ar.take(n))
		if err != nil {
			return nil, err
		}
		return ar.box(p), nil
	case '*':
		n, err := parseLen(line[1:], maxArrayLen)
		if n < 0 || err != nil {
			return nil, err
		}
		if depth >= maxDepth {
			return nil, protocolError("arrays nested too deep")
		}
		out := make([]any, 0, min(n, maxArrayAlloc))
		if ar == nil {
			ar = &arena{}
		}
		for i := range n {
			ar.left = n - i
			v, err := rd.reply(depth+1, ar)
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, protocolError(fmt.Sprintf("unexpected reply type %q", line[0]))
}

// line returns the next line without its CRLF. It stays valid until the
// next read.
func (rd *replyReader) line() ([]byte, error) {
	scanned := 0 // bytes already searched for '\n'
	for {
		if i := bytes.IndexByte(rd.buf[rd.r+scanned:rd.w], '\n'); i >= 0 {
			end := rd.r + scanned + i
			line := rd.buf[rd.r:end]
			rd.r = end + 1
			if len(line) == 0 || line[len(line)-1] != '\r' {
				return nil, protocolError("line not ended by CRLF")
			}
			return line[:len(line)-1], nil
		}
		scanned = rd.w - rd.r
		if scanned >= maxLine && (scanned >= maxTextLine || !textLine(rd.buf[rd.r])) {
			return nil, protocolError("reply line too long")
		}
		if err := rd.fill(); err != nil {
			return nil, err
		}
	}
}

// textLine reports whether a line beginning with b is a status or an
// error reply, which may be as long as the server makes it: a script's
// redis.status_reply or redis.error_reply sends a string of any length as
// one line. Other lines (lengths, integers) are short, and a long one is
// a garbled stream. Either way the buffer grows only with what arrives.
func textLine(b byte) bool { return b == '+' || b == '-' }

// bulk reads a bulk string and its CRLF into p, which has its length.
func (rd *replyReader) bulk(p []byte) ([]byte, error) {
	n := len(p)
	got := copy(p, rd.buf[rd.r:rd.w])
	rd.r += got
	if got < n {
		// The rest goes straight into p; a large value is not copied twice.
		if _, err := io.ReadFull(readerFunc(rd.nc.armedRead), p[got:]); err != nil {
			return nil, err
		}
	}
	if err := rd.endOfBulk(); err != nil {
		return nil, err
	}
	return p, nil
}

// bulkUpfront is the most that a bulk string's length line makes the
// reader allocate before the bytes arrive. A longer value's buffer grows
// as they do, at most doubling each time, so that a garbled or hostile
// length line (up to maxBulk, 512 MiB) costs no more than this until the
// bytes are there; values up to it are read as before.
const bulkUpfront = 1 << 20

// bigBulk reads a bulk string of n bytes, n over bulkUpfront, and its
// CRLF.
func (rd *replyReader) bigBulk(n int) ([]byte, error) {
	p := make([]byte, bulkUpfront)
	got := 0
	for got < n {
		if got == len(p) {
			grow := min(len(p), n-len(p))
			p = slices.Grow(p, grow)[:len(p)+grow]
		}
		if rd.r < rd.w {
			k := copy(p[got:], rd.buf[rd.r:rd.w])
			rd.r += k
			got += k
			continue
		}
		// The rest goes straight into p, up to its current size.
		k, err := io.ReadFull(readerFunc(rd.nc.armedRead), p[got:])
		got += k
		if err != nil {
			return nil, err
		}
	}
	if err := rd.endOfBulk(); err != nil {
		return nil, err
	}
	return p, nil
}

// endOfBulk reads the CRLF that ends a bulk string.
func (rd *replyReader) endOfBulk() error {
	for rd.w-rd.r < 2 {
		if err := rd.fill(); err != nil {
			return err
		}
	}
	if rd.buf[rd.r] != '\r' || rd.buf[rd.r+1] != '\n' {
		return protocolError("bulk string not ended by CRLF")
	}
	rd.r += 2
	return nil
}

// fill reads more bytes from the socket after the unread ones, moving
// them to the front of the buffer or growing it when there is no room.
func (rd *replyReader) fill() error {
	if rd.buf == nil {
		rd.takeReadBuffer()
	}
	if rd.r > 0 {
		rd.w = copy(rd.buf, rd.buf[rd.r:rd.w])
		rd.r = 0
	}
	if rd.w == len(rd.buf) {
		rd.buf = append(rd.buf, make([]byte, len(rd.buf))...)
	}
	n, err := rd.nc.armedRead(rd.buf[rd.w:])
	rd.w += n
	if n > 0 {
		return nil
	}
	if err == nil {
		err = io.ErrNoProgress
	}
	return err
}

// tlsAlert waits for the first two bytes of a plain-text connection's
// first reply and returns errTLSAlert when they begin a TLS alert record
// (content type 21, protocol version 3.x), which no RESP reply does: the
// answer of a TLS server to a plain-text command, which the parser would
// take for a bad line, or wait on for a line end that never comes. Every
// RESP reply is longer than two bytes, so the wait is never for bytes
// that a valid reply does not bring.
func (rd *replyReader) tlsAlert() error {
	for rd.w-rd.r < 2 {
		if err := rd.fill(); err != nil {
			return err
		}
	}
	if rd.buf[rd.r] == 0x15 && rd.buf[rd.r+1] == 0x03 {
		return errTLSAlert
	}
	return nil
}

// errTLSAlert is the failure of a plain-text connection whose server
// answered with a TLS alert record: it matches ErrClosedBeforeReply, for
// the hint, and ErrProtocol.
var errTLSAlert error = tlsAlertError{}

type tlsAlertError struct{}

func (tlsAlertError) Error() string {
	return "shardis: protocol error: the server answered with a TLS alert record, as a port that expects TLS does to a plain-text client (set Options.TLSConfig)"
}

func (tlsAlertError) Unwrap() []error { return []error{ErrClosedBeforeReply, ErrProtocol} }

// buffered reports whether bytes are waiting to be parsed.
func (rd *replyReader) buffered() bool { return rd.r < rd.w }

// shrink drops a buffer that a large reply grew, once it is empty.
func (rd *replyReader) shrink() {
	if rd.r == rd.w {
		rd.r, rd.w = 0, 0
		if len(rd.buf) > readBufferSize {
			rd.buf = nil
		}
	}
}

// readerFunc adapts a read function to io.Reader.
type readerFunc func([]byte) (int, error)

func (f readerFunc) Read(p []byte) (int, error) { return f(p) }

// parseLen parses a bulk string or array length: -1 (null) or a decimal
// number up to limit.
func parseLen(p []byte, limit int) (int, error) {
	if len(p) == 2 && p[0] == '-' && p[1] == '1' {
		return -1, nil
	}
	if len(p) == 0 || len(p) > 10 {
		return -1, protocolError(fmt.Sprintf("bad length %q", p))
	}
	var n int64 // ten digits overflow a 32-bit int
	for _, b := range p {
		if b < '0' || b > '9' {
			return -1, protocolError(fmt.Sprintf("bad length %q", p))
		}
		n = n*10 + int64(b-'0')
	}
	if n > int64(limit) {
		return -1, protocolError(fmt.Sprintf("length %d over the limit of %d", n, limit))
	}
	return int(n), nil
}

// parseInt parses an integer reply: a signed 64-bit decimal.
func parseInt(p []byte) (any, error) {
	digits := p
	neg := len(digits) > 0 && digits[0] == '-'
	if neg {
		digits = digits[1:]
	}
	if len(digits) == 0 || len(digits) > 19 {
		return nil, protocolError(fmt.Sprintf("bad integer %q", p))
	}
	var n uint64
	for _, b := range digits {
		if b < '0' || b > '9' {
			return nil, protocolError(fmt.Sprintf("bad integer %q", p))
		}
		n = n*10 + uint64(b-'0')
	}
	switch {
	case neg && n <= 1<<63:
		return -int64(n-1) - 1, nil
	case !neg && n < 1<<63:
		return int64(n), nil
	}
	return nil, protocolError(fmt.Sprintf("integer %q out of range", p))
}

// protocolError reports a reply stream that is not valid RESP; it
// matches ErrProtocol.
func protocolError(what string) error {
	return fmt.Errorf("%w: %s", ErrProtocol, what)
}
