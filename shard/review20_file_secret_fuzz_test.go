package shard_test

import (
	"encoding/json"
	"errors"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/shardis/shardis/shard"
)

// review20SecretPlaces are the places of a config file where a secret is
// written, right or by mistake: %s is the secret as a YAML double-quoted
// string, %u the secret percent-encoded for a URL's user info.
var review20SecretPlaces = []string{
	"shards: [{addr: '127.0.0.1:6379'}]\npool: {password: %s}\n",
	"shards: [{addr: '127.0.0.1:6379'}]\npool: {password_env: %s}\n",
	"shards: [{addr: '127.0.0.1:6379'}]\npool: {password: !!int %s}\n",
	"shards: [{addr: '127.0.0.1:6379'}]\npool: {tls: {cert_file: /etc/hosts, key_file: %p}}\n",
	"shards: [{addr: '127.0.0.1:6379'}]\npool: {tls: {cert_file: %p, key_file: /etc/hosts}}\n",
	"shards: [{name: a}]\nsentinel: {addrs: ['127.0.0.1:26379'], password: %s}\n",
	"shards: [{name: a}]\nsentinel: {addrs: ['127.0.0.1:26379'], password_env: %s}\n",
	"shards: [{name: a, sentinel: {master: m, addrs: ['127.0.0.1:26379'], password: %s}}]\n",
	"shards: [{name: a, sentinel: {master: m, addrs: ['127.0.0.1:26379'], tls: {cert_file: /etc/hosts, key_file: %p}}}]\n",
	"url: 'redis-ring://u:%u@127.0.0.1:6379'\n",
	"url: 'redis-ring//u:%u@127.0.0.1:6379?from=redis-ring://127.0.0.1:6380'\n",
	"shards: [{addr: '127.0.0.1:6379'}]\nmigration: {from: 'redis-ring://u:%u@127.0.0.1:6380'}\n",
	"shards: [{addr: '127.0.0.1:6379'}]\nmigration: {from_file: 'redis-ring://u:%u@127.0.0.1:6380'}\n",
	"shards: [{addr: '127.0.0.1:6379'}]\nmigration: {from: 'redis-ring+sentinel://127.0.0.1:26379?shards=a&sentinel_password=%u'}\n",
}

// FuzzReview20FileSecretNotInError writes a secret chosen by the fuzzer in
// each place of a config file that holds one (or where one is written by
// mistake: the password itself as password_env, PEM contents as a key
// file's path, a URL as migration.from_file) and adds more YAML after it:
// whatever the error, it matches ErrBadConfig and never shows the secret.
// A secret that the rest of the document spells is not checked, nor one
// written as an environment variable's name in password_env (which is
// quoted, as it is taken for the name it looks like).
func FuzzReview20FileSecretNotInError(f *testing.F) {
	f.Add(uint8(0), "Qx7-s3cr3t", "")
	f.Add(uint8(1), "hunter2 pw", "health: {interval: x}\n")
	f.Add(uint8(3), "MIIEvQ-key", "pool: {db: 1}\n")
	f.Add(uint8(9), "p@ss?w#rd", "seeds: [x]\n")
	f.Add(uint8(10), "pa:ss/wd", "")
	f.Add(uint8(12), "ftp-secret", "pool: {password: x}\n")
	f.Add(uint8(13), "s3nt%zz", "")
	f.Fuzz(func(t *testing.T, place uint8, secret, more string) {
		if len(secret) < 4 || !utf8.ValidString(secret) {
			return
		}
		tmpl := review20SecretPlaces[int(place)%len(review20SecretPlaces)]
		if strings.Contains(tmpl, "password_env") && strings.Trim(secret, "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_") == "" {
			return
		}
		quoted, _ := json.Marshal(secret)
		pem, _ := json.Marshal("-----BEGIN PRIVATE KEY-----\n" + secret + "\n-----END PRIVATE KEY-----\n")
		doc := strings.NewReplacer("%s", string(quoted), "%p", string(pem), "%u", url.QueryEscape(secret)).Replace(tmpl) + more
		for _, form := range []string{secret, strconv.Quote(secret)[1 : len(strconv.Quote(secret))-1]} {
			if strings.Count(doc, form) > 1 || strings.Contains(more, form) || strings.Contains(tmpl, form) {
				return
			}
		}
		_, err := shard.ParseConfig([]byte(doc))
		if err == nil {
			return
		}
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Fatalf("%q: error %v does not match ErrBadConfig", doc, err)
		}
		msg := err.Error()
		for _, form := range []string{secret, strconv.Quote(secret)[1 : len(strconv.Quote(secret))-1], url.QueryEscape(secret)} {
			if strings.Contains(msg, form) && !strings.Contains(strings.Replace(doc, form, "", 1), form) {
				t.Fatalf("%q: error %q shows the secret", doc, msg)
			}
		}
	})
}
