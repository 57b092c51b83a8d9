package ring

import (
	"errors"
	"testing"
)

// TestReview8UnspecifiedAddressIsTheLoopbackServer: a connection to
// 0.0.0.0 (or [::]) goes to the loopback address of its family, so
// "0.0.0.0:6379" next to "127.0.0.1:6379" named one server twice and the
// ring passed it as two shards.
func TestReview8UnspecifiedAddressIsTheLoopbackServer(t *testing.T) {
	tests := []struct {
		a, b string
		same bool
	}{
		{"0.0.0.0:6379", "127.0.0.1:6379", true},
		{"[::]:6379", "[::1]:6379", true},
		{"0.0.0.0:6379", "localhost:6379", true},
		{"[::ffff:0.0.0.0]:6379", "127.0.0.1:6379", true},
		{"[::]:6379", "localhost:6379", true},
		{"0.0.0.0:6379", "0.0.0.0:6380", false},
		{"[::]:6379", "127.0.0.1:6379", false},
		{"0.0.0.0:6379", "[::1]:6379", false},
		{"0.0.0.0:6379", "10.0.0.1:6379", false},
	}
	for _, tt := range tests {
		shards := []Shard{{Name: "a", Addr: tt.a, Weight: 1}, {Name: "b", Addr: tt.b, Weight: 1}}
		_, err := New(Config{Shards: shards})
		if got := errors.Is(err, ErrDuplicateShard); got != tt.same {
			t.Errorf("New with %q and %q: err = %v, want one server: %v", tt.a, tt.b, err, tt.same)
		}
		_, err = ParseShards(tt.a + " a," + tt.b + " b")
		if got := errors.Is(err, ErrDuplicateShard); got != tt.same {
			t.Errorf("ParseShards with %q and %q: err = %v, want one server: %v", tt.a, tt.b, err, tt.same)
		}
	}
}
