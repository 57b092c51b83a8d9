package sentinel

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// FuzzParseRole: a ROLE reply of each kind (master with its replicas,
// replica with its master, Sentinel with its masters) built from the
// fuzzer's fields reads back as those fields when they are valid, and
// fails with ErrBadReply when a host or port is not; a redis.Error reply
// stays matchable with errors.As.
func FuzzParseRole(f *testing.F) {
	f.Add(uint8(0), int64(42), "127.0.0.1", "6380", "connected", "::1", uint8(2))
	f.Add(uint8(1), int64(7), "10.0.0.1", "6379", "sync", "", uint8(0))
	f.Add(uint8(2), int64(0), "mymaster", "0", "", "other", uint8(3))
	f.Add(uint8(3), int64(-1), "", "", "", "", uint8(0))
	f.Add(uint8(0), int64(1), "h ost", "65536", "", "[::1]", uint8(1))
	f.Fuzz(func(t *testing.T, kind uint8, offset int64, host, port, state, word string, n uint8) {
		// A port is one to five ASCII digits, of value 1 to 65535.
		validPort := func(p string) (int, bool) {
			if p == "" || len(p) > 5 {
				return 0, false
			}
			v := 0
			for _, c := range []byte(p) {
				if c < '0' || c > '9' {
					return 0, false
				}
				v = v*10 + int(c-'0')
			}
			return v, v >= 1 && v <= 65535
		}
		var reply any
		switch kind % 4 {
		case 0: // master: n replicas, alternately host and word as hosts
			var list []any
			var want []string
			valid := true
			for i := range int(n % 4) {
				h := host
				if i%2 == 1 {
					h = word
				}
				list = append(list, []any{[]byte(h), []byte(port), []byte("0")})
				p, ok := validPort(port)
				valid = valid && ok && usableHost(h)
				want = append(want, net.JoinHostPort(h, strconv.Itoa(p)))
			}
			reply = []any{[]byte("master"), offset, list}
			role, err := ParseRole(reply)
			if !valid {
				if !errors.Is(err, ErrBadReply) {
					t.Fatalf("%q: %+v, %v; want ErrBadReply", reply, role, err)
				}
				return
			}
			if err != nil || role.Kind != RoleMaster || role.Offset != offset || !slices.Equal(role.Replicas, want) {
				t.Fatalf("%q: %+v, %v; want master at %d with %q", reply, role, err, offset, want)
			}
		case 1: // replica
			reply = []any{[]byte("slave"), []byte(host), int64(len(port)*1000 + len(host)), []byte(state), offset}
			p := len(port)*1000 + len(host)
			role, err := ParseRole(reply)
			if !usableHost(host) || p < 1 || p > 65535 {
				if !errors.Is(err, ErrBadReply) {
					t.Fatalf("%q: %+v, %v; want ErrBadReply", reply, role, err)
				}
				return
			}
			want := net.JoinHostPort(host, strconv.Itoa(p))
			if err != nil || role.Kind != RoleReplica || role.MasterAddr != want || role.State != state || role.Offset != offset {
				t.Fatalf("%q: %+v, %v; want replica of %s, %q, %d", reply, role, err, want, state, offset)
			}
			if _, _, err := net.SplitHostPort(role.MasterAddr); err != nil {
				t.Fatalf("%q: master address %q: %v", reply, role.MasterAddr, err)
			}
		case 2: // sentinel
			names := []any{}
			var want []string
			for i := range int(n % 4) {
				w := host
				if i%2 == 1 {
					w = word
				}
				names = append(names, w)
				want = append(want, w)
			}
			reply = []any{"sentinel", names}
			role, err := ParseRole(reply)
			if err != nil || role.Kind != RoleSentinel || !slices.Equal(role.Masters, want) {
				t.Fatalf("%q: %+v, %v; want a Sentinel of %q", reply, role, err, want)
			}
		default: // an error reply, or a word that is no role
			var err error
			if n%2 == 0 {
				_, err = ParseRole(redis.Error("ERR " + word))
				var re redis.Error
				if !errors.As(err, &re) || string(re) != "ERR "+word {
					t.Fatalf("error reply %q gave %v", word, err)
				}
				return
			}
			if word == RoleMaster || word == RoleReplica || word == RoleSentinel {
				return
			}
			_, err = ParseRole([]any{[]byte(word), offset})
			if !errors.Is(err, ErrBadReply) {
				t.Fatalf("role %q gave %v, want ErrBadReply", word, err)
			}
		}
	})
}
