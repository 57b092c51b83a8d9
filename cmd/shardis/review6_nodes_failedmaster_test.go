package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
)

// nodes marked a failed replica "(fail)" but printed a failed master
// like a healthy one: a cluster whose master of a slot range is down (no
// replica to take over) looked whole in the table, though every key of
// those slots fails.
func TestReview6NodesShowsAFailedMaster(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 0, redistest.Options{NodeTimeout: time.Second})
	masters := rc.Masters()
	if len(masters) != 3 {
		t.Fatalf("%d masters, want 3", len(masters))
	}
	victim := masters[2]
	if err := victim.Stop(); err != nil {
		t.Fatal(err)
	}
	// Wait until the cluster flags it failed.
	deadline := time.Now().Add(30 * time.Second)
	for {
		out, err := masters[0].Do("CLUSTER", "NODES")
		if err == nil && flaggedFail(out, victim.Addr) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the cluster did not flag %s failed within 30s: %v\n%s", victim.Addr, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
	cfg := writeConfig(t, fmt.Sprintf("mode: cluster\nseeds: [%q]\n", masters[0].Addr))
	code, out, errOut := runCLI(t, "", "nodes", "--config", cfg)
	if code != 0 {
		t.Fatalf("exit %d\nstdout:\n%s\nstderr:\n%s", code, out, errOut)
	}
	var row string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, victim.Addr) {
			row = line
		}
	}
	if row == "" {
		t.Fatalf("the failed master %s is not listed:\n%s", victim.Addr, out)
	}
	if !strings.Contains(row, "fail") {
		t.Errorf("the failed master's row does not say it failed: %q\n%s", row, out)
	}
	for _, m := range masters[:2] {
		for _, line := range strings.Split(out, "\n") {
			if strings.Contains(line, m.Addr) && strings.Contains(line, "fail") {
				t.Errorf("a healthy master is shown failed: %q", line)
			}
		}
	}
}

// flaggedFail reports whether CLUSTER NODES output shows addr with the
// fail flag.
func flaggedFail(nodes, addr string) bool {
	for _, line := range strings.Split(nodes, "\n") {
		f := strings.Fields(line)
		if len(f) > 2 && strings.HasPrefix(f[1], addr+"@") {
			for _, flag := range strings.Split(f[2], ",") {
				if flag == "fail" {
					return true
				}
			}
		}
	}
	return false
}
