package shard_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/shard"
)

// A value of the wrong kind is reported with its field's path: in a
// one-line JSON file the line alone does not say which of several
// durations or numbers is wrong.
func TestReview4WrongValueNamesItsField(t *testing.T) {
	for _, tc := range []struct{ doc, field string }{
		{`{"shards": [{"addr": "127.0.0.1:6381"}], "pool": {"write_timeout": "3s", "read_timeout": 5}}`, "pool.read_timeout"},
		{`{"shards": [{"addr": "127.0.0.1:6381"}], "health": {"interval": "1s", "timeout": "soon"}}`, "health.timeout"},
		{`{"mode": "cluster", "seeds": ["127.0.0.1:7000"], "cluster": {"max_retry_wait": "2s", "refresh_interval": "10"}}`, "cluster.refresh_interval"},
		{`{"shards": [{"addr": "127.0.0.1:6381", "weight": "heavy"}]}`, "shards[0].weight"},
		{`{"shards": [{"addr": "127.0.0.1:6381"}], "pool": {"max_idle": 4, "max_active": "many"}}`, "pool.max_active"},
		{"shards: [{name: a, sentinel: {master: m}}]\nsentinel: {addrs: ['127.0.0.1:26379'], failover_wait: 2}\n", "sentinel.failover_wait"},
	} {
		_, err := shard.ParseConfig([]byte(tc.doc))
		if !errors.Is(err, shard.ErrBadConfig) || !strings.Contains(err.Error(), tc.field) {
			t.Errorf("ParseConfig(%s) = %v, want ErrBadConfig naming %s", tc.doc, err, tc.field)
		}
	}
}
