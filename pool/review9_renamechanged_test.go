package pool

import (
	"context"
	"regexp"
	"strconv"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// A connection given back after the Set's client name changed is renamed
// on its way back, unless it will never be lent again: one left in a
// state the pool does not undo (here SELECT) is closed at its next
// borrow, and a CLIENT SETNAME sent to it first is a round trip for
// nothing, made while the caller's Close waits.
func TestReturnDoesNotRenameAConnectionLeftInAState(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{ClientName: "app-one"})
	ctx := context.Background()
	setnames := func() int {
		t.Helper()
		rc, err := redis.Dial("tcp", srv.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer rc.Close()
		info, err := redis.String(rc.Do("INFO", "commandstats"))
		if err != nil {
			t.Fatal(err)
		}
		m := regexp.MustCompile(`cmdstat_client\|setname:calls=(\d+)`).FindStringSubmatch(info)
		if m == nil {
			return 0
		}
		n, _ := strconv.Atoi(m[1])
		return n
	}
	c, err := set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("SELECT", "1"); err != nil {
		t.Fatal(err)
	}
	if err := set.SetClientName(ctx, "app-two"); err != nil {
		t.Fatal(err)
	}
	before := setnames()
	c.Close()
	if after := setnames(); after != before {
		t.Fatalf("%d CLIENT SETNAME sent on giving back a connection that will be closed", after-before)
	}
	// The next borrow gets a connection of the new name, in database 0.
	c, err = set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	name, err := c.Do("CLIENT", "GETNAME")
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := name.([]byte); string(got) != "app-two" {
		t.Fatalf("CLIENT GETNAME = %q, want app-two", name)
	}
	info, err := c.Do("CLIENT", "INFO")
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := info.([]byte); !regexp.MustCompile(` db=0 `).Match(b) {
		t.Fatalf("the next borrow is not in database 0: %s", b)
	}
}
