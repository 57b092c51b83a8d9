package pool

import (
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestReview15PipelinedStateCommandsAreNotHandedOn: a pipeline that
// sets connection state and then sets it back, the second command
// refused (a bad database index, a bad CLIENT TRACKING option), leaves
// the first one's state. The next caller's connection must be in
// database 0 and without client-side caching, as a fresh one is.
func TestReview15PipelinedStateCommandsAreNotHandedOn(t *testing.T) {
	srv := plainServer(t)
	tests := []struct {
		name string
		cmds [][]any
	}{
		{"SELECT 1, refused SELECT 0", [][]any{{"SELECT", 1}, {"SELECT", "zero"}}},
		{"SELECT 1, SELECT 0, refused SELECT 0", [][]any{{"SELECT", 1}, {"SELECT", 0}, {"SELECT", 1}, {"SELECT", 0, "x"}}},
		{"CLIENT TRACKING ON, refused OFF", [][]any{{"CLIENT", "TRACKING", "ON"}, {"CLIENT", "TRACKING", "OFF", "NOSUCHOPTION"}}},
		{"CLIENT TRACKING ON, OFF, ON, refused OFF", [][]any{
			{"CLIENT", "TRACKING", "ON"}, {"CLIENT", "TRACKING", "OFF"},
			{"CLIENT", "TRACKING", "ON", "BCAST"}, {"CLIENT", "TRACKING", "OFF", "NOSUCHOPTION"},
		}},
	}
	for _, b := range borrowers {
		for _, tt := range tests {
			t.Run(b.name+"/"+tt.name, func(t *testing.T) {
				set := newTestSet(t, Options{TestOnBorrow: Never})
				c, err := b.get(set, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				for _, cmd := range tt.cmds {
					if err := c.Send(cmd[0].(string), cmd[1:]...); err != nil {
						t.Fatal(err)
					}
				}
				replies, err := redis.Values(c.Do(""))
				if err != nil {
					t.Fatal(err)
				}
				if _, refused := replies[len(replies)-1].(redis.Error); !refused {
					t.Fatalf("replies %v: the last command was not refused", replies)
				}
				c.Close()

				next, err := b.get(set, srv.Addr)
				if err != nil {
					t.Fatal(err)
				}
				defer next.Close()
				info, err := redis.String(next.Do("CLIENT", "INFO"))
				if err != nil {
					t.Fatal(err)
				}
				for f := range strings.FieldsSeq(info) {
					if k, v, _ := strings.Cut(f, "="); k == "db" && v != "0" || k == "flags" && strings.Contains(v, "t") {
						t.Errorf("the next caller's connection has %s: the previous caller's state was handed on (%s)", f, info)
					}
				}
			})
		}
	}
}
