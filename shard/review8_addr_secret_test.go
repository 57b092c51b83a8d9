package shard_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

// TestReview8CredentialsInAnAddressNeverReachAnError: an address given
// with credentials in it ("app:s3cret@host:port", "s3cret@host:port"), a
// common slip when copying a URL's userinfo into a shard list, is refused
// with ErrBadConfig, and the error never quotes the password.
func TestReview8CredentialsInAnAddressNeverReachAnError(t *testing.T) {
	const secret = "s3cretPW"
	addrs := []string{
		"app:" + secret + "@127.0.0.1:6379",
		secret + "@127.0.0.1:6379",
		"app:" + secret + "@[::1]:6379",
		"redis://app:" + secret + "@127.0.0.1:6379",
	}
	for _, addr := range addrs {
		tests := []struct {
			name  string
			parse func() error
		}{
			{"ring yaml", func() error {
				_, err := shard.ParseConfig([]byte("shards: [{addr: '" + addr + "'}]\n"))
				return err
			}},
			{"seeds yaml", func() error {
				_, err := shard.ParseConfig([]byte("seeds: ['" + addr + "']\n"))
				return err
			}},
			{"sentinel yaml", func() error {
				_, err := shard.ParseConfig([]byte("sentinel: {addrs: ['" + addr + "']}\nshards: [{name: m1}]\n"))
				return err
			}},
			{"ring config", func() error {
				_, err := shard.New(context.Background(), shard.Config{Shards: []ring.Shard{{Name: "a", Addr: addr, Weight: 1}}})
				return err
			}},
			{"seeds config", func() error {
				_, err := shard.New(context.Background(), shard.Config{Seeds: []string{addr}})
				return err
			}},
			{"shard list", func() error {
				_, err := ring.ParseShards(addr + " a")
				return err
			}},
		}
		for _, tt := range tests {
			t.Run(tt.name+" "+strings.ReplaceAll(addr, secret, "PW"), func(t *testing.T) {
				err := tt.parse()
				require.Error(t, err)
				require.NotContains(t, err.Error(), secret)
			})
		}
	}
}
