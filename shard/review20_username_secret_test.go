package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// "user:password" written whole as the user name (with no password set,
// or with white space in it) was quoted by the error that refused it,
// the password with it.
func TestReview20UserPasswordAsUsernameNotQuoted(t *testing.T) {
	const secret = "Us3r-s3cr3t-20"
	one := "shards: [{addr: '127.0.0.1:6379'}]\n"
	docs := []string{
		one + "pool: {username: 'app:" + secret + "'}\n",
		one + "pool: {username: 'app :" + secret + "', password: x}\n",
		"shards: [{name: a, sentinel: {master: m, addrs: ['127.0.0.1:26379'], username: 'w:" + secret + "'}}]\n",
		"shards: [{name: a}]\nsentinel: {addrs: ['127.0.0.1:26379'], username: 'w:" + secret + "'}\n",
	}
	var errs []error
	for _, d := range docs {
		_, err := shard.ParseConfig([]byte(d))
		errs = append(errs, err)
	}
	cfg := shard.Config{Shards: []ring.Shard{{Addr: "127.0.0.1:6379", Weight: 1}}, Pool: pool.Options{Username: "app:" + secret}}
	errs = append(errs, cfg.Validate())
	for i, err := range errs {
		if err == nil {
			t.Fatalf("case %d: accepted", i)
		}
		if !errors.Is(err, shard.ErrBadConfig) {
			t.Errorf("case %d: %v does not match ErrBadConfig", i, err)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("case %d: error shows the password: %v", i, err)
		}
	}
}
