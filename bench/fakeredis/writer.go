package main

import (
	"net"
	"sync"
	"syscall"
)

func newReplyWriter(c net.Conn) *replyWriter { return &replyWriter{c: c, rc: rawConn(c)} }

// replyWriter writes a connection's replies in order without ever
// keeping the connection from being read, as redis-server does: a client
// may write a whole batch before it reads the first reply, and once the
// socket buffers are full a server that waits for its write to finish
// stops reading, so that the client's write and the server's wait on each
// other for ever. A write goes straight to the socket while it takes the
// whole reply; the rest, and every reply after it until all is written,
// is written by a goroutine of its own while the connection is read on.
type replyWriter struct {
	c  net.Conn
	rc syscall.RawConn // c's, for writes that do not wait; nil without

	mu      sync.Mutex
	pending []byte        // replies the draining goroutine is to write
	drain   chan struct{} // open while a goroutine drains pending
	err     error         // the first write error
}

// write queues b (which the caller may reuse once write returns) behind
// the replies not written yet, writing what it can at once. It returns
// the first error of a write on the connection.
func (w *replyWriter) write(b []byte) error {
	w.mu.Lock()
	if w.err != nil {
		err := w.err
		w.mu.Unlock()
		return err
	}
	if w.drain != nil {
		w.pending = append(w.pending, b...)
		w.mu.Unlock()
		return nil
	}
	w.mu.Unlock()
	n, err := tryWrite(w.c, w.rc, b)
	if err != nil {
		w.mu.Lock()
		w.err = err
		w.mu.Unlock()
		return err
	}
	if n == len(b) {
		return nil
	}
	w.mu.Lock()
	w.pending = append(w.pending[:0], b[n:]...)
	w.drain = make(chan struct{})
	w.mu.Unlock()
	go w.drainPending()
	return nil
}

// drainPending writes pending until it is empty or a write fails.
func (w *replyWriter) drainPending() {
	var buf []byte
	for {
		w.mu.Lock()
		if len(w.pending) == 0 || w.err != nil {
			close(w.drain)
			w.drain = nil
			w.mu.Unlock()
			return
		}
		buf, w.pending = w.pending, buf[:0]
		w.mu.Unlock()
		if _, err := w.c.Write(buf); err != nil {
			w.mu.Lock()
			w.err = err
			w.mu.Unlock()
		}
	}
}

// flush waits until every reply is written or a write failed (closing the
// connection ends a write that waits).
func (w *replyWriter) flush() {
	w.mu.Lock()
	drain := w.drain
	w.mu.Unlock()
	if drain != nil {
		<-drain
	}
}
