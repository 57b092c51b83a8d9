package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
)

// answerKeys runs write for every key of a key-answering verb (locate,
// slot): the KEY arguments, or each line of standard input when there are
// none. With hexKeys each key is given as hex and decoded first. Argument
// keys are all checked before anything is printed; a bad key is a usage
// error naming it (and its line on standard input).
func answerKeys(ctx context.Context, env *cliEnv, verb string, args []string, hexKeys bool,
	write func(out *bufio.Writer, given, key []byte) error) error {
	out := bufio.NewWriter(env.stdout)
	if len(args) > 0 {
		keys := make([][]byte, len(args))
		for i, arg := range args {
			key, err := decodeKey([]byte(arg), hexKeys)
			if err != nil {
				return fmt.Errorf("%w: %w", errUsage, err)
			}
			keys[i] = key
		}
		for i, arg := range args {
			write(out, []byte(arg), keys[i])
		}
		return out.Flush()
	}
	err := answerLines(ctx, env, verb, out, hexKeys, write)
	if ferr := out.Flush(); err == nil {
		err = ferr
	}
	return err
}

// answerLines answers for each line of env.stdin. Only the "\n" that ends
// a line is removed (and, with hexKeys, one "\r" before it); a kept "\r"
// earns one warning.
func answerLines(ctx context.Context, env *cliEnv, verb string, out *bufio.Writer, hexKeys bool,
	write func(out *bufio.Writer, given, key []byte) error) error {
	in := bufio.NewReader(env.stdin)
	warned := false
	for n := 1; ; n++ {
		if err := ctx.Err(); err != nil {
			return err
		}
		line, err := in.ReadBytes('\n')
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
			fmt.Fprintf(env.stderr, "shardis %s: warning: line %d ends with \"\\r\", kept as part of the key (strip the \"\\r\" characters or use --hex if they are not)\n", verb, n)
		}
		key, kerr := decodeKey(given, hexKeys)
		if kerr != nil {
			return fmt.Errorf("%w: line %d: %w", errUsage, n, kerr)
		}
		if werr := write(out, given, key); werr != nil {
			return werr
		}
		if errors.Is(err, io.EOF) {
			return nil
		}
	}
}

// decodeKey returns the key bytes that given stands for.
func decodeKey(given []byte, hexKeys bool) ([]byte, error) {
	if !hexKeys {
		return given, nil
	}
	key := make([]byte, hex.DecodedLen(len(given)))
	if _, err := hex.Decode(key, given); err != nil {
		return nil, fmt.Errorf("bad hex key %q: %w", given, err)
	}
	return key, nil
}
