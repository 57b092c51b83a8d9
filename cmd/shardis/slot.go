package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"strconv"

	"github.com/shardis/shardis/cluster"
)

func init() {
	register(command{name: "slot", summary: "print the Redis Cluster hash slot of keys", run: runSlot})
}

const slotUsage = `Usage: shardis slot [--hex] [KEY ...]

Prints one line per key: the key exactly as given, a TAB, and its Redis
Cluster hash slot (0-16383, hash tags applied as CLUSTER KEYSLOT does).

Without KEY arguments, keys are read from standard input, one per line. Only
the "\n" that ends a line is removed: every other byte, a "\r" included,
belongs to the key, and an empty line is the empty key. Use --hex for keys
that hold a "\n". Put "--" before keys that start with "-".

Flags:
`

// runSlot implements "shardis slot".
func runSlot(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("slot", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), slotUsage)
		fs.PrintDefaults()
	}
	hexKeys := fs.Bool("hex", false, "each key is its bytes in hex (\"666f6f\" is foo); printed back as given.\n"+
		"On standard input a \"\\r\" before the \"\\n\" is then ignored too")
	if err := parseFlags(env, fs, args, false); err != nil {
		return err
	}
	return answerKeys(ctx, env, "slot", fs.Args(), *hexKeys, writeSlot)
}

// writeSlot prints "given<TAB>slot" and returns the writer's first error.
func writeSlot(out *bufio.Writer, given, key []byte) error {
	out.Write(given)
	out.WriteByte('\t')
	out.Write(strconv.AppendInt(out.AvailableBuffer(), int64(cluster.SlotBytes(key)), 10))
	return out.WriteByte('\n')
}
