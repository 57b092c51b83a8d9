package sentinel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/sentinel"
)

// A Sentinel with no room for another connection (maxclients) greets a
// new one with "ERR max number of clients reached", which the dial reads
// as the reply to its AUTH: that is no refusal of the credentials, so the
// error must not match pool.ErrAuth, while a real refusal does.
func TestReview6SentinelFullIsNotErrAuth(t *testing.T) {
	srv := redistest.StartTB(t, redistest.Options{DefaultPassword: "right-one", Args: []string{"--maxclients", "1"}})
	c, err := sentinel.New("mymaster", []string{srv.Addr}, sentinel.Options{Password: "wrong-one"})
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Dial(context.Background(), srv.Addr); !errors.Is(err, pool.ErrAuth) {
		t.Fatalf("a refused password: Dial error %v does not match pool.ErrAuth", err)
	}
	hold, err := redis.Dial("tcp", srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer hold.Close()
	if _, err := hold.Do("AUTH", "right-one"); err != nil {
		t.Fatal(err)
	}
	_, _, err = c.Dial(context.Background(), srv.Addr)
	if err == nil {
		t.Fatal("Dial succeeded on a full server")
	}
	if !strings.Contains(err.Error(), "max number of clients") {
		t.Fatalf("Dial error %v is not the full server's", err)
	}
	if errors.Is(err, pool.ErrAuth) {
		t.Errorf("a full server's greeting matches pool.ErrAuth: %v", err)
	}
}
