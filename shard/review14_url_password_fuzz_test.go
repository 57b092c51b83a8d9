package shard_test

import (
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// FuzzReview14URLPasswordNotInError: a URL's password, chosen by the
// fuzzer and written in the user info or as sentinel_password, raw or
// percent-encoded, never shows in ParseURL's error, nor in a config file's
// error when the URL is given there; every error matches ErrBadConfig.
// A password that the rest of the input spells as well is not checked:
// the error may quote that other part.
func FuzzReview14URLPasswordNotInError(f *testing.F) {
	f.Add(uint8(0), "u", "s3cr3t-pw", "127.0.0.1:6379?names=a", uint8(0), uint8(0))
	f.Add(uint8(1), "", "p?ss@word", "127.0.0.1:7000", uint8(0), uint8(0))
	f.Add(uint8(2), "u", "p%zzword", "127.0.0.1:26379?shards=a", uint8(1), uint8(0))
	f.Add(uint8(3), "u", "pw#frag", "[::1]:26379?shards=a=m", uint8(1), uint8(2))
	f.Add(uint8(0), "u", "pw/db", "h:1/2", uint8(0), uint8(1))
	f.Add(uint8(4), "u", "pa:ss", "h:0", uint8(0), uint8(3))
	schemes := []string{"redis-ring", "redis-cluster", "redis-ring+sentinel", "rediss-ring+sentinel", "rediss-cluster", "REDIS-RING"}
	f.Fuzz(func(t *testing.T, scheme uint8, user, pw, rest string, where, enc uint8) {
		if len(pw) < 4 {
			return
		}
		var written string
		switch enc % 4 {
		case 0:
			written = pw
		case 1:
			written = url.PathEscape(pw)
		case 2:
			written = url.QueryEscape(pw)
		default:
			written = strings.ReplaceAll(pw, "%", "%25")
		}
		s := schemes[int(scheme)%len(schemes)]
		var raw string
		if where%2 == 0 {
			raw = s + "://" + user + ":" + written + "@" + rest
		} else {
			sep := "?"
			if strings.Contains(rest, "?") {
				sep = "&"
			}
			raw = s + "://" + rest + sep + "sentinel_password=" + written
		}
		// Only a password no other part of the input spells is checked.
		others := strings.Replace(raw, written, "\x00", 1)
		for _, form := range []string{pw, written, url.PathEscape(pw), url.QueryEscape(pw), strconv.Quote(pw)[1 : len(strconv.Quote(pw))-1]} {
			if strings.Contains(others, form) || strings.Contains(strconv.Quote(others), form) {
				return
			}
		}
		check := func(what string, err error) {
			t.Helper()
			if err == nil {
				return
			}
			msg := err.Error()
			for _, form := range []string{pw, written, strconv.Quote(pw)[1 : len(strconv.Quote(pw))-1]} {
				if len(form) >= 4 && strings.Contains(msg, form) {
					t.Fatalf("%s %q: error %q shows the password (%q)", what, raw, msg, form)
				}
			}
			if !errors.Is(err, shard.ErrBadConfig) {
				t.Fatalf("%s %q: error %q does not match ErrBadConfig", what, raw, msg)
			}
			if !strings.HasPrefix(msg, "shardis: ") {
				t.Fatalf("%s %q: error %q without the shardis prefix", what, raw, msg)
			}
		}
		cfg, err := shard.ParseURL(raw)
		check("ParseURL", err)
		if err == nil {
			if s := cfg.String(); strings.Contains(s, pw) {
				t.Fatalf("%q: String() %q shows the password", raw, s)
			}
		}
		_, err = shard.ParseConfig([]byte("url: " + strconv.Quote(raw) + "\n"))
		check("ParseConfig url", err)
		_, err = shard.ParseConfig([]byte("url: 'redis-ring://127.0.0.1:1'\nmigration:\n  from: " + strconv.Quote(raw) + "\n"))
		check("ParseConfig migration.from", err)
	})
}
