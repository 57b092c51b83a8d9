package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
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
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return fmt.Errorf("%w: %w", errUsage, err)
	}
	out := bufio.NewWriter(env.stdout)
	if fs.NArg() > 0 {
		// Check every key first so that a bad one prints nothing.
		keys := make([][]byte, fs.NArg())
		for i, arg := range fs.Args() {
			key, err := slotKey([]byte(arg), *hexKeys)
			if err != nil {
				return fmt.Errorf("%w: %w", errUsage, err)
			}
			keys[i] = key
		}
		for i, arg := range fs.Args() {
			writeSlot(out, []byte(arg), keys[i])
		}
		return out.Flush()
	}
	err := slotLines(ctx, env, out, *hexKeys)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// slotLines answers for each line of env.stdin.
func slotLines(ctx context.Context, env *cliEnv, out *bufio.Writer, hexKeys bool) error {
	in := bufio.NewReader(env.stdin)
	warned := false
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := in.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A long key: copy what the buffer holds before reading on.
			long := append([]byte(nil), line...)
			var rest []byte
			rest, err = in.ReadBytes('\n')
			line = append(long, rest...)
		}
		if len(line) == 0 && err == io.EOF {
			return nil
		}
		if err != nil && err != io.EOF {
			return fmt.Errorf("read standard input: %w", err)
		}
		given := bytes.TrimSuffix(line, []byte("\n"))
		if hexKeys {
			given = bytes.TrimSuffix(given, []byte("\r"))
		} else if !warned && bytes.HasSuffix(given, []byte("\r")) {
			warned = true
			fmt.Fprintf(env.stderr, "shardis slot: warning: line %d ends with \"\\r\", kept as part of the key (strip the \"\\r\" characters or use --hex if they are not)\n", n)
		}
		key, kerr := slotKey(given, hexKeys)
		if kerr != nil {
			return fmt.Errorf("%w: line %d: %w", errUsage, n, kerr)
		}
		if werr := writeSlot(out, given, key); werr != nil {
			return werr
		}
		if err == io.EOF {
			return nil
		}
	}
}

// slotKey returns the key bytes that given stands for.
func slotKey(given []byte, hexKeys bool) ([]byte, error) {
	if !hexKeys {
		return given, nil
	}
	key := make([]byte, hex.DecodedLen(len(given)))
	if _, err := hex.Decode(key, given); err != nil {
		return nil, fmt.Errorf("bad hex key %q: %w", given, err)
	}
	return key, nil
}

// writeSlot prints "given<TAB>slot" and returns the writer's first error.
func writeSlot(out *bufio.Writer, given, key []byte) error {
	out.Write(given)
	out.WriteByte('\t')
	out.Write(strconv.AppendInt(out.AvailableBuffer(), int64(cluster.SlotBytes(key)), 10))
	return out.WriteByte('\n')
}
