package sentinel_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// A Sentinel that sends its answers a byte every 200 ms (seconds for
// each) is given up after ReadTimeout, and the other Sentinels' answers
// are used: with two Sentinels listed, the trickling one first, the
// master is resolved and the replicas listed within ReadTimeout and a
// margin, from the healthy Sentinel.
func TestReview15TrickledSentinelAnswerDoesNotStallResolution(t *testing.T) {
	set := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 2, SentinelPassword: sentinelPassword})
	good := set.Addrs()
	px := redistest.StartTrickleProxy(t, good[1], 200*time.Millisecond, func(cmd string, _ []byte) bool { return cmd == "SENTINEL" })
	const readTimeout = 400 * time.Millisecond
	c, err := sentinel.New("master-0", []string{px.Addr, good[0]}, sentinel.Options{Password: sentinelPassword, ReadTimeout: readTimeout, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	master, err := set.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	replica, err := set.Replica(0)
	if err != nil {
		t.Fatal(err)
	}
	// A trickled answer takes 6 s or more; the bound leaves a loaded
	// machine room.
	const bound = 2 * time.Second
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	start := time.Now()
	got, asked, err := c.MasterAddr(ctx)
	took := time.Since(start)
	if err != nil || got != master.Addr || asked != good[0] {
		t.Errorf("MasterAddr: %s from %s, %v; want %s from %s", got, asked, err, master.Addr, good[0])
	}
	if took > bound {
		t.Errorf("MasterAddr took %v with a trickling Sentinel, over %v", took, bound)
	}

	// The healthy Sentinel answered last, so Replicas asks it first:
	// put the trickling one first again.
	c2, err := sentinel.New("master-0", []string{px.Addr, good[0]}, sentinel.Options{Password: sentinelPassword, ReadTimeout: readTimeout, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	reps, err := c2.Replicas(ctx)
	took = time.Since(start)
	if err != nil || len(reps) != 1 || reps[0].Addr != replica.Addr {
		t.Errorf("Replicas: %+v, %v; want one at %s", reps, err, replica.Addr)
	}
	if took > bound {
		t.Errorf("Replicas took %v with a trickling Sentinel first, over %v", took, bound)
	}

	// Alone, the trickling Sentinel fails with a timeout naming it.
	c3, err := sentinel.New("master-0", []string{px.Addr}, sentinel.Options{Password: sentinelPassword, ReadTimeout: readTimeout, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	_, _, err = c3.MasterAddr(ctx)
	took = time.Since(start)
	var qe *sentinel.QueryError
	var ne net.Error
	if !errors.As(err, &qe) || qe.Addr != px.Addr || !errors.As(err, &ne) || !ne.Timeout() {
		t.Errorf("MasterAddr from the trickling Sentinel alone: %v, want a timeout naming %s", err, px.Addr)
	}
	if took > bound {
		t.Errorf("MasterAddr from the trickling Sentinel alone took %v, over %v", took, bound)
	}
}

// Two Sentinels that name different masters are told apart by the config
// epochs of their views (SENTINEL MASTER): one that trickles that answer
// is given up after ReadTimeout, and the other's master is returned in
// time.
func TestReview15TrickledConfigEpochDoesNotStallResolution(t *testing.T) {
	a := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 1})
	b := redistest.StartSentinelsTB(t, redistest.SentinelOptions{Shards: 1, Sentinels: 1})
	px := redistest.StartTrickleProxy(t, b.Addrs()[0], 200*time.Millisecond, func(cmd string, reply []byte) bool {
		return cmd == "SENTINEL" && bytes.Contains(reply, []byte("$12\r\nconfig-epoch\r\n"))
	})
	const readTimeout = 400 * time.Millisecond
	c, err := sentinel.New("master-0", []string{px.Addr, a.Addrs()[0]}, sentinel.Options{ReadTimeout: readTimeout, DialTimeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	ma, err := a.Master(0)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	start := time.Now()
	got, asked, err := c.MasterAddr(ctx)
	took := time.Since(start)
	t.Logf("%s from %s, %v after %v", got, asked, err, took)
	if err != nil || got != ma.Addr {
		t.Errorf("MasterAddr: %s, %v; want %s, the master of the Sentinel whose epoch is known", got, err, ma.Addr)
	}
	if took > 2*time.Second {
		t.Errorf("MasterAddr took %v with a Sentinel trickling its SENTINEL MASTER, over 2s", took)
	}
}
