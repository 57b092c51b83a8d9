package shard_test

import (
	"testing"

	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// A twemproxy pool's hash_tag may be any two characters (nc_conf.c
// conf_set_hashtag only checks the length), "++" and "&&" among them. In a
// URL query '+' reads as a space and '&' separates options: tag=++ gave
// the rule "  " (two spaces) and tag=&& an empty tag, that is the
// algorithm's default rule, both placing keys elsewhere than the pool
// does, without an error. Both are refused, with the percent-encoding that
// says what was meant; the encoded forms give the pairs.
func TestReview14URLTagDelimitersTheQueryTakes(t *testing.T) {
	const base = "redis-ring://127.0.0.1:6379,127.0.0.1:6380?hash=ketama&"
	for q, hint := range map[string]string{
		"tag=++":           "%2B",
		"tag=&&":           "%26",
		"tag=":             "leave the option out",
		"tag=%20%20":       "%2B",
		"tag=&&&names=a,b": "%26",
	} {
		_, err := shard.ParseURL(base + q)
		require.ErrorIs(t, err, shard.ErrBadConfig, q)
		assert.Contains(t, err.Error(), "tag", q)
		assert.Contains(t, err.Error(), hint, q)
	}
	for q, want := range map[string]string{
		"tag=%2B%2B": "++",
		"tag=%26%26": "&&",
		"tag=$$":     "$$",
		"tag={}":     "{}",
		"tag=::":     "::",
		"tag=none":   "none",
	} {
		cfg, err := shard.ParseURL(base + q)
		require.NoError(t, err, q)
		assert.Equal(t, want, cfg.Tag, q)
		assert.Equal(t, want, cfg.RingConfig().Tag, q)
	}
}
