package placement

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// IDPlaceholder is the part of a key pattern that GenerateKeys replaces
// with the key's number.
const IDPlaceholder = "{id}"

// DefaultPattern is the key pattern used when none is given.
const DefaultPattern = "user:{id}:profile"

// maxGenerated bounds the keys GenerateKeys makes: past a few billion the
// allocation alone ends the process with a fatal (unrecoverable)
// out-of-memory error, and far fewer already exhaust an ordinary machine.
const maxGenerated = 10_000_000

// GenerateKeys returns n keys made from pattern by replacing every "{id}"
// with the numbers 0 to n-1 ("user:{id}:profile" gives "user:0:profile",
// "user:1:profile", ...). The pattern must contain "{id}", and n must be
// positive and at most 10,000,000 (more keys than a run of every
// strategy and layout holds in memory on an ordinary machine).
func GenerateKeys(pattern string, n int) ([]string, error) {
	if !strings.Contains(pattern, IDPlaceholder) {
		return nil, fmt.Errorf("%w: key pattern %q has no %s, so every key would be the same", ErrBadInput, pattern, IDPlaceholder)
	}
	if n <= 0 || n > maxGenerated {
		return nil, fmt.Errorf("%w: %d keys requested (want 1..%d)", ErrBadInput, n, maxGenerated)
	}
	before, after, _ := strings.Cut(pattern, IDPlaceholder)
	multi := strings.Contains(after, IDPlaceholder)
	keys := make([]string, n)
	for i := range keys {
		id := strconv.Itoa(i)
		if multi {
			keys[i] = strings.ReplaceAll(pattern, IDPlaceholder, id)
		} else {
			keys[i] = before + id + after
		}
	}
	return keys, nil
}

// ReadKeys reads one key per line. Only the "\n" that ends a line is
// removed: every other byte, a "\r" included, belongs to the key, as in
// "shardis locate". It fails when r holds no key.
func ReadKeys(r io.Reader) ([]string, error) {
	br := bufio.NewReaderSize(r, 64<<10)
	var keys []string
	for {
		line, err := br.ReadString('\n')
		if len(line) > 0 {
			keys = append(keys, strings.TrimSuffix(line, "\n"))
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("shardis: read keys: %w", err)
		}
	}
	if len(keys) == 0 {
		return nil, fmt.Errorf("%w: no keys to place", ErrBadInput)
	}
	return keys, nil
}
