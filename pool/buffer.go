package pool

import "sync"

// redigo reads and writes through 4 KiB buffers, so a pipeline of a few
// hundred commands costs a system call per 4 KiB on each side of the
// socket, and the server wakes up for each piece. A managed coarseConn
// keeps larger buffers of its own under redigo's: writes collect until
// redigo flushes (liveConn.Flush) or until a reply is awaited, and each
// read from the socket takes up to readBufferSize bytes.
const (
	readBufferSize = 16 << 10
	maxWriteBuffer = 64 << 10  // written out at once beyond this
	keepWriteCap   = 256 << 10 // a larger buffer is dropped after use
)

// buffers are a managed connection's own buffers. The write buffer is
// shared by the goroutine that sends and the one that reads (which sends
// what is pending before it waits for a reply), so it has a lock; the read
// buffer belongs to the reading goroutine.
type buffers struct {
	wmu  sync.Mutex
	wbuf []byte
	rbuf []byte // unread bytes are rbuf[rpos:]
	rpos int
}

func (c *coarseConn) Read(p []byte) (int, error) {
	if !c.managed {
		return c.Conn.Read(p)
	}
	if c.rpos < len(c.rbuf) {
		n := copy(p, c.rbuf[c.rpos:])
		c.rpos += n
		return n, nil
	}
	// Nothing buffered: the reply we wait for needs the request sent.
	if err := c.flushWrites(); err != nil {
		return 0, err
	}
	if len(p) >= readBufferSize {
		return c.armedRead(p)
	}
	if c.rbuf == nil {
		c.rbuf = make([]byte, readBufferSize)
	}
	n, err := c.armedRead(c.rbuf[:readBufferSize])
	c.rbuf, c.rpos = c.rbuf[:n], 0
	m := copy(p, c.rbuf)
	c.rpos = m
	return m, err
}

func (c *coarseConn) Write(p []byte) (int, error) {
	if !c.managed {
		return c.Conn.Write(p)
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	c.wbuf = append(c.wbuf, p...)
	if len(c.wbuf) >= maxWriteBuffer {
		if err := c.sendLocked(); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// flushWrites sends what has been written and not sent yet.
func (c *coarseConn) flushWrites() error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	if len(c.wbuf) == 0 {
		return nil
	}
	return c.sendLocked()
}

func (c *coarseConn) sendLocked() error {
	_, err := c.armedWrite(c.wbuf)
	c.wbuf = c.wbuf[:0]
	if cap(c.wbuf) > keepWriteCap {
		c.wbuf = nil
	}
	return err
}
