package shard_test

import (
	"context"
	"errors"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// MigrationInfo.BusyKeys counts the keys found at both owners whose old
// copy this client deleted. A key met at both owners (MIGRATE answers
// BUSYKEY) whose DEL at the old owner fails (here the old server has no
// DEL) was counted all the same, although the old copy stays: the count
// said a copy was deleted that was not. Such a key is a failure
// (Failures, a *MigrateError), not a busy key; with a working DEL it is
// one busy key and the command runs on the new owner's copy.
func TestReview7MigrationBusyKeysCountsDeletedCopiesOnly(t *testing.T) {
	cases := []struct {
		name             string
		oldArgs          []string
		wantErr          bool
		wantBusy         int64
		wantFailures     int64
		wantOldCopyStays bool
	}{
		{name: "DEL fails", oldArgs: []string{"--rename-command", "DEL", "DEL-hidden-review7"}, wantErr: true,
			wantBusy: 0, wantFailures: 1, wantOldCopyStays: true},
		{name: "DEL works", wantBusy: 1, wantFailures: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			oldSrv := redistest.StartTB(t, redistest.Options{Args: tc.oldArgs})
			newSrv := redistest.StartTB(t, redistest.Options{})
			from := ringConfig([]*redistest.Server{oldSrv})
			to := ringConfig([]*redistest.Server{newSrv})
			to.Shards = []ring.Shard{{Name: "new-0", Addr: newSrv.Addr, Weight: 1}}
			const k = "busy:k"
			_, err := oldSrv.Do("SET", k, "5")
			require.NoError(t, err)
			_, err = newSrv.Do("SET", k, "9") // the newer copy, at the new owner
			require.NoError(t, err)
			to.Migration = &shard.Migration{From: &from, Armed: true}
			c := newClient(t, to)

			got, err := redis.Int(c.Do(ctx, "INCR", k))
			if tc.wantErr {
				var me *shard.MigrateError
				require.True(t, errors.As(err, &me), "%T %v, want a *MigrateError", err, err)
			} else {
				require.NoError(t, err)
				require.Equal(t, 10, got, "the INCR runs on the new owner's copy")
			}
			info, ok := c.Migration()
			require.True(t, ok)
			require.Equal(t, tc.wantBusy, info.BusyKeys, "BusyKeys")
			require.Equal(t, tc.wantFailures, info.Failures, "Failures")
			n, err := oldSrv.Do("EXISTS", k)
			require.NoError(t, err)
			if tc.wantOldCopyStays {
				require.Equal(t, "1", n, "the old copy")
			} else {
				require.Equal(t, "0", n, "the old copy")
			}
		})
	}
}
