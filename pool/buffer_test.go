package pool

import (
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeCounter counts the writes that reach the socket.
type writeCounter struct {
	net.Conn
	writes int
}

func (w *writeCounter) Write(p []byte) (int, error) {
	w.writes++
	return w.Conn.Write(p)
}

// redigo hands a managed connection its 4 KiB buffer at a time; the
// connection sends in pieces of up to maxWriteBuffer, and the rest when
// flushed.
func TestManagedConnCollectsWrites(t *testing.T) {
	nc, server := tcpPair(t)
	go io.Copy(io.Discard, server)
	w := &writeCounter{Conn: nc}
	c := &coarseConn{Conn: w, managed: true, writeTimeout: time.Second}
	chunk := make([]byte, 4096)
	for i := 0; i < 40; i++ { // 160 KiB
		n, err := c.Write(chunk)
		require.NoError(t, err)
		require.Equal(t, len(chunk), n)
	}
	assert.Equal(t, 2, w.writes, "two full 64 KiB pieces so far")
	require.NoError(t, c.flushWrites())
	assert.Equal(t, 3, w.writes, "the rest on flush")
	require.NoError(t, c.flushWrites())
	assert.Equal(t, 3, w.writes, "nothing left to send")
}

// A read sends what is pending first (the request a reply answers), and
// serves later reads from what one socket read brought in.
func TestManagedConnSendsBeforeItWaits(t *testing.T) {
	nc, server := tcpPair(t)
	c := &coarseConn{Conn: nc, managed: true, readTimeout: 2 * time.Second, writeTimeout: time.Second}
	go func() {
		buf := make([]byte, 6)
		if _, err := io.ReadFull(server, buf); err == nil && string(buf) == "PING\r\n" {
			server.Write([]byte("+PONG\r\n+PONG\r\n"))
		}
	}()
	_, err := c.Write([]byte("PING\r\n"))
	require.NoError(t, err)
	p := make([]byte, 7)
	n, err := io.ReadFull(c, p)
	require.NoError(t, err, "the buffered request went out before the read")
	assert.Equal(t, "+PONG\r\n", string(p[:n]))
	// The second reply came in the same socket read and is served from
	// the buffer.
	n, err = c.Read(p)
	require.NoError(t, err)
	assert.Equal(t, "+PONG\r\n", string(p[:n]))
}
