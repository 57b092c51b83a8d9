package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
)

func TestStatsHelpSaysItWrites(t *testing.T) {
	code, out, errOut := runCLI(t, "", "stats", "-h")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	help := out + errOut
	for _, want := range []string{"WRITES", "TTL of 60 seconds", "--no-probe", "shardis:stats:"} {
		if !strings.Contains(help, want) {
			t.Errorf("stats -h does not say %q:\n%s", want, help)
		}
	}
}

// TestStatsReplicaReadsAndNoProbe: a replica shows as replica-reads only
// when the config sends reads to replicas; --no-probe writes nothing; the
// topology line counts refreshes after the start's discovery.
func TestStatsReplicaReadsAndNoProbe(t *testing.T) {
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{})
	seeds := fmt.Sprintf("[%s]", strings.Join(rc.Seeds(), ", "))
	masterReads := writeConfig(t, "mode: cluster\nseeds: "+seeds+"\n")
	replicaReads := writeConfig(t, "mode: cluster\nseeds: "+seeds+"\ncluster: {read_from: replica-random}\n")

	tests := []struct {
		name      string
		config    string
		args      []string
		states    []string // states that must appear
		notStates []string
		probe     string
		written   bool
	}{
		{"reads from masters, no probe", masterReads, []string{"--no-probe"}, []string{"up,replica "}, []string{"replica-reads"},
			"probe: none (nothing written)", false},
		{"reads from replicas", replicaReads, []string{"--ops", "50"}, []string{"up,replica-reads"}, nil,
			"probe: 100 commands", true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			for _, m := range rc.Masters() {
				if _, err := m.Do("FLUSHALL"); err != nil {
					t.Fatal(err)
				}
			}
			code, out, errOut := runCLI(t, "", append([]string{"stats", "--config", tc.config}, tc.args...)...)
			if code != 0 {
				t.Fatalf("exit %d: %s", code, errOut)
			}
			for _, s := range tc.states {
				if !strings.Contains(out+" ", s) {
					t.Errorf("output lacks %q:\n%s", s, out)
				}
			}
			for _, s := range tc.notStates {
				if strings.Contains(out, s) {
					t.Errorf("output shows %q:\n%s", s, out)
				}
			}
			if !strings.Contains(out, tc.probe) {
				t.Errorf("output lacks %q:\n%s", tc.probe, out)
			}
			if !strings.Contains(out, "topology: discovered at start, refreshed ") {
				t.Errorf("topology line:\n%s", out)
			}
			keys := 0
			for _, m := range rc.Masters() {
				n, err := m.Do("DBSIZE")
				if err != nil {
					t.Fatal(err)
				}
				if n != "0" {
					keys++
				}
			}
			if written := keys > 0; written != tc.written {
				t.Errorf("%d masters hold keys after the run; want written=%v", keys, tc.written)
			}
		})
	}
}
