package shard_test

import (
	"sync"

	"github.com/shardis/shardis/shard"
)

// upDownLog records the NodeDown and NodeUp events of the server at addr,
// as a NodeState hook (record) that tests install on a client.
type upDownLog struct {
	addr   string
	mu     sync.Mutex
	events []shard.NodeEvent
}

// record is the NodeState hook.
func (l *upDownLog) record(ev shard.NodeEvent) {
	if ev.ServerAddr != l.addr || (ev.Kind != shard.NodeDown && ev.Kind != shard.NodeUp) {
		return
	}
	l.mu.Lock()
	l.events = append(l.events, ev)
	l.mu.Unlock()
}

// count returns how many events were recorded.
func (l *upDownLog) count() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

// down returns the event that first marked the server down, and how many
// times it came up since.
func (l *upDownLog) down() (ev shard.NodeEvent, down bool, ups int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, e := range l.events {
		switch {
		case e.Kind == shard.NodeDown && !down:
			ev, down = e, true
		case e.Kind == shard.NodeUp && down:
			ups++
		}
	}
	return ev, down, ups
}
