package pool

import (
	"context"
	"errors"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
)

// TestReview7DialAsItsContextEnds: a dial whose context ends just as the
// reply to its last setup command (here CLIENT SETNAME) comes in had that
// reply read, and then the context's callback closed the socket: Dial
// returned the connection with no error, dead (its first command failed
// with "context canceled"); a Get whose DialTimeout (not its own context)
// ended that way could hand out such a connection too. Dials and Gets
// under contexts cancelled around the time a dial takes must each give a
// working connection or an error that matches the context's, and leave
// open on the server only the connections the pool counts.
func TestReview7DialAsItsContextEnds(t *testing.T) {
	srv := plainServer(t)
	admin := adminConn(t, srv)
	set := newTestSet(t, Options{ClientName: "review7-racer"})
	bg := context.Background()

	// How long a dial takes here, for cancellations that land around its end.
	took := meanDialTime(t, set, srv.Addr, 20)

	budget := time.Now().Add(3 * time.Second)
	var ok, failed int
	for i := 0; i < 20000 && time.Now().Before(budget); i++ {
		ctx, cancel := context.WithCancel(bg)
		timer := time.AfterFunc(took/2+rand.N(took), cancel)
		c, err := set.Dial(ctx, srv.Addr)
		timer.Stop()
		cancel()
		if err != nil {
			var de *DialError
			if !errors.As(err, &de) || !errors.Is(err, context.Canceled) {
				t.Fatalf("dial %d: Dial = %v, want a *DialError matching context.Canceled", i, err)
			}
			failed++
			continue
		}
		_, err = redis.DoContext(c, bg, "PING")
		c.Close()
		if err != nil {
			t.Fatalf("dial %d: Dial returned a connection whose context had closed it: PING = %v", i, err)
		}
		ok++
	}
	t.Logf("Dial: %d gave a connection, %d failed with the context's error", ok, failed)
	// Every connection was closed: only the admin connection is left.
	review7WaitClients(t, admin, 0)

	// The same through the pool: Get with a MaxIdle small enough that
	// connections are dialed and dropped all the time. Its connections
	// are open on the server exactly as long as the pool counts them.
	set = newTestSet(t, Options{ClientName: "review7-racer", MaxIdle: 1})
	budget = time.Now().Add(2 * time.Second)
	ok, failed = 0, 0
	for i := 0; i < 20000 && time.Now().Before(budget); i++ {
		var held redis.Conn
		if i%2 == 1 { // the next Get dials
			var err error
			if held, err = set.Get(bg, srv.Addr); err != nil {
				t.Fatal(err)
			}
		}
		ctx, cancel := context.WithCancel(bg)
		timer := time.AfterFunc(took/2+rand.N(took), cancel)
		c, err := set.Get(ctx, srv.Addr)
		timer.Stop()
		cancel()
		if err == nil {
			_, err = redis.DoContext(c, bg, "PING")
			c.Close()
			if err != nil {
				t.Fatalf("get %d: Get returned a connection whose context had closed it: PING = %v", i, err)
			}
			ok++
		} else if !errors.Is(err, context.Canceled) {
			t.Fatalf("get %d: Get = %v, want an error matching context.Canceled", i, err)
		} else {
			failed++
		}
		if held != nil {
			held.Close()
		}
	}
	t.Logf("Get: %d gave a connection, %d failed with the context's error", ok, failed)
	st := set.Stats()[srv.Addr]
	if st.Active != st.Idle {
		t.Errorf("Stats = %+v: every connection was given back, want Active == Idle", st)
	}
	review7WaitClients(t, admin, st.Active)
}

// review7WaitClients waits until the server behind admin has want
// clients besides admin.
func review7WaitClients(t *testing.T, admin redis.Conn, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		list, err := redis.String(admin.Do("CLIENT", "LIST"))
		if err != nil {
			t.Fatal(err)
		}
		n := strings.Count(strings.TrimSpace(list), "\n") // lines but admin's
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d clients connected besides the admin, want %d:\n%s", n, want, list)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
