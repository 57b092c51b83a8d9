package addrkey

import (
	"slices"
	"testing"
)

func TestOf(t *testing.T) {
	tests := []struct {
		addr string
		want []string
	}{
		{"127.0.0.1:6379", []string{"127.0.0.1|6379"}},
		{"[::ffff:127.0.0.1]:6379", []string{"127.0.0.1|6379"}},
		{"[0:0::1]:6379", []string{"::1|6379"}},
		{"[2001:DB8::1]:1", []string{"2001:db8::1|1"}},
		{"0.0.0.0:6379", []string{"0.0.0.0|6379", "127.0.0.1|6379"}},
		{"[::]:6379", []string{"::|6379", "::1|6379"}},
		{"LocalHost.:6379", []string{"127.0.0.1|6379", "::1|6379"}},
		{"Redis-1.Example.:6379", []string{"redis-1.example|6379"}},
		{"no-port", nil},
		{"", nil},
	}
	for _, tt := range tests {
		if got := Of(tt.addr); !slices.Equal(got, tt.want) {
			t.Errorf("Of(%q) = %q, want %q", tt.addr, got, tt.want)
		}
	}
}

func TestRedact(t *testing.T) {
	tests := []struct{ in, want string }{
		{"app:pw@127.0.0.1:6379", "xxxxx@127.0.0.1:6379"},
		{"pw@host:1 name", "xxxxx@host:1 name"},
		{"a@b@host:1", "xxxxx@host:1"},
		{"127.0.0.1:6379", "127.0.0.1:6379"},
		{"", ""},
	}
	for _, tt := range tests {
		if got := Redact(tt.in); got != tt.want {
			t.Errorf("Redact(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
