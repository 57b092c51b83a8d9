package reshard

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestMoveCountsOnlyKeysThatMoved: a batch's keys can be gone by the time
// it moves (deleted, expired, or moved by a migrating client since the
// scan), and the new owner can already hold some (a client wrote them
// there). Neither kind was moved by the mover, so Report.Moved, its Flow
// and its Bytes must not count them; a key the new owner had counts as
// busy instead.
func TestMoveCountsOnlyKeysThatMoved(t *testing.T) {
	cases := []struct {
		name      string
		dump      bool
		old, new  []string // keys set on the old and the new node first
		keys      []string // the batch
		wantMoved int
		wantBusy  int64
	}{
		{name: "MIGRATE, every key gone", keys: []string{"a", "b", "c"}},
		{name: "MIGRATE, all there", old: []string{"a", "b", "c"}, keys: []string{"a", "b", "c"}, wantMoved: 3},
		{name: "MIGRATE, one at the new owner", old: []string{"a", "b", "c"}, new: []string{"b"}, keys: []string{"a", "b", "c"}, wantMoved: 2, wantBusy: 1},
		{name: "DUMP, every key gone", dump: true, keys: []string{"a", "b", "c"}},
		{name: "DUMP, one at the new owner, one gone", dump: true, old: []string{"a", "b"}, new: []string{"b"}, keys: []string{"a", "b", "c"}, wantMoved: 1, wantBusy: 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newDumpRig(t, 0)
			r.m.opts.Dump = tc.dump
			r.m.limit = newLimiter(0, 0)
			for _, k := range tc.old {
				_, err := r.servers[0].Do("SET", k, "old")
				require.NoError(t, err)
			}
			for _, k := range tc.new {
				_, err := r.servers[1].Do("SET", k, "new")
				require.NoError(t, err)
			}
			_, err := r.m.moveChunk(ctx, r.conn, r.src, r.dst, tc.keys, nil)
			require.NoError(t, err)
			require.Equal(t, int64(tc.wantMoved), r.m.moved.Load(), "keys counted as moved")
			require.Equal(t, tc.wantBusy, r.m.busy.Load(), "keys counted as busy")
			f := r.m.flows[[2]string{r.src.Addr, r.dst.Addr}]
			require.NotNil(t, f, "the flow from the old to the new node")
			require.Equal(t, int64(tc.wantMoved), f.Keys, "keys of the flow")
			for _, k := range tc.keys {
				n, err := r.servers[0].Do("EXISTS", k)
				require.NoError(t, err)
				require.Equal(t, "0", n, "%s left at the old node", k)
			}
			for _, k := range tc.new {
				v, err := r.servers[1].Do("GET", k)
				require.NoError(t, err)
				require.Equal(t, "new", v, "the new owner's %s kept", k)
			}
		})
	}
}
