package sentinel

import (
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
)

func b(s string) []byte { return []byte(s) }

func TestParseMasterAddr(t *testing.T) {
	tests := []struct {
		name  string
		reply any
		want  string
		err   error
	}{
		{"ipv4", []any{b("127.0.0.1"), b("6379")}, "127.0.0.1:6379", nil},
		{"ipv6", []any{b("::1"), b("6380")}, "[::1]:6380", nil},
		{"hostname", []any{b("redis-a.example"), b("1")}, "redis-a.example:1", nil},
		{"unknown master", nil, "", ErrUnknownMaster},
		{"one element", []any{b("127.0.0.1")}, "", ErrBadReply},
		{"port zero", []any{b("127.0.0.1"), b("0")}, "", ErrBadReply},
		{"port too big", []any{b("127.0.0.1"), b("65536")}, "", ErrBadReply},
		{"port signed", []any{b("127.0.0.1"), b("+1")}, "", ErrBadReply},
		{"empty host", []any{b(""), b("6379")}, "", ErrBadReply},
		{"host with space", []any{b("a b"), b("6379")}, "", ErrBadReply},
		{"integer reply", int64(3), "", ErrBadReply},
		{"nested", []any{[]any{}, b("1")}, "", ErrBadReply},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseMasterAddr(tt.reply)
			if !errors.Is(err, tt.err) || (tt.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tt.err)
			}
			if got != tt.want {
				t.Errorf("got %q, want %q", got, tt.want)
			}
		})
	}
	_, err := ParseMasterAddr(redis.Error("ERR unknown"))
	if err == nil || errors.Is(err, ErrBadReply) {
		t.Errorf("error reply: %v", err)
	}
}

func TestParseRole(t *testing.T) {
	tests := []struct {
		name  string
		reply any
		want  Role
		bad   bool
	}{
		{"master", []any{b("master"), int64(3129659), []any{
			[]any{b("127.0.0.1"), b("9001"), b("3129242")},
			[]any{b("127.0.0.1"), b("9002"), b("3129543")},
		}}, Role{Kind: RoleMaster, Offset: 3129659, Replicas: []string{"127.0.0.1:9001", "127.0.0.1:9002"}}, false},
		{"master alone", []any{b("master"), int64(0), []any{}}, Role{Kind: RoleMaster}, false},
		{"replica", []any{b("slave"), b("127.0.0.1"), int64(9000), b("connected"), int64(3167038)},
			Role{Kind: RoleReplica, MasterAddr: "127.0.0.1:9000", State: "connected", Offset: 3167038}, false},
		{"sentinel", []any{b("sentinel"), []any{b("resque-master"), b("html-fragments-master")}},
			Role{Kind: RoleSentinel, Masters: []string{"resque-master", "html-fragments-master"}}, false},
		{"unknown role", []any{b("leader")}, Role{}, true},
		{"empty", []any{}, Role{}, true},
		{"master short", []any{b("master"), int64(1)}, Role{}, true},
		{"replica port text bad", []any{b("slave"), b("h"), b("x"), b("connected"), int64(1)}, Role{}, true},
		{"replica short", []any{b("slave"), b("h"), int64(1)}, Role{}, true},
		{"master bad entry", []any{b("master"), int64(1), []any{int64(4)}}, Role{}, true},
		{"not array", b("master"), Role{}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseRole(tt.reply)
			if tt.bad {
				if !errors.Is(err, ErrBadReply) {
					t.Fatalf("err = %v, want ErrBadReply", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got.Kind != tt.want.Kind || got.Offset != tt.want.Offset || got.MasterAddr != tt.want.MasterAddr ||
				got.State != tt.want.State || len(got.Replicas) != len(tt.want.Replicas) || len(got.Masters) != len(tt.want.Masters) {
				t.Fatalf("got %+v, want %+v", got, tt.want)
			}
			for i := range got.Replicas {
				if got.Replicas[i] != tt.want.Replicas[i] {
					t.Errorf("replica %d = %q, want %q", i, got.Replicas[i], tt.want.Replicas[i])
				}
			}
		})
	}
}

func TestParseReplicas(t *testing.T) {
	entry := func(kv ...string) []any {
		out := make([]any, len(kv))
		for i, s := range kv {
			out[i] = b(s)
		}
		return out
	}
	reply := []any{
		entry("name", "127.0.0.1:7001", "ip", "127.0.0.1", "port", "7001", "flags", "slave",
			"master-link-status", "ok", "master-host", "127.0.0.1", "master-port", "7000", "slave-repl-offset", "42"),
		entry("name", "127.0.0.1:7002", "ip", "127.0.0.1", "port", "7002", "flags", "slave,s_down,disconnected",
			"master-link-status", "err"),
	}
	got, err := ParseReplicas(reply)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 {
		t.Fatalf("%d replicas, want 2", len(got))
	}
	if got[0].Addr != "127.0.0.1:7001" || !got[0].Healthy() || got[0].MasterAddr != "127.0.0.1:7000" || got[0].Offset != 42 {
		t.Errorf("first: %+v", got[0])
	}
	if got[1].Addr != "127.0.0.1:7002" || got[1].Healthy() {
		t.Errorf("second: %+v", got[1])
	}
	if _, err := ParseReplicas(redis.Error("ERR No such master with that name")); !errors.Is(err, ErrUnknownMaster) {
		t.Errorf("unknown master: %v", err)
	}
	bad := []any{
		[]any{entry("ip", "127.0.0.1")},              // no port
		[]any{entry("ip", "127.0.0.1", "port")},      // odd
		[]any{entry("ip", "127.0.0.1", "port", "0")}, // bad port
		[]any{[]any{b("ip"), int64(1)}},              // not text
		[]any{entry("port", "1", "slave-repl-offset", "x", "ip", "h")},
		int64(1),
	}
	for i, r := range bad {
		if _, err := ParseReplicas(r); !errors.Is(err, ErrBadReply) {
			t.Errorf("bad %d: err = %v, want ErrBadReply", i, err)
		}
	}
}

func TestParseSwitchMaster(t *testing.T) {
	got, err := ParseSwitchMaster("master-1 127.0.0.1 7000 127.0.0.1 7001")
	if err != nil {
		t.Fatal(err)
	}
	if got != (SwitchMaster{Master: "master-1", OldAddr: "127.0.0.1:7000", NewAddr: "127.0.0.1:7001"}) {
		t.Errorf("got %+v", got)
	}
	for _, bad := range []string{"", "a b c d", "a 1.1.1.1 1 2.2.2.2 0", "a  1 b 2", "a b 1 c 2 d", "a\n b 1 c 2"} {
		if _, err := ParseSwitchMaster(bad); !errors.Is(err, ErrBadReply) {
			t.Errorf("%q: err = %v, want ErrBadReply", bad, err)
		}
	}
}
