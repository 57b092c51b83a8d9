package main

import (
	"bytes"
	"regexp"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// nodeIdentity matches what differs between two clusters of the same
// shape: node IDs and ports.
var nodeIdentity = regexp.MustCompile(`[0-9a-f]{40}|127\.0\.0\.1\r\n:[0-9]+\r\n`)

func normalize(b []byte) []byte {
	return nodeIdentity.ReplaceAllFunc(b, func(m []byte) []byte {
		if bytes.HasPrefix(m, []byte("127.")) {
			return []byte("127.0.0.1\r\n:PORT\r\n")
		}
		return []byte("ID")
	})
}

// CLUSTER SLOTS of three masters is the reply of a cluster that
// redis-cli --cluster create made, but for node IDs and ports: the same
// slot ranges and the same fields per node, in both protocols.
func TestReview19ClusterSlotsAsRedis(t *testing.T) {
	real := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	fake := startServers(t, 3, true)[0]
	for _, req := range []string{"CLUSTER SLOTS\r\n", "HELLO 3\r\nCLUSTER SLOTS\r\n"} {
		want, _, err := exchange(real.Seeds()[0], []byte(req), 0, true)
		if err != nil {
			t.Fatal(err)
		}
		got, _, err := exchange(fake, []byte(req), 0, true)
		if err != nil {
			t.Fatal(err)
		}
		if req != "CLUSTER SLOTS\r\n" { // leave HELLO's reply out
			want = want[bytes.Index(want, []byte("*3\r\n*3\r\n")):]
			got = got[bytes.Index(got, []byte("*3\r\n*3\r\n")):]
		}
		if w, g := normalize(want), normalize(got); !bytes.Equal(w, g) {
			t.Errorf("%q:\nfakeredis    %q\nredis-server %q", req, g, w)
		}
	}
}

// In RESP3 the text replies (INFO, CLUSTER INFO, CLUSTER NODES) are
// verbatim strings of format txt, as redis-server sends them.
func TestReview19TextRepliesAreVerbatimInRESP3(t *testing.T) {
	real := redistest.StartClusterTB(t, 3, 0, redistest.Options{})
	fake := startServers(t, 3, true)[0]
	for _, cmd := range []string{"INFO", "CLUSTER INFO", "CLUSTER NODES"} {
		for _, proto := range []string{"2", "3"} {
			req := []byte("HELLO " + proto + "\r\n" + cmd + "\r\n")
			var kinds [2]string
			for i, addr := range []string{real.Seeds()[0], fake} {
				got, _, err := exchange(addr, req, 0, true)
				if err != nil {
					t.Fatal(err)
				}
				// After HELLO's reply (ending with its modules, "*0\r\n").
				rest := got[bytes.Index(got, []byte("*0\r\n"))+4:]
				kinds[i] = string(rest[0])
				if rest[0] == '=' {
					kinds[i] += string(rest[bytes.Index(rest, []byte("\r\n"))+2:][:4])
				}
			}
			if kinds[0] != kinds[1] {
				t.Errorf("HELLO %s, %s: fakeredis answers with %q, redis-server with %q", proto, cmd, kinds[1], kinds[0])
			}
		}
	}
}
