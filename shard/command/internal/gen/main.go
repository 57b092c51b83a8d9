// Command gen writes commands_gen.go of package command: it starts a
// throw-away redis-server on a free 127.0.0.1 port, reads its COMMAND
// reply and renders the command table.
//
// Run it through go generate in shard/command:
//
//	go generate ./shard/command
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/shardis/shardis/shard/command/internal/cmdspec"
)

func main() {
	out := flag.String("o", "commands_gen.go", "file to write")
	bin := flag.String("server", cmdspec.DefaultServerPath, "redis-server binary")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	src, err := cmdspec.Generate(ctx, *bin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "gen:", err)
		os.Exit(1)
	}
}
