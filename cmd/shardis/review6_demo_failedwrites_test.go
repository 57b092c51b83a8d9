package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// demo --config wrote its keys, counted the SETs that failed and exited 0
// whatever the count: against a shard that refuses writes (a read-only
// replica here, READONLY) a third of the keys were never stored, the
// output said "(N failed)" in passing and the status said all was well.
// It exits 1 now and names the first failure.
func TestReview6DemoExitsNonZeroWhenWritesFail(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	host, port, ok := strings.Cut(servers[0].Addr, ":")
	if !ok {
		t.Fatalf("address %q", servers[0].Addr)
	}
	cfg := writeConfig(t, fmt.Sprintf("shards: [{addr: %q, name: a}, {addr: %q, name: b}]\n", servers[0].Addr, servers[1].Addr))

	code, out, errOut := runCLI(t, "", "demo", "--config", cfg, "--keys", "200", "--batch", "50")
	if code != 0 || !strings.Contains(out, "(0 failed)") {
		t.Fatalf("both shards writable: exit %d, want 0 and no failure\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}

	if _, err := servers[1].Do("REPLICAOF", host, port); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCLI(t, "", "demo", "--config", cfg, "--keys", "200", "--batch", "50")
	if code != 1 {
		t.Errorf("shard b read-only: exit %d, want 1\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	if !strings.Contains(errOut, "READONLY") {
		t.Errorf("shard b read-only: stderr does not name the failure:\n%s", errOut)
	}
	if !strings.Contains(out, "Keys per shard") {
		t.Errorf("shard b read-only: the rest of the demo was not shown:\n%s", out)
	}
}
