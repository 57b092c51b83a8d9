package pool

import "sync"

// Idle connections hold no buffers. A pool keeps up to MaxIdle (64 by
// default) connections per address, and each used to keep its 16 KiB
// read buffer and its write buffer while idle: about 1 MiB per node, a
// gigabyte at a thousand nodes. Instead, a connection takes its buffers
// from these pools when it starts writing or reading and gives them back
// as soon as nothing is left in them: the write buffer after each flush,
// the read buffer when the last reply that was sent for has been read. A
// busy pipeline pays one Get and one Put per batch; an idle connection
// costs only its socket and structs.
var (
	readBuffers  = sync.Pool{New: func() any { return new([readBufferSize]byte) }}
	writeBuffers sync.Pool // of *writeBuffer
)

// writeBuffer carries a write buffer through writeBuffers without an
// allocation per Put (a []byte would be boxed every time).
type writeBuffer struct{ b []byte }

// initialWriteBuffer is the capacity of a new write buffer: a few dozen
// small commands.
const initialWriteBuffer = 4 << 10

// takeWriteBuffer gives c a write buffer from the pool; c.wbuf must be
// nil.
func (c *liveConn) takeWriteBuffer() {
	if v, ok := writeBuffers.Get().(*writeBuffer); ok {
		c.wbox, c.wbuf, v.b = v, v.b[:0], nil
		return
	}
	if c.wbox == nil {
		c.wbox = new(writeBuffer)
	}
	c.wbuf = make([]byte, 0, initialWriteBuffer)
}

// releaseWriteBuffer gives c's flushed write buffer back to the pool, or
// drops it when a large batch grew it beyond keepWriteCap.
func (c *liveConn) releaseWriteBuffer() {
	if c.wbox != nil && cap(c.wbuf) <= keepWriteCap {
		c.wbox.b = c.wbuf[:0]
		writeBuffers.Put(c.wbox)
		c.wbox = nil
	}
	c.wbuf = nil
}

// takeReadBuffer gives rd a read buffer from the pool; rd.buf must be
// nil.
func (rd *replyReader) takeReadBuffer() {
	rd.buf = readBuffers.Get().(*[readBufferSize]byte)[:]
	rd.r, rd.w = 0, 0
}

// release gives rd's read buffer back to the pool once every byte in it
// has been parsed (a grown buffer is dropped instead); it does nothing
// while bytes are waiting.
func (rd *replyReader) release() {
	if rd.r != rd.w || rd.buf == nil {
		return
	}
	if len(rd.buf) == readBufferSize {
		readBuffers.Put((*[readBufferSize]byte)(rd.buf))
	}
	rd.buf, rd.r, rd.w = nil, 0, 0
}

// replied is called after each reply read: with no command left waiting
// for a reply and nothing buffered, the read buffer goes back to the
// pool; with replies still to come, only a buffer grown by a large reply
// is dropped.
func (c *liveConn) replied() {
	if c.rd.buffered() {
		return
	}
	if c.pending.Load() == 0 {
		c.rd.release()
		return
	}
	c.rd.shrink()
}
