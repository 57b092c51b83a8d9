package main

import (
	"context"
	"fmt"
)

func init() {
	register(command{name: "bench", summary: "compare placement strategies offline, or measure ring and cluster mode end to end", run: runBench})
}

const benchUsage = `Usage: shardis bench placement [flags]   compare key placement strategies offline
       shardis bench e2e [flags]         measure throughput and latency against servers

Run 'shardis bench placement -h' or 'shardis bench e2e -h' for the flags.
`

// runBench implements "shardis bench": it dispatches to its sub-commands.
func runBench(ctx context.Context, env *cliEnv, args []string) error {
	if len(args) == 0 {
		fmt.Fprint(env.stderr, benchUsage)
		return fmt.Errorf("%w: bench needs a sub-command: placement or e2e", errUsage)
	}
	switch args[0] {
	case "placement":
		return runBenchPlacement(ctx, env, args[1:])
	case "e2e":
		return runBenchE2E(ctx, env, args[1:])
	case "help", "-h", "-help", "--help":
		fmt.Fprint(env.stdout, benchUsage)
		return nil
	}
	fmt.Fprint(env.stderr, benchUsage)
	return fmt.Errorf("%w: unknown bench sub-command %q", errUsage, redactArg(args[0]))
}
