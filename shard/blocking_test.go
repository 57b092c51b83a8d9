package shard

import (
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/shard/command"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Blocking-ness comes from the arguments: the table flags XREAD and
// XREADGROUP as blocking, but only their BLOCK form waits on the server.
func TestBlockForDecidesByArguments(t *testing.T) {
	tests := []struct {
		name  string
		args  []any
		block bool
		wait  time.Duration // 0: without limit
	}{
		{"GET", []any{"k"}, false, 0},
		{"XREAD", []any{"COUNT", 1, "STREAMS", "s", "0"}, false, 0},
		{"xread", []any{"count", "1", "streams", "s", "0"}, false, 0},
		{"XREAD", []any{"STREAMS", "BLOCK", "0"}, false, 0}, // a stream named BLOCK
		{"XREAD", []any{"BLOCK", 250, "STREAMS", "s", "$"}, true, 250 * time.Millisecond},
		{"XREAD", []any{"COUNT", 5, "block", "0", "STREAMS", "s", "$"}, true, 0},
		{"XREADGROUP", []any{"GROUP", "g", "c", "STREAMS", "s", ">"}, false, 0},
		{"XREADGROUP", []any{"GROUP", "BLOCK", "COUNT", "NOACK", "STREAMS", "s", ">"}, false, 0},
		{"XREADGROUP", []any{"GROUP", "g", "c", "BLOCK", 1000, "STREAMS", "s", ">"}, true, time.Second},
		{"BLPOP", []any{"a", "b", 2}, true, 2 * time.Second},
		{"BLPOP", []any{"a", "0.5"}, true, 500 * time.Millisecond},
		{"BRPOP", []any{"a", 0}, true, 0},
		{"BZPOPMIN", []any{"z", "1"}, true, time.Second},
		{"BZPOPMAX", []any{"z", "x"}, true, 0}, // the server refuses it; no limit assumed
		{"BLMOVE", []any{"a", "b", "LEFT", "RIGHT", 3}, true, 3 * time.Second},
		{"BRPOPLPUSH", []any{"a", "b", 1}, true, time.Second},
		{"BLMPOP", []any{2, 1, "a", "LEFT"}, true, 2 * time.Second},
		{"BZMPOP", []any{"0", 1, "z", "MIN"}, true, 0},
		{"WAIT", []any{1, 100}, true, 100 * time.Millisecond},
		{"WAIT", []any{1, 0}, true, 0},
		{"XADD", []any{"s", "*", "f", "v"}, false, 0},
	}
	for _, tt := range tests {
		info := lookupCommand(tt.name)
		require.NotNil(t, info, tt.name)
		d, ok := blockFor(&call{name: tt.name, args: tt.args, info: info})
		assert.Equal(t, tt.block, ok, "%s %v blocks", tt.name, tt.args)
		assert.Equal(t, tt.wait, d, "%s %v waits", tt.name, tt.args)
		assert.Equal(t, tt.block, isBlocking(&call{name: tt.name, args: tt.args, info: info}))
	}
}

// blockFor reads options and numbers out of arbitrary arguments: it never
// panics, never reports a negative wait, and a command the table does not
// flag (nor WAIT) never blocks.
func FuzzBlockFor(f *testing.F) {
	f.Add("xread", "COUNT\x001\x00BLOCK\x00100\x00STREAMS\x00s\x00$")
	f.Add("xreadgroup", "GROUP\x00g\x00c\x00BLOCK\x000\x00STREAMS\x00s\x00>")
	f.Add("blpop", "a\x000.5")
	f.Add("blmpop", "1e300\x001\x00a\x00LEFT")
	f.Add("wait", "1\x00-5")
	f.Add("get", "k")
	f.Fuzz(func(t *testing.T, name, raw string) {
		info := lookupCommand(name)
		if info == nil {
			return
		}
		var args []any
		if raw != "" {
			for _, a := range strings.Split(raw, "\x00") {
				args = append(args, a)
			}
		}
		d, ok := blockFor(&call{name: name, args: args, info: info})
		if d < 0 {
			t.Fatalf("%s %q: negative wait %v", name, args, d)
		}
		if ok && info != waitInfo && info.Flags&command.Blocking == 0 {
			t.Fatalf("%s %q: blocks without the flag", name, args)
		}
		if !ok && d != 0 {
			t.Fatalf("%s %q: a wait for a command that does not block", name, args)
		}
	})
}
