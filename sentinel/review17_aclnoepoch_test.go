package sentinel_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// rankByReplicas is a check for RankedMasterAddr: ROLE says master, and
// the rank is the number of replicas it lists.
func rankByReplicas(ctx context.Context, addr string) (int, error) {
	conn, err := redis.DialContext(ctx, "tcp", addr, redis.DialConnectTimeout(5*time.Second), redis.DialReadTimeout(5*time.Second))
	if err != nil {
		return 0, err
	}
	defer conn.Close()
	role, err := sentinel.CheckRole(ctx, conn)
	if err != nil {
		return 0, err
	}
	if role.Kind != sentinel.RoleMaster {
		return 0, fmt.Errorf("%s is a %s", addr, role.Kind)
	}
	return len(role.Replicas), nil
}

// A user that may ask SENTINEL GET-MASTER-ADDR-BY-NAME but not SENTINEL
// MASTER gets no config epochs: a one-to-one tie (one Sentinel of three
// down, one stale) went to the order the Sentinels are listed in, and
// the stale Sentinel listed first won with its server, which still says
// it is a master. Nothing the Sentinels tell that user sets the two views
// apart; the servers do: the set's replicas follow the master of the
// latest failover. RankedMasterAddr checks every answer of such a tie
// and takes the master with the most replicas. VerifiedMasterAddr keeps
// the order of the Sentinels.
func TestReview17SentinelTieWithoutEpochsGoesToTheMasterWithReplicas(t *testing.T) {
	set, promoted, stale, name := epochTieSet(t)
	s := set.Sentinels
	if err := s[2].Kill(); err != nil {
		t.Fatal(err)
	}
	isolateStale(t, s, stale, name)
	var orig *redistest.Server // the master before the failover
	for _, n := range set.Shards[0].Nodes {
		if n != promoted {
			orig = n
		}
	}
	if _, err := orig.Do("REPLICAOF", "127.0.0.1", strconv.Itoa(promoted.Port)); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the promoted master to list its replica", func() bool {
		n, err := rankByReplicas(context.Background(), promoted.Addr)
		return err == nil && n == 1
	})
	if n, err := rankByReplicas(context.Background(), stale.Addr); err != nil || n != 0 {
		t.Fatalf("the stale server: %d replicas, %v; want a master without replicas", n, err)
	}
	for _, x := range s[:2] {
		if _, err := x.Do("ACL", "SETUSER", "addronly", "on", ">addronly-pw", "-@all", "+sentinel|get-master-addr-by-name"); err != nil {
			t.Fatal(err)
		}
		conn, err := redis.Dial("tcp", x.Addr, redis.DialUsername("addronly"), redis.DialPassword("addronly-pw"))
		if err != nil {
			t.Fatal(err)
		}
		_, err = conn.Do("SENTINEL", "MASTER", name)
		conn.Close()
		if err == nil {
			t.Fatalf("%s: SENTINEL MASTER allowed to the user", x.Addr)
		}
	}
	opts := sentinel.Options{Username: "addronly", Password: "addronly-pw", ReadTimeout: 5 * time.Second}
	for _, tc := range []struct {
		order      []string
		ranked     bool
		want, what string
	}{
		{[]string{s[1].Addr, s[0].Addr, s[2].Addr}, false, promoted.Addr, "the Sentinel listed first"},
		{[]string{s[0].Addr, s[1].Addr, s[2].Addr}, false, stale.Addr, "the Sentinel listed first"},
		{[]string{s[1].Addr, s[0].Addr, s[2].Addr}, true, promoted.Addr, "the master with replicas"},
		{[]string{s[0].Addr, s[1].Addr, s[2].Addr}, true, promoted.Addr, "the master with replicas, not the stale one"},
	} {
		c, err := sentinel.New(name, tc.order, opts)
		if err != nil {
			t.Fatal(err)
		}
		var got string
		if tc.ranked {
			got, _, err = c.RankedMasterAddr(context.Background(), rankByReplicas)
		} else {
			got, _, err = c.VerifiedMasterAddr(context.Background(), roleMaster)
		}
		if err != nil || got != tc.want {
			t.Errorf("Sentinels %v, ranked %t: %q, %v; want %s, %s (promoted %s, stale %s)", tc.order, tc.ranked, got, err, tc.want, tc.what, promoted.Addr, stale.Addr)
		}
	}
}
