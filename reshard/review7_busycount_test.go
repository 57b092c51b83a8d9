package reshard

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// Report.Busy counts keys the new owner already had whose old copy the
// mover deleted. A key met at both owners (BUSYKEY) whose DEL at the old
// node fails (here the old server has no DEL) was counted as busy all the
// same, although its old copy stays; the batch fails with a NodeError
// naming the old node. With a working DEL it is one busy key, none moved.
func TestReview7MigrateCountsBusyOnlyWhenTheOldCopyIsDeleted(t *testing.T) {
	cases := []struct {
		name          string
		oldArgs       []string
		wantErr       bool
		wantBusy      int64
		wantOldCopies string // EXISTS on the old node
	}{
		{name: "DEL fails", oldArgs: []string{"--rename-command", "DEL", "DEL-hidden-review7"}, wantErr: true, wantBusy: 0, wantOldCopies: "1"},
		{name: "DEL works", wantBusy: 1, wantOldCopies: "0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			oldSrv := redistest.StartTB(t, redistest.Options{Args: tc.oldArgs})
			newSrv := redistest.StartTB(t, redistest.Options{})
			from, err := shard.ParseURL("redis-ring://" + oldSrv.Addr + "?names=a")
			require.NoError(t, err)
			to, err := shard.ParseURL("redis-ring://" + newSrv.Addr + "?names=b")
			require.NoError(t, err)
			pools, err := pool.NewSet(moverPool(to.Pool))
			require.NoError(t, err)
			defer pools.Close()
			m := &mover{opts: Options{From: from, To: to, Timeout: 5 * time.Second}.withDefaults(), pools: pools, flows: map[[2]string]*Flow{}}
			src := shard.Node{Name: "a", Addr: oldSrv.Addr}
			dst := shard.Node{Name: "b", Addr: newSrv.Addr}
			_, err = oldSrv.Do("SET", "k", "old")
			require.NoError(t, err)
			_, err = newSrv.Do("SET", "k", "new")
			require.NoError(t, err)
			conn, err := pools.Get(ctx, src.Addr)
			require.NoError(t, err)
			defer conn.Close()

			moved, err := m.migrate(ctx, conn, src, dst, []string{"k"}, nil)
			if tc.wantErr {
				var nerr *shard.NodeError
				require.True(t, errors.As(err, &nerr), "%T %v, want a NodeError", err, err)
				require.Equal(t, src.Addr, nerr.Node.Addr)
			} else {
				require.NoError(t, err)
				require.Equal(t, 0, moved, "a busy key is not a moved one")
			}
			require.Equal(t, tc.wantBusy, m.busy.Load(), "busy")
			n, err := oldSrv.Do("EXISTS", "k")
			require.NoError(t, err)
			require.Equal(t, tc.wantOldCopies, n, "old copies")
			v, err := newSrv.Do("GET", "k")
			require.NoError(t, err)
			require.Equal(t, "new", v, "the new owner's copy is kept")
		})
	}
}
