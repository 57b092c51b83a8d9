package shard

import (
	"context"
	"strconv"
	"strings"

	"github.com/gomodule/redigo/redis"
)

// DefaultKeyspacePatterns are the patterns SubscribeKeyspace listens to
// when none are given: every key event and every event on a key, in every
// database.
var DefaultKeyspacePatterns = []string{"__keyspace@*__:*", "__keyevent@*__:*"}

// KeyspaceOptions configures SubscribeKeyspace.
type KeyspaceOptions struct {
	// Patterns to PSUBSCRIBE on every node; nil means
	// DefaultKeyspacePatterns.
	Patterns []string
	// Enable, when not empty, is set as notify-keyspace-events (for
	// example "KEA") with CONFIG SET on every node the subscription
	// connects to, before it subscribes, so that a node that joins later
	// (a promoted replica, a restarted shard) emits events too. It needs
	// a user allowed to run CONFIG SET. Leave it empty when the servers
	// are configured already.
	Enable string
	// Subscription configures the subscription itself.
	Subscription SubscriptionOptions
}

// SubscribeKeyspace returns a subscription to keyspace notifications from
// the whole deployment. A server emits the events of a key only to its own
// subscribers, so the patterns are subscribed on every ring shard, or on
// every cluster master, following the topology: a promoted replica or a
// new master is subscribed as soon as the client sees it. During a
// migration the old topology's nodes are subscribed too, until
// FinishMigration: the keys not moved yet emit their events there.
// Messages arrive as redis.Message with Pattern set; ParseKeyspaceEvent
// reads them.
func (c *Client) SubscribeKeyspace(ctx context.Context, opts KeyspaceOptions) (*Subscription, error) {
	if err := checkContext(ctx); err != nil {
		return nil, err
	}
	s, err := c.NewKeyspaceSubscription(opts)
	if err != nil {
		return nil, err
	}
	patterns := opts.Patterns
	if patterns == nil {
		patterns = DefaultKeyspacePatterns
	}
	if err := s.add(ctx, kindPattern, patterns); err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// NewKeyspaceSubscription returns an empty keyspace subscription: the
// patterns added with its PSubscribe are subscribed on every ring shard
// or every cluster master, following the topology, as SubscribeKeyspace
// does, and opts.Enable is set on every node it connects to; opts.Patterns
// is not used. Unlike SubscribeKeyspace, which closes the subscription
// when a node cannot be reached, it lets the caller keep one whose
// PSubscribe returned such an error: the patterns stay and are subscribed
// on that node (configured first) once it answers.
func (c *Client) NewKeyspaceSubscription(opts KeyspaceOptions) (*Subscription, error) {
	var setup []any
	if opts.Enable != "" {
		setup = []any{"CONFIG", "SET", "notify-keyspace-events", opts.Enable}
	}
	return c.newSubscription(opts.Subscription, true, setup)
}

// KeyspaceEvent is one keyspace notification.
type KeyspaceEvent struct {
	DB    int    // the database number
	Key   string // the key
	Event string // the event: "set", "del", "expired", "lpush", ...
}

// ParseKeyspaceEvent reads a message of channel __keyspace@DB__:KEY
// (payload: the event) or __keyevent@DB__:EVENT (payload: the key). ok is
// false for any other message.
func ParseKeyspaceEvent(m redis.Message) (ev KeyspaceEvent, ok bool) {
	var keyspace bool
	rest, found := strings.CutPrefix(m.Channel, "__keyspace@")
	if found {
		keyspace = true
	} else if rest, found = strings.CutPrefix(m.Channel, "__keyevent@"); !found {
		return KeyspaceEvent{}, false
	}
	dbText, name, found := strings.Cut(rest, "__:")
	if !found {
		return KeyspaceEvent{}, false
	}
	db, err := strconv.Atoi(dbText)
	if err != nil || db < 0 || dbText[0] == '+' {
		return KeyspaceEvent{}, false
	}
	ev.DB = db
	if keyspace {
		ev.Key, ev.Event = name, string(m.Data)
	} else {
		ev.Key, ev.Event = string(m.Data), name
	}
	return ev, true
}
