package sentinel

import (
	"errors"
	"net"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseReplicasFields: a SENTINEL REPLICAS entry built from the
// fuzzer's field values, in any order and among unknown fields, reads
// back as those values when its ip and port are usable, and fails with
// ErrBadReply when they are not; the master's address is kept only when
// both its host and port are usable.
func FuzzParseReplicasFields(f *testing.F) {
	f.Add("127.0.0.1", "6380", "slave", "ok", "127.0.0.1", "6379", "1234", uint8(0))
	f.Add("::1", "6380", "slave,s_down,disconnected", "err", "?", "0", "0", uint8(3))
	f.Add("", "6380", "slave", "ok", "h", "6379", "x", uint8(1))
	f.Add("h", "65536", "", "", "", "", "", uint8(2))
	f.Fuzz(func(t *testing.T, ip, port, flags, link, mhost, mport, offset string, order uint8) {
		fields := [][2]string{
			{"name", ip + ":" + port}, {"ip", ip}, {"port", port}, {"runid", "abc"}, {"flags", flags},
			{"master-link-status", link}, {"master-host", mhost}, {"master-port", mport},
			{"slave-repl-offset", offset}, {"slave-priority", "100"},
		}
		// Rotate the fields: Sentinel's order is no promise.
		k := int(order) % len(fields)
		fields = append(fields[k:], fields[:k]...)
		entry := make([]any, 0, 2*len(fields))
		for _, fv := range fields {
			entry = append(entry, []byte(fv[0]), []byte(fv[1]))
		}
		reps, err := ParseReplicas([]any{entry})

		digits := func(s string) (int, bool) {
			if s == "" || len(s) > 5 {
				return 0, false
			}
			n := 0
			for _, c := range []byte(s) {
				if c < '0' || c > '9' {
					return 0, false
				}
				n = n*10 + int(c-'0')
			}
			return n, n >= 1 && n <= 65535
		}
		p, portOK := digits(port)
		off, offErr := strconv.ParseInt(offset, 10, 64)
		if !portOK || offErr != nil || !usableHost(ip) {
			if !errors.Is(err, ErrBadReply) {
				t.Fatalf("%q: %+v, %v; want ErrBadReply", entry, reps, err)
			}
			return
		}
		if err != nil || len(reps) != 1 {
			t.Fatalf("%q: %+v, %v", entry, reps, err)
		}
		r := reps[0]
		if r.Addr != net.JoinHostPort(ip, strconv.Itoa(p)) || r.Offset != off || r.MasterLinkOK != (link == "ok") ||
			!slices.Equal(r.Flags, strings.Split(flags, ",")) {
			t.Fatalf("%q: read as %+v", entry, r)
		}
		if _, _, err := net.SplitHostPort(r.Addr); err != nil {
			t.Fatalf("%q: address %q: %v", entry, r.Addr, err)
		}
		wantMaster := ""
		if mp, ok := digits(mport); ok && usableHost(mhost) && mhost != "?" {
			wantMaster = net.JoinHostPort(mhost, strconv.Itoa(mp))
		}
		if r.MasterAddr != wantMaster {
			t.Fatalf("%q: master %q, want %q", entry, r.MasterAddr, wantMaster)
		}
	})
}

// usableHost is what a host must be to go into an address: not empty,
// without white space, control characters, brackets, '/' or '@'.
func usableHost(h string) bool {
	return h != "" && !strings.ContainsFunc(h, func(r rune) bool {
		return r <= ' ' || r == 0x7f || strings.ContainsRune("[]/@", r)
	})
}
