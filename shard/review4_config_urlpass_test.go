package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// An unencoded '?' in a URL password ends the address part early. When
// what comes before it still looks like host:port (user "default",
// password "1234?..."), the rest of the password became an option, and
// the error quoted it.
func TestReview4URLQuestionMarkPasswordNeverQuoted(t *testing.T) {
	for _, tc := range []struct{ raw, secret string }{
		{"redis-ring://default:1234?abcd@127.0.0.1:6379", "abcd"},
		{"redis-ring://default:1234?abcd@127.0.0.1:6379?db=1", "abcd"},
		{"redis-cluster://default:1234?ab=cd@127.0.0.1:7000", "cd"},
		{"redis-ring://default:1234?db=zz9@127.0.0.1:6379", "zz9"},
		{"redis-ring://default:1234?wait=nope@127.0.0.1:6379", "nope"},
	} {
		_, err := shard.ParseURL(tc.raw)
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("ParseURL(%q) = %v, want ErrBadConfig", tc.raw, err)
			continue
		}
		if strings.Contains(err.Error(), tc.secret) {
			t.Errorf("ParseURL(%q) error %q shows the part of the password after '?'", tc.raw, err)
		}
		if !strings.Contains(err.Error(), "%3F") {
			t.Errorf("ParseURL(%q) error %q does not say to encode '?' as %%3F", tc.raw, err)
		}
	}
	// An '@' in the query of a URL without credentials is not taken for a
	// password: a client name may hold one.
	cfg, err := shard.ParseURL("redis-ring://127.0.0.1:6379?client_name=svc@host")
	if err != nil || cfg.Pool.ClientName != "svc@host" {
		t.Fatalf("client_name with '@': %v, %q", err, cfg.Pool.ClientName)
	}
	// A misspelt option is still named when nothing in it looks like a password.
	if _, err := shard.ParseURL("redis-ring://127.0.0.1:6379?max_idel=3"); err == nil || !strings.Contains(err.Error(), `"max_idel"`) {
		t.Fatalf("misspelt option: %v, want it named", err)
	}
}
