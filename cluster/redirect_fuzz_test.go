package cluster

import (
	"net"
	"strconv"
	"testing"
)

func FuzzParseRedirect(f *testing.F) {
	for _, seed := range [][2]string{
		{"MOVED 3999 127.0.0.1:6381", "127.0.0.1:6379"},
		{"ASK 3999 :6380", "10.0.0.1:6379"},
		{"-MOVED 3999 ::1:6380", ""},
		{"MOVED 3999 [::1]:6380", "[::1]:1"},
		{"ASK 16383 node-a.example:7000", "x"},
		{"MOVED 3999 ?:6380", "127.0.0.1:1"},
		{"TRYAGAIN Multiple keys request during rehashing of slot", ""},
		{"MOVED 1 127.0.0.1:06379", ""},
	} {
		f.Add(seed[0], seed[1])
	}
	f.Fuzz(func(t *testing.T, msg, asked string) {
		r, ok := ParseRedirect(msg, asked)
		code := ErrorCode(msg)
		if !ok {
			if r != (Redirect{}) {
				t.Fatalf("not ok but got %+v", r)
			}
			return
		}
		if r.Kind.String() != code {
			t.Fatalf("kind %v but error code %q", r.Kind, code)
		}
		if r.Slot < 0 || r.Slot >= SlotCount {
			t.Fatalf("slot %d out of range", r.Slot)
		}
		host, port, err := net.SplitHostPort(r.Addr)
		if err != nil || host == "" {
			t.Fatalf("address %q is not host:port: %v", r.Addr, err)
		}
		if p, err := strconv.Atoi(port); err != nil || p < 1 || p > 65535 || strconv.Itoa(p) != port {
			t.Fatalf("address %q has a bad port", r.Addr)
		}
		if net.JoinHostPort(host, port) != r.Addr {
			t.Fatalf("address %q is not in JoinHostPort form", r.Addr)
		}
	})
}
