package pool

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A server that sends a 96-byte reply one byte every 100 ms is alive but
// would take 9.6 s to finish it: ReadTimeout bounds the whole reply, so
// every way of waiting for one gives up after ReadTimeout (+10 %), with a
// timeout error, and the connection is failed for good.
func TestReadTimeoutBoundsAWholeTrickledReply(t *testing.T) {
	const readTimeout = 400 * time.Millisecond
	tr := redistest.StartTrickler(t, 100*time.Millisecond, nil)
	set, err := NewSet(Options{ReadTimeout: readTimeout, DialTimeout: time.Second})
	require.NoError(t, err)
	defer set.Close()

	waits := []struct {
		name string
		wait func(c redis.Conn) error
		want time.Duration
	}{
		{"Do", func(c redis.Conn) error { _, err := c.Do("GET", "k"); return err }, readTimeout},
		{"DoWithTimeout", func(c redis.Conn) error {
			_, err := redis.DoWithTimeout(c, 300*time.Millisecond, "GET", "k")
			return err
		}, 300 * time.Millisecond},
		{"DoContext", func(c redis.Conn) error {
			_, err := redis.DoContext(c, context.Background(), "GET", "k")
			return err
		}, readTimeout},
		{"Send Flush Receive", func(c redis.Conn) error {
			if err := c.Send("GET", "k"); err != nil {
				return err
			}
			if err := c.Flush(); err != nil {
				return err
			}
			_, err := c.Receive()
			return err
		}, readTimeout},
		{"ReceiveWithTimeout", func(c redis.Conn) error {
			if err := c.Send("GET", "k"); err != nil {
				return err
			}
			if err := c.Flush(); err != nil {
				return err
			}
			_, err := redis.ReceiveWithTimeout(c, 300*time.Millisecond)
			return err
		}, 300 * time.Millisecond},
	}
	for _, w := range waits {
		t.Run(w.name, func(t *testing.T) {
			// The bound must hold in one of three rounds: timing on a
			// loaded machine is noisy, and a wrong implementation misses
			// it by seconds every time. Every round must time out.
			for round := 1; ; round++ {
				c, err := set.Get(context.Background(), tr.Addr)
				require.NoError(t, err)
				start := time.Now()
				err = w.wait(c)
				took := time.Since(start)
				var ne net.Error
				require.ErrorAs(t, err, &ne, "a trickled reply must time out")
				assert.True(t, ne.Timeout(), "%v", err)
				assert.GreaterOrEqual(t, took, w.want/2, "not given up long before the timeout")
				assert.Error(t, c.Err(), "a timed-out connection is failed for good")
				c.Close()
				if took < w.want+w.want/10 || round == 3 {
					assert.Less(t, took, w.want+w.want/10, "the timeout bounds the whole reply")
					break
				}
				t.Logf("round %d took %v; again", round, took)
			}
		})
	}
}

// A reply that arrives in pieces within the timeout is read whole: the
// deadline is per reply, not per connection, and the next reply gets a
// fresh one (three replies of 400 ms each, with a timeout of 1 s).
func TestReadTimeoutIsPerReply(t *testing.T) {
	nc, server := tcpPair(t)
	c := newLiveConn(&coarseConn{Conn: nc}, time.Second)
	for i := range 3 {
		go func() {
			server.Write([]byte("$4\r\n"))
			time.Sleep(300 * time.Millisecond)
			server.Write([]byte("ab"))
			time.Sleep(100 * time.Millisecond)
			server.Write([]byte("cd\r\n"))
		}()
		reply, err := c.Receive()
		require.NoError(t, err, "reply %d", i)
		assert.Equal(t, []byte("abcd"), reply)
	}
}

// ReceiveBy: a reply already received is returned even after its
// deadline, without waiting; one that has not come fails at the deadline,
// however slowly its bytes trickle in.
func TestReceiveByDeadline(t *testing.T) {
	nc, server := tcpPair(t)
	c := newLiveConn(&coarseConn{Conn: nc}, time.Second)
	_, err := server.Write([]byte("+first\r\n+second\r\n"))
	require.NoError(t, err)
	reply, err := ReceiveBy(c, time.Now().Add(time.Second))
	require.NoError(t, err)
	assert.Equal(t, "first", reply)
	reply, err = ReceiveBy(c, time.Now().Add(-time.Second)) // buffered: still taken
	require.NoError(t, err)
	assert.Equal(t, "second", reply)

	go func() {
		for _, b := range []byte("+slow reply\r\n") {
			time.Sleep(50 * time.Millisecond)
			if _, err := server.Write([]byte{b}); err != nil {
				return
			}
		}
	}()
	start := time.Now()
	_, err = ReceiveBy(c, start.Add(200*time.Millisecond))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())
	assert.Less(t, time.Since(start), 500*time.Millisecond, "the reply took 650 ms to trickle in")

	// Connections that are not the Set's get the time left.
	other := redis.NewConn(nc, 0, 0)
	_, err = ReceiveBy(other, time.Now().Add(-time.Second))
	assert.Error(t, err)
}
