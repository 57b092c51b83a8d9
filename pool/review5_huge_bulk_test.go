package pool

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestReview5HugeBulkLengthAllocatesWhatArrives: a bulk string's length
// line of 14 bytes ("$536870912\r\n", the 512 MiB limit) made the reader
// allocate the whole 512 MiB at once, before a byte of it arrived. A
// garbled reply stream or a hostile endpoint costs every connection that
// much (64 idle connections: 32 GiB) for a dozen bytes each. What the
// reader allocates must follow what arrives; a stream that ends early
// fails as before.
func TestReview5HugeBulkLengthAllocatesWhatArrives(t *testing.T) {
	lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: []byte("$536870912\r\nonly a few bytes")}}, 0)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	_, err := lc.Receive()
	runtime.ReadMemStats(&after)
	if !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		t.Errorf("Receive = %v, want the end of the stream", err)
	}
	if got := after.TotalAlloc - before.TotalAlloc; got > 64<<20 {
		t.Errorf("a 512 MiB length line followed by 15 bytes allocated %d MiB", got>>20)
	}
}

// TestReview5LargeBulkValuesRoundTrip: values around and above the size
// read in pieces come back whole, from a byte-level stream delivered a few
// KiB per read and from a real server.
func TestReview5LargeBulkValuesRoundTrip(t *testing.T) {
	sizes := []int{1<<20 - 1, 1 << 20, 1<<20 + 1, 3<<20 + 12345, 9 << 20}
	value := func(n int) []byte {
		b := bytes.Repeat([]byte("0123456789abcdefghijklmnopqrstuvwxyz"), n/36+1)
		return b[:n]
	}
	for _, n := range sizes {
		v := value(n)
		in := fmt.Appendf(nil, "*2\r\n$%d\r\n%s\r\n:7\r\n", n, v)
		lc := newLiveConn(&coarseConn{Conn: &scriptedConn{in: in, chunk: 5000}}, 0)
		reply, err := lc.Receive()
		if err != nil {
			t.Fatalf("%d bytes: %v", n, err)
		}
		arr, ok := reply.([]any)
		if !ok || len(arr) != 2 {
			t.Fatalf("%d bytes: reply %T", n, reply)
		}
		if got, _ := arr[0].([]byte); !bytes.Equal(got, v) {
			t.Errorf("%d bytes: value of %d bytes differs", n, len(got))
		}
		if arr[1] != int64(7) {
			t.Errorf("%d bytes: next element = %v, want 7", n, arr[1])
		}
	}

	srv := plainServer(t)
	set := newTestSet(t, Options{})
	c, err := set.Get(context.Background(), srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, n := range sizes {
		v := value(n)
		key := "review5:big:" + strings.Repeat("x", n%7)
		if _, err := c.Do("SET", key, v); err != nil {
			t.Fatal(err)
		}
		got, err := redis.Bytes(c.Do("GET", key))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, v) {
			t.Errorf("GET of %d bytes: got %d bytes, not the value", n, len(got))
		}
	}
}
