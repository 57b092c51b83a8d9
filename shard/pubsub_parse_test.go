package shard

import (
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestParsePush(t *testing.T) {
	b := func(s string) []byte { return []byte(s) }
	tests := []struct {
		name  string
		reply any
		want  any
		bad   bool
	}{
		{"message", []any{b("message"), b("ch"), b("hi")}, redis.Message{Channel: "ch", Data: b("hi")}, false},
		{"smessage", []any{b("smessage"), b("ch"), b("")}, redis.Message{Channel: "ch", Data: b("")}, false},
		{"pmessage", []any{b("pmessage"), b("c*"), b("ch"), b("x")}, redis.Message{Pattern: "c*", Channel: "ch", Data: b("x")}, false},
		{"subscribe", []any{b("subscribe"), b("ch"), int64(3)}, redis.Subscription{Kind: "subscribe", Channel: "ch", Count: 3}, false},
		{"sunsubscribe", []any{b("sunsubscribe"), b("ch"), int64(0)}, redis.Subscription{Kind: "sunsubscribe", Channel: "ch"}, false},
		{"unsubscribe from nothing", []any{b("unsubscribe"), nil, int64(0)}, redis.Subscription{Kind: "unsubscribe"}, false},
		{"pong", []any{b("pong"), b("")}, redis.Pong{}, false},
		{"pong with data", []any{b("pong"), b("x")}, redis.Pong{Data: "x"}, false},
		{"PONG before subscribing", "PONG", redis.Pong{}, false},
		{"OK status", "OK", nil, true},
		{"integer", int64(1), nil, true},
		{"null", nil, nil, true},
		{"bulk", b("message"), nil, true},
		{"empty array", []any{}, nil, true},
		{"unknown push type", []any{b("invalidate"), []any{b("k")}}, nil, true},
		{"integer push type", []any{int64(1), b("ch"), b("x")}, nil, true},
		{"nested push type", []any{[]any{b("message")}, b("ch"), b("x")}, nil, true},
		{"message too short", []any{b("message"), b("ch")}, nil, true},
		{"message too long", []any{b("message"), b("ch"), b("x"), b("y")}, nil, true},
		{"message integer payload", []any{b("message"), b("ch"), int64(1)}, nil, true},
		{"message null channel", []any{b("message"), nil, b("x")}, nil, true},
		{"pmessage too short", []any{b("pmessage"), b("p"), b("ch")}, nil, true},
		{"subscribe string count", []any{b("subscribe"), b("ch"), b("1")}, nil, true},
		{"subscribe array channel", []any{b("subscribe"), []any{}, int64(1)}, nil, true},
		{"pong too long", []any{b("pong"), b(""), b("")}, nil, true},
		{"pong integer", []any{b("pong"), int64(1)}, nil, true},
		{"an error value", redis.Error("ERR x"), nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parsePush(tt.reply)
			if tt.bad {
				require.Error(t, err)
				assert.True(t, errors.Is(err, ErrPubSubReply), "%v", err)
				assert.Contains(t, err.Error(), "shardis: ")
				assert.Nil(t, got)
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

// FuzzParsePush builds reply trees from the fuzzer's bytes: parsePush must
// never panic, and must either return one of the three value types or an
// error wrapping ErrPubSubReply; the error never quotes a payload.
func FuzzParsePush(f *testing.F) {
	f.Add([]byte{4, 3, 1, 'm', 1, 'x', 1, 'y'})
	f.Add([]byte{4, 2, 1, 'p', 2})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := buildReply(data, 0)
		got, err := parsePush(v)
		if err != nil {
			if !errors.Is(err, ErrPubSubReply) {
				t.Fatalf("error %v does not wrap ErrPubSubReply", err)
			}
			return
		}
		switch got.(type) {
		case redis.Message, redis.Subscription, redis.Pong:
		default:
			t.Fatalf("parsePush returned %T", got)
		}
	})
}

// buildReply decodes a reply tree from data: the first byte picks the type.
func buildReply(data []byte, depth int) (any, []byte) {
	if len(data) == 0 {
		return nil, nil
	}
	kind, data := data[0], data[1:]
	words := []string{"message", "pmessage", "smessage", "subscribe", "psubscribe", "ssubscribe",
		"unsubscribe", "punsubscribe", "sunsubscribe", "pong", "PONG", "OK"}
	switch kind % 6 {
	case 0:
		return nil, data
	case 1: // a bulk string: a known word or raw bytes
		if len(data) == 0 {
			return []byte{}, data
		}
		if data[0] < 128 {
			return []byte(words[int(data[0])%len(words)]), data[1:]
		}
		n := min(int(data[0]-128), len(data)-1)
		return append([]byte(nil), data[1:1+n]...), data[1+n:]
	case 2:
		if len(data) == 0 {
			return int64(0), data
		}
		return int64(int8(data[0])), data[1:]
	case 3:
		if len(data) == 0 {
			return "PONG", data
		}
		return words[int(data[0])%len(words)], data[1:]
	case 4:
		if depth > 4 || len(data) == 0 {
			return []any{}, data
		}
		n := int(data[0] % 6)
		data = data[1:]
		out := make([]any, 0, n)
		for range n {
			var v any
			v, data = buildReply(data, depth+1)
			out = append(out, v)
		}
		return out, data
	default:
		return redis.Error("ERR fuzz"), data
	}
}

func TestKindOfPush(t *testing.T) {
	tests := []struct {
		push      string
		kind      subKind
		subscribe bool
	}{
		{"subscribe", kindChannel, true},
		{"psubscribe", kindPattern, true},
		{"ssubscribe", kindShard, true},
		{"unsubscribe", kindChannel, false},
		{"punsubscribe", kindPattern, false},
		{"sunsubscribe", kindShard, false},
	}
	for _, tt := range tests {
		k, sub := kindOfPush(tt.push)
		assert.Equal(t, tt.kind, k, tt.push)
		assert.Equal(t, tt.subscribe, sub, tt.push)
		// The names the subscription sends and expects agree.
		if sub {
			assert.Equal(t, tt.push, k.subPush())
		} else {
			assert.Equal(t, tt.push, k.unsubPush())
		}
	}
}
