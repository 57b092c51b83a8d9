package shard

import (
	"sync"

	"github.com/gomodule/redigo/redis"
)

// queue holds what the connections received until the application takes
// it. Messages are bounded by limit: one that arrives when limit are
// waiting is dropped (and counted by the caller). Confirmations, pongs and
// errors are never dropped: there are at most a few per name subscribed.
type queue struct {
	mu    sync.Mutex
	items []any
	head  int
	msgs  int // messages among items[head:]
	limit int
	ready chan struct{} // holds a token while items may be waiting
}

func (q *queue) init(limit int) {
	q.limit = limit
	q.ready = make(chan struct{}, 1)
}

// push appends v; a message that finds the buffer full is refused.
func (q *queue) push(v any) bool {
	_, isMsg := v.(redis.Message)
	q.mu.Lock()
	if isMsg {
		if q.msgs >= q.limit {
			q.mu.Unlock()
			return false
		}
		q.msgs++
	}
	wasEmpty := q.head == len(q.items)
	q.items = append(q.items, v)
	q.mu.Unlock()
	if wasEmpty {
		q.signal() // a receiver may be waiting only when it found none
	}
	return true
}

func (q *queue) signal() {
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// pop takes the oldest item.
func (q *queue) pop() (any, bool) {
	q.mu.Lock()
	if q.head == len(q.items) {
		q.mu.Unlock()
		return nil, false
	}
	v := q.items[q.head]
	q.items[q.head] = nil
	q.head++
	if _, isMsg := v.(redis.Message); isMsg {
		q.msgs--
	}
	switch {
	case q.head == len(q.items):
		q.items, q.head = q.items[:0], 0
	case q.head > 1024 && q.head*2 > len(q.items):
		n := copy(q.items, q.items[q.head:])
		clear(q.items[n:])
		q.items, q.head = q.items[:n], 0
	}
	more := q.head < len(q.items)
	q.mu.Unlock()
	if more {
		q.signal() // another receiver may be waiting
	}
	return v, true
}

func (q *queue) messages() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.msgs
}

func (q *queue) clear() {
	q.mu.Lock()
	q.items, q.head, q.msgs = nil, 0, 0
	q.mu.Unlock()
}
