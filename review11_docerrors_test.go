package shardis_test

import (
	"os"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// TestDocConfigErrorMessages makes each mistake of the "Typical messages"
// table of docs/config.md and checks that the error reads as the table
// says: the message is written here once, and must be both in the table
// and in the error, so neither can change alone.
func TestDocConfigErrorMessages(t *testing.T) {
	doc, err := os.ReadFile("docs/config.md")
	if err != nil {
		t.Fatal(err)
	}
	t.Setenv("REDIS_PASSWORD", "set")
	t.Setenv("REDIS_EMPTY_FOR_DOC_TEST", "")
	file := func(s string) func() error {
		return func() error { _, err := shard.ParseConfig([]byte(s)); return err }
	}
	url := func(s string) func() error {
		return func() error { _, err := shard.ParseURL(s); return err }
	}
	const one = "shards: [{addr: \"10.0.0.1:6379\"}]\n"
	for _, tt := range []struct {
		mistake string
		make    func() error
		msg     string // as docs/config.md gives it, after "shardis: bad config: "
	}{
		{"misspelt field", file("shards:\n  - {addr: \"10.0.0.1:6379\"}\nhealth:\n  failurelimit: 3\n"),
			"unknown field health.failurelimit (known: interval, failure_limit, timeout, auto_eject)"},
		{"misspelt field in a list", file("shards:\n  - {addr: \"10.0.0.1:6379\", wieght: 2}\n"),
			"line 2: unknown field shards[0].wieght (known: addr, name, weight, sentinel)"},
		{"a second YAML document", file("shards:\n  - {addr: \"10.0.0.1:6379\"}\n---\nhash: jedis\n"),
			"line 4: a second YAML document (after ---): put every setting in one document"},
		{"empty file", file(""), "the file is empty (want YAML or JSON naming shards, seeds or a url)"},
		{"broken JSON", file("{\"shards\": [{\"addr\": \"10.0.0.1:6379\"}],\n\"pool\": {\n\"max_idle\": 1\n]\n}"),
			"JSON: line 4: invalid character ']' after object key:value pair"},
		{"wrong type: int", file("pool: {max_idle: many}\n" + one), `line 1: pool.max_idle: "many" is not a valid int`},
		{"wrong type: duration", file(one + "pool: {read_timeout: 5}\n"),
			`line 2: pool.read_timeout: "5" is not a duration such as 500ms or 3s`},
		{"wrong type: fraction", file("shards: [{addr: \"10.0.0.1:6379\", weight: 1.5}]\n"),
			`line 1: shards[0].weight: "1.5" is not a whole number`},
		{"wrong type: octal", file("shards: [{addr: \"10.0.0.1:6379\", weight: 010}]\n"),
			`"010" has a leading zero, which YAML reads as octal`},
		{"weight 0", file("shards: [{addr: \"10.0.0.1:6379\", weight: 0}]\n"),
			"shard 0 (10.0.0.1:6379) has weight 0: weights are 1 or more ("},
		{"same server twice", file("shards: [{addr: \"localhost:7431\"}, {addr: \"127.0.0.1:7431\"}]\n"),
			"shards 0 (localhost:7431) and 1 (127.0.0.1:7431) are the same server"},
		{"a setting the mode ignores", file("mode: cluster\nseeds: [\"10.0.0.1:7000\"]\nhash: jedis\n"),
			"hash, key_hash and tag are for ring mode only"},
		{"both password sources", file(one + "pool: {password: x, password_env: REDIS_PASSWORD}\n"),
			"pool: give password or password_env, not both"},
		{"password variable unset", file(one + "pool: {password_env: REDIS_PASSWORD_NEVER_SET_FOR_DOC_TEST}\n"),
			"which is not set"},
		{"password variable empty", file(one + "pool: {password_env: REDIS_EMPTY_FOR_DOC_TEST}\n"),
			"which is empty"},
		{"database as a URL path", url("redis-ring://h:6379/2"),
			"URL has a path after its hosts: a redis-ring or redis-cluster URL names the database with the db option (?db=2), not as a path (/2)"},
		{"? in a URL password", url("redis-ring://u:p?q@h:6379"),
			"URL address is not host:port (a '?' in a user name or password must be percent-encoded as %3F)"},
	} {
		if !strings.Contains(string(doc), tt.msg) {
			t.Errorf("%s: docs/config.md does not show %q", tt.mistake, tt.msg)
		}
		err := tt.make()
		if err == nil {
			t.Errorf("%s: no error", tt.mistake)
			continue
		}
		got, ok := strings.CutPrefix(err.Error(), "shardis: bad config: ")
		if !ok || strings.Contains(got, "shardis: bad config: ") {
			t.Errorf("%s: %q does not start with \"shardis: bad config: \" once", tt.mistake, err)
		}
		if !strings.Contains(got, tt.msg) {
			t.Errorf("%s: the error reads %q, the docs say %q", tt.mistake, got, tt.msg)
		}
	}
}
