package pool

import (
	"bytes"
	"fmt"
	"strconv"

	"github.com/gomodule/redigo/redis"
)

// appendCommand appends cmd and its arguments to buf as a RESP array of
// bulk strings, converting each argument exactly as redigo does: strings
// and byte slices as they are, integers and floats in decimal, bools as
// "1" and "0", nil as "", a redis.Argument by its RedisArg, anything
// else as fmt.Print prints it.
func appendCommand(buf []byte, cmd string, args []any) []byte {
	buf = appendLen(buf, '*', 1+len(args))
	buf = appendBulk(buf, cmd)
	for _, a := range args {
		buf = appendArg(buf, a, true)
	}
	return buf
}

// appendLen appends a RESP length line: prefix, n, CRLF.
func appendLen(buf []byte, prefix byte, n int) []byte {
	buf = append(buf, prefix)
	buf = strconv.AppendInt(buf, int64(n), 10)
	return append(buf, '\r', '\n')
}

// appendBulk appends s as a RESP bulk string.
func appendBulk[T string | []byte](buf []byte, s T) []byte {
	buf = appendLen(buf, '$', len(s))
	buf = append(buf, s...)
	return append(buf, '\r', '\n')
}

func appendArg(buf []byte, arg any, argumentOK bool) []byte {
	var num [40]byte // a number's digits
	switch a := arg.(type) {
	case string:
		return appendBulk(buf, a)
	case []byte:
		return appendBulk(buf, a)
	case int:
		return appendBulk(buf, strconv.AppendInt(num[:0], int64(a), 10))
	case int64:
		return appendBulk(buf, strconv.AppendInt(num[:0], a, 10))
	case float64:
		return appendBulk(buf, strconv.AppendFloat(num[:0], a, 'g', -1, 64))
	case bool:
		if a {
			return appendBulk(buf, "1")
		}
		return appendBulk(buf, "0")
	case nil:
		return appendBulk(buf, "")
	case redis.Argument:
		if argumentOK {
			return appendArg(buf, a.RedisArg(), false)
		}
	}
	var b bytes.Buffer
	fmt.Fprint(&b, arg)
	return appendBulk(buf, b.Bytes())
}
