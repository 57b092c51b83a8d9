package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/shardis/shardis/shard"
)

// sentinelAddrs maps each Sentinel shard's name to "sentinel:MASTER-SET".
func sentinelAddrs(stats []shard.SentinelStats) map[string]string {
	out := make(map[string]string, len(stats))
	for _, s := range stats {
		out[s.Name] = "sentinel:" + s.MasterName
	}
	return out
}

// printSentinelShards lists each Sentinel shard's current master and
// replicas, its failovers and whether it serves a last known master.
func printSentinelShards(w io.Writer, stats []shard.SentinelStats) {
	if len(stats) == 0 {
		return
	}
	fmt.Fprintln(w)
	fmt.Fprintln(w, "SENTINEL SHARD\tMASTER SET\tMASTER\tREPLICAS\tFAILOVERS\tSTATE")
	for _, s := range stats {
		reps := strings.Join(s.Replicas, " ")
		if reps == "" {
			reps = "-"
		}
		state := "ok"
		if s.Stale {
			state = "stale (no usable Sentinel answer: serving the last known master)"
		}
		fmt.Fprintf(w, "%s\t%s\t%s\t%s\t%d\t%s\n", s.Name, s.MasterName, s.Master, reps, s.Failovers, state)
	}
}
