package shard_test

import (
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
)

func TestParseKeyspaceEvent(t *testing.T) {
	tests := []struct {
		channel, data string
		want          shard.KeyspaceEvent
		ok            bool
	}{
		{"__keyspace@0__:user:1", "set", shard.KeyspaceEvent{DB: 0, Key: "user:1", Event: "set"}, true},
		{"__keyevent@3__:expired", "session:9", shard.KeyspaceEvent{DB: 3, Key: "session:9", Event: "expired"}, true},
		{"__keyspace@0__:a__:b", "del", shard.KeyspaceEvent{Key: "a__:b", Event: "del"}, true},
		{"__keyspace@0__:", "del", shard.KeyspaceEvent{Key: "", Event: "del"}, true},
		{"__keyspace@x__:k", "set", shard.KeyspaceEvent{}, false},
		{"__keyspace@-1__:k", "set", shard.KeyspaceEvent{}, false},
		{"__keyspace@+1__:k", "set", shard.KeyspaceEvent{}, false},
		{"__keyspace@__:k", "set", shard.KeyspaceEvent{}, false},
		{"__keyspace@0:k", "set", shard.KeyspaceEvent{}, false},
		{"news", "hello", shard.KeyspaceEvent{}, false},
		{"", "", shard.KeyspaceEvent{}, false},
	}
	for _, tt := range tests {
		got, ok := shard.ParseKeyspaceEvent(redis.Message{Pattern: "__key*__:*", Channel: tt.channel, Data: []byte(tt.data)})
		assert.Equal(t, tt.ok, ok, tt.channel)
		assert.Equal(t, tt.want, got, tt.channel)
	}
}

func FuzzParseKeyspaceEvent(f *testing.F) {
	f.Add("__keyspace@0__:k", "set")
	f.Add("__keyevent@12__:del", "k")
	f.Fuzz(func(t *testing.T, channel, data string) {
		ev, ok := shard.ParseKeyspaceEvent(redis.Message{Channel: channel, Data: []byte(data)})
		if !ok {
			return
		}
		if ev.DB < 0 || (ev.Key != data && ev.Event != data) {
			t.Fatalf("%q %q -> %+v", channel, data, ev)
		}
	})
}
