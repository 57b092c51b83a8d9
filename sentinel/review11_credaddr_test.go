package sentinel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// A Sentinel address with credentials pasted into it (the userinfo of a
// redis:// URL) is refused as a bad option, and no error of the package
// shows the password: New's, CheckAddr's, Dial's and a query's. Before,
// the address was quoted as it was ("user:pw@host:port": want
// host:port), and one without a user name ("pw@host:port") passed the
// check and was dialed, its failure naming "pw@127.0.0.1" as the host.
func TestReview11SentinelAddressCredentialsAreRedacted(t *testing.T) {
	const pw = "pasted-pw-9z"
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, SentinelPassword: sentinelPassword})
	good := set.Addrs()[0]
	opts := sentinel.Options{Password: sentinelPassword}
	bad := []string{
		"app:" + pw + "@" + good, // user and password
		pw + "@" + good,          // password alone, which splits as host:port
		":" + pw + "@" + good,    // an empty user name
	}
	noSecret := func(what string, err error) {
		t.Helper()
		if err == nil {
			t.Fatalf("%s: no error, want one refusing the credentials", what)
		}
		if strings.Contains(err.Error(), pw) {
			t.Errorf("%s: error shows the password: %v", what, err)
		}
	}
	for _, a := range bad {
		err := sentinel.CheckAddr(a)
		noSecret("CheckAddr", err)
		if !errors.Is(err, sentinel.ErrBadOptions) {
			t.Errorf("CheckAddr: %v does not match ErrBadOptions", err)
		}
		for _, addrs := range [][]string{{a}, {good, a}, {a, a}} {
			c, err := sentinel.New("master-0", addrs, opts)
			if err == nil {
				// Queried, the address may not show the password either.
				_, _, qerr := c.MasterAddr(context.Background())
				t.Errorf("New(%d addresses) accepted an address with credentials; a query then failed with %v", len(addrs), qerr)
				noSecret("MasterAddr", qerr)
				continue
			}
			noSecret("New", err)
			if !errors.Is(err, sentinel.ErrBadOptions) {
				t.Errorf("New: %v does not match ErrBadOptions", err)
			}
		}
	}
	// Dial takes any address: it refuses one with credentials too.
	c, err := sentinel.New("master-0", []string{good}, opts)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range bad {
		conn, _, err := c.Dial(context.Background(), a)
		if conn != nil {
			conn.Close()
		}
		noSecret("Dial", err)
		var qe *sentinel.QueryError
		if !errors.As(err, &qe) || strings.Contains(qe.Addr, pw) {
			t.Errorf("Dial: %v: want a *QueryError whose Addr hides the password", err)
		}
	}
	// A good address still works.
	if _, _, err := c.MasterAddr(context.Background()); err != nil {
		t.Fatal(err)
	}
}
