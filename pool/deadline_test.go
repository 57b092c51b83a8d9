package pool

import (
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// countingConn counts the read deadlines that reach the real connection.
type countingConn struct {
	net.Conn
	set []time.Time
}

func (c *countingConn) SetReadDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}

func (c *countingConn) SetWriteDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}

func (c *countingConn) SetDeadline(t time.Time) error {
	c.set = append(c.set, t)
	return nil
}

func TestCoarseConnSkipsTinyDeadlineMoves(t *testing.T) {
	inner := &countingConn{}
	c := &coarseConn{Conn: inner}
	base := time.Now().Add(time.Hour)
	steps := []struct {
		at   time.Time
		sent bool
	}{
		{base, true},                            // first deadline, armed deadlineSlack later
		{base.Add(time.Microsecond), false},     // a hair later: kept
		{base.Add(4 * time.Millisecond), false}, // within the slack
		{base.Add(6 * time.Millisecond), true},  // beyond it: moved (to base+11ms)
		{base.Add(7 * time.Millisecond), false}, // earlier, within the slack: kept, fires late
		{base.Add(time.Millisecond), true},      // earlier beyond the slack: honoured
		{time.Time{}, true},                     // cleared: always honoured
		{base, true},                            // set again after clearing
	}
	for i, s := range steps {
		before := len(inner.set)
		require.NoError(t, c.SetReadDeadline(s.at))
		assert.Equal(t, s.sent, len(inner.set) > before, "step %d", i)
		if got := inner.set[len(inner.set)-1]; !s.at.IsZero() && got.Before(s.at) {
			t.Errorf("step %d: armed %v, before the %v asked for", i, got, s.at)
		}
	}
	before := len(inner.set)
	require.NoError(t, c.SetWriteDeadline(base.Add(time.Minute)))
	require.NoError(t, c.SetWriteDeadline(base.Add(time.Minute+time.Millisecond)))
	assert.Equal(t, before+1, len(inner.set), "write deadlines are coarse too")
	require.NoError(t, c.SetDeadline(base.Add(time.Hour)))
	require.NoError(t, c.SetReadDeadline(base.Add(time.Hour-time.Millisecond)))
	assert.Equal(t, base.Add(time.Hour), inner.set[len(inner.set)-1], "SetDeadline counts as the read deadline")
}

// A read still times out: the deadline is at most the slack late, never early.
func TestCoarseConnStillTimesOut(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	done := make(chan struct{})
	defer close(done)
	go func() {
		s, err := ln.Accept()
		if err == nil {
			<-done // silent until the test ends: only the deadline ends the read
			s.Close()
		}
	}()
	nc, err := net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	c := &coarseConn{Conn: nc}
	defer c.Close()
	start := time.Now()
	for i := 0; i < 100; i++ {
		require.NoError(t, c.SetReadDeadline(time.Now().Add(100*time.Millisecond)))
	}
	_, err = c.Read(make([]byte, 1))
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())
	assert.Less(t, time.Since(start), 5*time.Second, "a 100ms deadline, generous for a loaded machine")
}

// Peeking at a live connection costs no allocation and says it is open;
// after the peer closes it says closed.
func TestPeekerOnALiveAndAClosedConnection(t *testing.T) {
	nc, server := tcpPair(t)
	p := newPeeker(nc)
	require.NotNil(t, p)
	closed, tlsBytes := p.closed()
	assert.False(t, closed)
	assert.False(t, tlsBytes)
	assert.Zero(t, testing.AllocsPerRun(100, func() { p.closed() }))

	server.Close()
	require.Eventually(t, func() bool { closed, _ := p.closed(); return closed }, time.Second, 5*time.Millisecond)
}

// tcpPair returns both ends of a loopback TCP connection.
func tcpPair(t *testing.T) (client, server net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		s, err := ln.Accept()
		if err == nil {
			accepted <- s
		}
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	t.Cleanup(func() { client.Close(); server.Close() })
	return client, server
}

// A deadline in force stands for a new one only when it is not earlier
// and later by at most deadlineSlack and, for a timeout (now known), by at
// most half the time asked for: a read never times out early, and a
// short wait is never stretched to many times its length.
func TestKeepDeadline(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name           string
		current, asked time.Time
		now            time.Time
		want           bool
	}{
		{"none asked, none set", time.Time{}, time.Time{}, now, true},
		{"none set", time.Time{}, now.Add(time.Second), now, false},
		{"cleared", now.Add(time.Second), time.Time{}, now, false},
		{"a hair earlier", now.Add(time.Second), now.Add(time.Second - time.Microsecond), now, true},
		{"later", now.Add(time.Second), now.Add(time.Second + time.Microsecond), now, false},
		{"earlier beyond the slack", now.Add(time.Second + deadlineSlack + time.Microsecond), now.Add(time.Second), now, false},
		{"more than half of a short wait", now.Add(1600 * time.Microsecond), now.Add(time.Millisecond), now, false},
		{"less than half of a short wait", now.Add(1400 * time.Microsecond), now.Add(time.Millisecond), now, true},
		{"a deadline given as such, within the slack", now.Add(time.Millisecond + deadlineSlack), now.Add(time.Millisecond), time.Time{}, true},
		{"a deadline given as such, already passed", now.Add(-time.Millisecond), now.Add(-2 * time.Millisecond), time.Time{}, true},
		{"a deadline given as such, later than the one in force", now.Add(-time.Millisecond), now.Add(3 * time.Millisecond), time.Time{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, keep(tt.current, tt.asked, tt.now))
		})
	}
}

// A deadline is armed a little later than asked, never earlier, and as
// asked when it has passed or is none.
func TestPaddedDeadline(t *testing.T) {
	now := time.Now()
	tests := []struct {
		name    string
		t, want time.Time
	}{
		{"none", time.Time{}, time.Time{}},
		{"passed", now.Add(-time.Second), now.Add(-time.Second)},
		{"far", now.Add(time.Second), now.Add(time.Second + deadlineSlack)},
		{"near: half of the time left", now.Add(2 * time.Millisecond), now.Add(3 * time.Millisecond)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, padded(tt.t, now))
		})
	}
}

// Every wait for a reply gets the read timeout asked for, counted from
// the socket read itself; 0 waits as long as it takes.
func TestLiveConnArmsEachSocketRead(t *testing.T) {
	nc, server := tcpPair(t)
	c := newLiveConn(&coarseConn{Conn: nc}, time.Minute)
	start := time.Now()
	_, err := c.ReceiveWithTimeout(100 * time.Millisecond)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())
	// The 100ms asked for, not the connection's 1-minute default; the
	// bound leaves room for a loaded machine.
	assert.Less(t, time.Since(start), 10*time.Second)
	assert.Error(t, c.Err(), "a timed-out connection is failed for good")

	nc, server = tcpPair(t)
	c = newLiveConn(&coarseConn{Conn: nc}, time.Second)
	time.AfterFunc(300*time.Millisecond, func() { server.Write([]byte("+OK\r\n")) })
	start = time.Now()
	reply, err := c.ReceiveWithTimeout(0)
	require.NoError(t, err)
	assert.Equal(t, "OK", reply)
	assert.GreaterOrEqual(t, time.Since(start), 250*time.Millisecond)
}

// A write to a server that stops reading times out after writeTimeout.
func TestLiveConnWriteTimesOut(t *testing.T) {
	nc, _ := tcpPair(t)
	c := newLiveConn(&coarseConn{Conn: nc, writeTimeout: 100 * time.Millisecond}, time.Second)
	value := make([]byte, 1<<20)
	start := time.Now()
	var err error
	for i := 0; i < 256 && err == nil; i++ { // far more than the socket buffers hold
		err = c.Send("SET", "k", value)
	}
	if err == nil {
		err = c.Flush()
	}
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	assert.True(t, ne.Timeout())
	assert.Less(t, time.Since(start), 2*time.Second)
}
