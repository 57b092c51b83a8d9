package shard

import "time"

// Defaults for the SubscriptionOptions fields left at zero.
const (
	DefaultSubscriptionBuffer = 16384
	DefaultPingInterval       = time.Second
	DefaultMaxRedialBackoff   = 500 * time.Millisecond
)

// SubscriptionOptions configures a Subscription. Zero values take the
// defaults named in the comments.
type SubscriptionOptions struct {
	// BufferSize is the most messages held for the application between
	// the connections and Receive (or Channel). Zero means
	// DefaultSubscriptionBuffer (16384). When it is full, newly arrived
	// messages are dropped and counted in SubscriptionStats.Dropped: the
	// connections are never stalled (see docs/pubsub.md for why).
	BufferSize int
	// PingInterval is how long a connection may stay silent before a
	// health PING is sent on it. Zero means DefaultPingInterval (1s).
	PingInterval time.Duration
	// PingTimeout is how long an answer to that PING may take. Zero means
	// the client's read timeout. A peer that sends nothing for
	// PingInterval+PingTimeout is taken for dead: its connection is closed
	// and dialled again.
	PingTimeout time.Duration
	// MaxBackoff bounds the wait between two attempts to dial a node (the
	// waits double from 25ms, with jitter). Zero means
	// DefaultMaxRedialBackoff (500ms).
	MaxBackoff time.Duration
}

func (o SubscriptionOptions) withDefaults(c *Client) SubscriptionOptions {
	if o.BufferSize <= 0 {
		o.BufferSize = DefaultSubscriptionBuffer
	}
	if o.PingInterval <= 0 {
		o.PingInterval = DefaultPingInterval
	}
	if o.PingTimeout <= 0 {
		o.PingTimeout = c.readTimeout
	}
	if o.MaxBackoff <= 0 {
		o.MaxBackoff = DefaultMaxRedialBackoff
	}
	return o
}

// SubscriptionStats are the counters of one Subscription.
type SubscriptionStats struct {
	Channels      int // channels subscribed (SUBSCRIBE)
	Patterns      int // patterns subscribed (PSUBSCRIBE)
	ShardChannels int // shard channels subscribed (SSUBSCRIBE)
	Connections   int // connections open now, one per node in use

	Received  int64 // messages read from the servers
	Delivered int64 // messages handed to the application
	Dropped   int64 // messages dropped because the buffer was full
	Buffered  int   // messages waiting for the application

	Dials        int64 // connections dialled, the first ones included
	DialErrors   int64 // dials that failed
	Lost         int64 // connections lost: closed by the peer, I/O errors, missed health PINGs
	Resubscribed int64 // names subscribed again on a node that had them (after a lost connection), or moved to another node, or a keyspace pattern on a new master of the cluster; not a pattern placed on a ring shard that joins
	Moved        int64 // shard channels that left a node (MOVED, or the server's sunsubscribe after a slot migration)
	ServerErrors int64 // error replies in subscribe mode
}

// Buffered returns the number of messages waiting for the application,
// those held back while their channel moves to another node included.
func (s *Subscription) Buffered() int { return s.q.messages() + int(s.held.Load()) }

// Stats returns the subscription's counters. It never waits: not even
// for a write to a node that does not read, which holds up the
// subscription's other calls (each counter is read on its own, so they
// may be a moment apart from each other).
func (s *Subscription) Stats() SubscriptionStats {
	return SubscriptionStats{
		Channels: int(s.st.names[kindChannel].Load()), Patterns: int(s.st.names[kindPattern].Load()),
		ShardChannels: int(s.st.names[kindShard].Load()), Connections: int(s.st.conns.Load()),
		Received: s.st.received.Load(), Delivered: s.st.delivered.Load(), Dropped: s.st.dropped.Load(),
		Buffered: s.Buffered(), Dials: s.st.dials.Load(), DialErrors: s.st.dialErrors.Load(),
		Lost: s.st.lost.Load(), Resubscribed: s.st.resubscribed.Load(), Moved: s.st.moved.Load(),
		ServerErrors: s.st.serverErrors.Load(),
	}
}
