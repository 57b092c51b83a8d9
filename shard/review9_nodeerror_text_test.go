package shard_test

import (
	"errors"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A node's error names it once: a replica's name already carries its
// address, which the text does not repeat.
func TestReview9NodeErrorNamesTheNodeOnce(t *testing.T) {
	cause := errors.New("shardis: connection refused")
	tests := []struct {
		name string
		node shard.Node
		want string
	}{
		{"unnamed", shard.Node{Addr: "127.0.0.1:7000"}, "shardis: node 127.0.0.1:7000: connection refused"},
		{"named by its address", shard.Node{Name: "127.0.0.1:7000", Addr: "127.0.0.1:7000"}, "shardis: node 127.0.0.1:7000: connection refused"},
		{"shard name", shard.Node{Name: "shard-1", Addr: "127.0.0.1:7000"}, "shardis: node shard-1 (127.0.0.1:7000): connection refused"},
		{"replica", shard.Node{Name: "127.0.0.1:7001 (replica)", Addr: "127.0.0.1:7001"}, "shardis: node 127.0.0.1:7001 (replica): connection refused"},
		{"name that only starts like the address", shard.Node{Name: "127.0.0.1:70010", Addr: "127.0.0.1:7001"}, "shardis: node 127.0.0.1:70010 (127.0.0.1:7001): connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := (&shard.NodeError{Node: tt.node, Err: cause}).Error()
			if got != tt.want {
				t.Fatalf("got %q, want %q", got, tt.want)
			}
		})
	}
}
