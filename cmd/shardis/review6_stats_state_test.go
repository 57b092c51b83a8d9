package main

import (
	"encoding/json"
	"regexp"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

// stats showed a shard whose server refuses connections as "up": its
// STATE was only the health checks' mark, which a short-lived command
// never gives them the time to set, so with or without the probe the
// table and the JSON said "up" for a server that was not running.
func TestReview6StatsShowsAStoppedShardDown(t *testing.T) {
	servers := redistest.StartNTB(t, 2, redistest.Options{})
	cfg := writeConfig(t, "shards: [{addr: \""+servers[0].Addr+"\", name: alive}, {addr: \""+servers[1].Addr+"\", name: stopped}]\n")
	if err := servers[1].Stop(); err != nil {
		t.Fatal(err)
	}
	for _, probe := range [][]string{{"--no-probe"}, {"--ops", "20"}} {
		args := append([]string{"stats", "--config", cfg}, probe...)
		_, out, errOut := runCLI(t, "", args...)
		if !regexp.MustCompile(`(?m)^\s*alive\s+up\s`).MatchString(out) {
			t.Errorf("%v: the running shard is not shown up:\n%s\nstderr: %s", probe, out, errOut)
		}
		if !regexp.MustCompile(`(?m)^\s*stopped\s+down\s`).MatchString(out) {
			t.Errorf("%v: the stopped shard is not shown down:\n%s\nstderr: %s", probe, out, errOut)
		}

		_, out, errOut = runCLI(t, "", append(args, "--json")...)
		var rep statsReport
		if err := json.Unmarshal([]byte(out), &rep); err != nil {
			t.Fatalf("%v --json: %v\n%s\nstderr: %s", probe, err, out, errOut)
		}
		if len(rep.Nodes) != 2 {
			t.Fatalf("%v --json: %d nodes, want 2:\n%s", probe, len(rep.Nodes), out)
		}
		want := map[string]string{"alive": "up", "stopped": "down"}
		for _, n := range rep.Nodes {
			if n.State != want[n.Name] {
				t.Errorf("%v --json: node %s state %q, want %q", probe, n.Name, n.State, want[n.Name])
			}
		}
	}
}
