package command

import (
	"reflect"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// TestFromCommandInfoMatchesTheTable learns every command of a live server
// from its COMMAND INFO entry and compares the result with the generated
// table, field by field: what run-time learning builds is what the
// generator wrote for the same server.
func TestFromCommandInfoMatchesTheTable(t *testing.T) {
	c := dialServer(t)
	reply, err := redis.Values(c.Do("COMMAND"))
	if err != nil {
		t.Fatal(err)
	}
	if len(reply) < 200 {
		t.Fatalf("COMMAND listed %d commands", len(reply))
	}
	compared := 0
	for _, entry := range reply {
		info, err := FromCommandInfo(entry)
		if err != nil {
			t.Fatal(err)
		}
		want := Lookup(info.Name)
		if want == nil {
			t.Errorf("%s: not in the table (server newer than %s?)", info.Name, RedisVersion)
			continue
		}
		compared++
		// Hand-written rules are funcs, which DeepEqual cannot compare:
		// both must have one or neither.
		if (info.rule == nil) != (want.rule == nil) {
			t.Errorf("%s: learned rule %v, table rule %v", info.Name, info.rule != nil, want.rule != nil)
		}
		got, exp := *info, *want
		got.rule, exp.rule = nil, nil
		if !reflect.DeepEqual(&got, &exp) {
			t.Errorf("%s learned as\n%+v\ntable has\n%+v", info.Name, info, want)
		}
	}
	if compared != len(All()) {
		t.Errorf("compared %d commands, the table has %d", compared, len(All()))
	}
}

func TestFromCommandInfoRejectsMalformedEntries(t *testing.T) {
	for _, entry := range []any{nil, "get", []any{[]byte("get"), int64(2)}, []any{}} {
		if _, err := FromCommandInfo(entry); err == nil || !strings.HasPrefix(err.Error(), "shardis: ") {
			t.Errorf("%v: err = %v", entry, err)
		}
	}
}
