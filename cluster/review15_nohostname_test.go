package cluster

import (
	"errors"
	"net"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// A cluster of one node, set to cluster-preferred-endpoint-type hostname
// without cluster-announce-hostname: the node does not know its own IP
// (it never met another node), so CLUSTER SHARDS and CLUSTER SLOTS list it
// with the endpoint "?" and an empty ip. It is the node that answered:
// discovery uses the address the client asked, whether that names an IP
// or a hostname.
func TestReview15HostnamePreferredWithoutHostnameOneNode(t *testing.T) {
	redistest.Require(t)
	s := redistest.StartTB(t, redistest.Options{Cluster: true})
	if _, err := s.Do("CLUSTER", "ADDSLOTSRANGE", "0", "16383"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Do("CONFIG", "SET", "cluster-preferred-endpoint-type", "hostname"); err != nil {
		t.Fatal(err)
	}
	id, err := s.Do("CLUSTER", "MYID")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		info, err := s.Do("CLUSTER", "INFO")
		if err == nil && strings.Contains(info, "cluster_state:ok") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster never became ok: %q %v", info, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	// What the server says, read without the parsers.
	shards, err := s.Do("CLUSTER", "SHARDS")
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?s)\nip\n\nendpoint\n\?\n`).MatchString(shards) {
		t.Fatalf("the server does not list itself with endpoint ? and an empty ip:\n%s", shards)
	}
	port := strconv.Itoa(s.Port)
	for _, seed := range []string{s.Addr, net.JoinHostPort("localhost", port)} {
		table, err := Discover(testContext(t), []string{seed}, nil)
		if err != nil {
			t.Fatalf("seed %s: %v", seed, err)
		}
		got := table.Shards()
		if len(got) != 1 || got[0].Master.Addr != seed || got[0].Master.ID != id {
			t.Fatalf("seed %s gives\n%s\nwant one master %s at %s", seed, table, id, seed)
		}

		conn := dialRedis(t, seed)
		reply, err := conn.Do("CLUSTER", "SLOTS")
		if err != nil {
			t.Fatal(err)
		}
		table, err = ParseSlots(reply, seed)
		if err != nil {
			t.Fatalf("seed %s: CLUSTER SLOTS: %v", seed, err)
		}
		if got := table.Shards(); len(got) != 1 || got[0].Master.Addr != seed {
			t.Fatalf("seed %s: CLUSTER SLOTS gives\n%s", seed, table)
		}
	}
}

// A master listed with "?" and no ip at all: nothing says where it is.
// The error names the misconfiguration (ErrNoHostname) and is still a
// malformed topology for callers that test ErrMalformed.
func TestReview15HostnamePreferredWithoutHostnameUnknownMaster(t *testing.T) {
	shards := resp(A{
		A{"slots", A{0, 8191}, "nodes", A{shardNode(idA, 7000, "master", "online")}},
		A{"slots", A{8192, 16383}, "nodes", A{
			A{"id", idB, "port", 7001, "endpoint", "?", "role", "master", "health", "online"}}},
	})
	_, err := ParseShards(shards, "127.0.0.1:7000")
	if !errors.Is(err, ErrNoHostname) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("CLUSTER SHARDS: got %v, want ErrNoHostname and ErrMalformed", err)
	}
	if !strings.Contains(err.Error(), "shard 1: node 0: master has no usable address") {
		t.Fatalf("CLUSTER SHARDS: %v does not say where", err)
	}

	slots := resp(A{
		A{0, 8191, slotNode(idA, 7000)},
		A{8192, 16383, A{"?", 7001, idB, A{}}},
	})
	_, err = ParseSlots(slots, "127.0.0.1:7000")
	if !errors.Is(err, ErrNoHostname) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("CLUSTER SLOTS: got %v, want ErrNoHostname and ErrMalformed", err)
	}

	// An empty ip at another port than the one asked: not the node that
	// answered, so nothing says where it is either.
	slots = resp(A{
		A{0, 8191, slotNode(idA, 7000)},
		A{8192, 16383, A{"?", 7001, idB, A{"ip", ""}}},
	})
	_, err = ParseSlots(slots, "127.0.0.1:7000")
	if !errors.Is(err, ErrNoHostname) || !errors.Is(err, ErrMalformed) {
		t.Fatalf("CLUSTER SLOTS, empty ip: got %v, want ErrNoHostname and ErrMalformed", err)
	}

	// A master that lists "?" with an IP is reached at its IP: no error.
	slots = resp(A{
		A{0, 8191, slotNode(idA, 7000)},
		A{8192, 16383, A{"?", 7001, idB, A{"ip", "127.0.0.2"}}},
	})
	table, err := ParseSlots(slots, "127.0.0.1:7000")
	if err != nil || table.Shards()[1].Master.Addr != "127.0.0.2:7001" {
		t.Fatalf("CLUSTER SLOTS: %v %v", table, err)
	}
}
