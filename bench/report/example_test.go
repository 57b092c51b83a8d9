package report_test

import (
	"os"

	"github.com/shardis/shardis/bench/e2e"
	"github.com/shardis/shardis/bench/report"
)

// Print an end-to-end report as a terminal table.
func ExampleE2EText() {
	r := &e2e.Report{
		Servers:         "3 local redis-server processes",
		Targets:         []e2e.Target{{Name: "ring", Servers: "murmur3 ring"}},
		DurationSeconds: 2,
		Results: []e2e.Result{{
			Target: "ring", Case: e2e.Case{Name: "single c=16", Kind: e2e.Single, Callers: 16, Size: 1},
			Ops: 60000, Commands: 60000, Seconds: 2, OpsPerSec: 30000, CommandsPerSec: 30000,
			P50Micros: 380, P99Micros: 2410,
		}},
	}
	if err := report.E2EText(os.Stdout, r); err != nil {
		panic(err)
	}
	// Output:
	// Servers: 3 local redis-server processes.
	//   ring: murmur3 ring
	// Each case ran 2 s per mode. One op is one command, pipeline, MSET or MGET; p50 and p99 are the time of one op.
	//
	// case         mode  callers   ops/s  commands/s     p50      p99  errors
	// single c=16  ring       16  30,000      30,000  380 µs  2.41 ms       0
}
