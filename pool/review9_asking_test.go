package pool

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// TestAskingIsNotHandedOn: ASKING lets the one command after it read or
// write a slot that its node is importing, and the server keeps the flag
// until that command comes. A caller whose last command was ASKING gave
// the flag to the next caller of the connection, whose first command on
// the importing node was then served there (an empty value, a write to
// the wrong node) instead of being redirected (MOVED) to the slot's owner.
func TestAskingIsNotHandedOn(t *testing.T) {
	opts := redistest.Options{Cluster: true, Args: []string{
		"--cluster-require-full-coverage", "no", "--cluster-allow-reads-when-down", "yes"}}
	owner := redistest.StartTB(t, opts)
	importer := redistest.StartTB(t, opts)
	const key, slot = "foo", "12182" // CLUSTER KEYSLOT foo

	ownerID, err := owner.Do("CLUSTER", "MYID")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Do("CLUSTER", "ADDSLOTS", slot); err != nil {
		t.Fatal(err)
	}
	host, port, _ := net.SplitHostPort(owner.Addr)
	if _, err := importer.Do("CLUSTER", "MEET", host, port); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		nodes, err := importer.Do("CLUSTER", "NODES")
		if err != nil {
			t.Fatal(err)
		}
		if strings.Contains(nodes, ownerID) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the importing node never learnt of the owner: %s", nodes)
		}
		time.Sleep(20 * time.Millisecond) // polling a condition
	}
	if _, err := importer.Do("CLUSTER", "SETSLOT", slot, "NODE", ownerID); err != nil {
		t.Fatal(err)
	}
	if _, err := importer.Do("CLUSTER", "SETSLOT", slot, "IMPORTING", ownerID); err != nil {
		t.Fatal(err)
	}

	set := newTestSet(t, Options{TestOnBorrow: Never})
	ctx := context.Background()
	// Without ASKING the importing node redirects: the state a fresh
	// connection is in.
	c, err := set.Get(ctx, importer.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Do("GET", key); err == nil || !strings.HasPrefix(err.Error(), "MOVED ") {
		t.Fatalf("GET %s on the importing node = %v, want MOVED", key, err)
	}
	if reply, err := c.Do("ASKING"); err != nil || reply != "OK" {
		t.Fatalf("ASKING = %v, %v", reply, err)
	}
	c.Close()

	c, err = set.Get(ctx, importer.Addr)
	if err != nil {
		t.Fatal(err)
	}
	reply, err := c.Do("GET", key)
	if err == nil || !strings.HasPrefix(err.Error(), "MOVED ") {
		t.Errorf("the next caller's GET %s = %v, %v: want MOVED, as on a fresh connection (it ran under the last caller's ASKING)",
			key, reply, err)
	}
	if _, ok := err.(redis.Error); err != nil && !ok {
		t.Errorf("GET failed with %T %v, want a server's reply", err, err)
	}
	c.Close()

	// ASKING followed by its command (how a redirect is followed) leaves
	// nothing behind: that connection is handed on, not redialled.
	c, err = set.Get(ctx, importer.Addr)
	if err != nil {
		t.Fatal(err)
	}
	dials := set.Stats()[importer.Addr].Dials
	if err := c.Send("ASKING"); err != nil {
		t.Fatal(err)
	}
	if reply, err := c.Do("GET", key); err != nil || reply != nil {
		t.Fatalf("ASKING + GET %s = %v, %v, want nil from the importing node", key, reply, err)
	}
	c.Close()
	c, err = set.Get(ctx, importer.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if d := set.Stats()[importer.Addr].Dials; d != dials {
		t.Errorf("%d dials after ASKING + GET, want %d: the connection was not handed on", d, dials)
	}
}
