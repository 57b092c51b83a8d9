package shard_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMigrationPipelineSendsNoFailedMove runs pipelines in which the
// commands on a key whose old owner is down fail to move it, while another
// command goes to a live node. The failed commands must fail with a
// *shard.MigrateError and be sent nowhere: sent with the others, a SET
// would be acknowledged by a node that owns its key in neither topology
// (a write the owner never sees, found misplaced by verify).
func TestMigrationPipelineSendsNoFailedMove(t *testing.T) {
	ctx := context.Background()
	servers := redistest.StartNTB(t, 4, redistest.Options{})
	from, to := ringConfig(servers[:3]), ringConfig(servers)
	dead := servers[0]
	// moving: old owner dead, new owner servers[3]; staying: a live node in both.
	var moving, staying []string
	for i := 0; len(moving) < 5 || len(staying) < 5; i++ {
		k := fmt.Sprintf("plf:%d", i)
		oldOwner, newOwner := ringOwner(t, from, k), ringOwner(t, to, k)
		switch {
		case oldOwner == dead.Addr && newOwner == servers[3].Addr && len(moving) < 5:
			moving = append(moving, k)
		case oldOwner == newOwner && oldOwner != dead.Addr && len(staying) < 5:
			staying = append(staying, k)
		}
	}
	cfg := to
	cfg.Migration = &shard.Migration{From: &from, Armed: true}
	c := newClient(t, cfg)
	require.NoError(t, dead.Kill())
	cases := []struct {
		name string
		cmds [][]any // the moving key's commands first
	}{
		{"SET and GET, then INCR on a live node", [][]any{{"SET", "%m", "v"}, {"GET", "%m"}, {"INCR", "%s"}}},
		{"INCR on a live node first", [][]any{{"INCR", "%s"}, {"SET", "%m", "v"}}},
		{"only the moving key", [][]any{{"SET", "%m", "v"}, {"LPUSH", "%m", "x"}}},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m, s := moving[i], staying[i]
			pl := c.Pipeline()
			for _, cmd := range tc.cmds {
				args := make([]any, 0, len(cmd)-1)
				for _, a := range cmd[1:] {
					switch a {
					case "%m":
						a = m
					case "%s":
						a = s
					}
					args = append(args, a)
				}
				pl.Send(cmd[0].(string), args...)
			}
			res, err := pl.Exec(ctx)
			require.NoError(t, err)
			require.Len(t, res, len(tc.cmds))
			for j, cmd := range tc.cmds {
				if cmd[1] == "%s" {
					assert.NoError(t, res[j].Err, "%v on a live node", cmd)
					continue
				}
				var me *shard.MigrateError
				if assert.ErrorAs(t, res[j].Err, &me, "%v: reply %v", cmd, res[j].Reply) {
					assert.Equal(t, dead.Addr, me.From.Addr)
				}
			}
			for _, srv := range servers[1:] {
				n, err := srv.Do("EXISTS", m)
				require.NoError(t, err)
				assert.Equal(t, "0", n, "%s reached %s, which owns it in neither topology", m, srv.Addr)
			}
		})
	}
}
