package shard

import (
	"testing"

	"github.com/shardis/shardis/shard/command"
)

// mayWrite decides whether a command cut off after it was sent may be sent
// again: a wrong "no" applies a write twice or answers a question about
// another connection.
func TestMayWrite(t *testing.T) {
	tests := []struct {
		args []any
		want bool
	}{
		{[]any{"GET", "k"}, false},
		{[]any{"PING"}, false},
		{[]any{"ECHO", "x"}, false},
		{[]any{"TIME"}, false},
		{[]any{"CLIENT", "ID"}, false},
		{[]any{"SET", "k", "v"}, true},
		{[]any{"INCR", "k"}, true},
		{[]any{"PUBLISH", "ch", "m"}, true},
		{[]any{"EVAL", "return 1", "0"}, true},
		{[]any{"EVALSHA", "0123", "0"}, true},
		{[]any{"FCALL", "f", "0"}, true},
		{[]any{"EXEC"}, true},
		{[]any{"SCRIPT", "FLUSH"}, true},
		{[]any{"FUNCTION", "DELETE", "lib"}, true},
		{[]any{"CLIENT", "KILL", "ID", "1"}, true},
		{[]any{"CONFIG", "SET", "maxmemory", "0"}, true},
		// WAIT and WAITAOF count the acknowledgements of the connection's
		// own earlier writes: sent again on another connection they answer
		// at once for writes that connection never made.
		{[]any{"WAIT", "1", "0"}, true},
		{[]any{"WAITAOF", "1", "0", "0"}, true},
	}
	for _, tt := range tests {
		name, _ := tt.args[0].(string)
		info := command.Lookup(name)
		if info != nil {
			info = info.Resolve(tt.args[1:])
		}
		if got := mayWrite(info); got != tt.want {
			t.Errorf("mayWrite(%v) = %v, want %v", tt.args, got, tt.want)
		}
	}
	if !mayWrite(nil) {
		t.Error("mayWrite(nil) = false: an unknown command may do anything")
	}
}
