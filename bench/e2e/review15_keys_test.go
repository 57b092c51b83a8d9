package e2e

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// Every key a case uses exists before the case starts, so that the SETs
// of every case overwrite (the first case run does not create keys that
// later cases overwrite); the run deletes them at the end.
func TestReview15EveryCaseOverwrites(t *testing.T) {
	srv := redistest.StartNTB(t, 1, redistest.Options{})[0]
	c := Case{Name: "single c=1", Kind: Single, Callers: 1, Size: 1}
	atStart := -1
	rep, err := Run(context.Background(), []Target{oneServerTarget(srv)}, Options{
		Duration: 50 * time.Millisecond, Cases: []Case{c},
		Progress: func(p Progress) {
			if atStart < 0 {
				atStart = dbsize(t, srv.Addr)
			}
		},
	})
	require.NoError(t, err)
	require.Len(t, rep.Results, 1)
	assert.Positive(t, rep.Results[0].Ops)
	assert.Equal(t, Keyspace, atStart, "keys on the server when the first case started")
	assert.Zero(t, dbsize(t, srv.Addr), "keys left after the run")
}

// A run that cannot delete its keys says so in its error: the keys stay
// on the user's servers.
func TestReview15CleanupFailureIsReported(t *testing.T) {
	srv := redistest.StartNTB(t, 1, redistest.Options{})[0]
	c := Case{Name: "single c=1", Kind: Single, Callers: 1, Size: 1}
	denied := false
	rep, err := Run(context.Background(), []Target{oneServerTarget(srv)}, Options{
		Duration: 50 * time.Millisecond, Cases: []Case{c},
		Progress: func(p Progress) {
			if !denied { // DEL refused from now on: the cleanup fails
				denied = true
				_, aerr := srv.Do("ACL", "SETUSER", "default", "-del")
				assert.NoError(t, aerr)
			}
		},
	})
	require.NotNil(t, rep)
	require.Len(t, rep.Results, 1)
	require.Error(t, err)
	assert.True(t, errors.Is(err, ErrCleanup), "%v does not wrap ErrCleanup", err)
	assert.True(t, strings.Contains(err.Error(), KeyPrefix), "%v does not name the keys", err)
	assert.Equal(t, Keyspace, dbsize(t, srv.Addr), "keys left after the run")
}
