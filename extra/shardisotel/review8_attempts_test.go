package shardisotel_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/shardis/shardis/cluster"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// spanEvents lists a span's events as "name" followed by their
// attributes.
func spanEvents(sp sdktrace.ReadOnlySpan) []map[string]string {
	var out []map[string]string
	for _, ev := range sp.Events() {
		a := attrs(ev.Attributes)
		a["name"] = ev.Name
		out = append(out, a)
	}
	return out
}

// TestReview8RedirectThenFinalResultIsOneSpan: a command whose slot moved
// is one span: the MOVED is an event that names both nodes, the span
// names the node that gave the final reply, and its status is Error only
// when that final reply is an error.
func TestReview8RedirectThenFinalResultIsOneSpan(t *testing.T) {
	rc := clusterForTest(t)
	ctx := context.Background()
	masters := rc.Masters()
	from, to := masters[0], masters[2]
	key, slot := emptySlotKey(t, rc, from, "r8att")
	fromID, toID := nodeID(t, from), nodeID(t, to)
	cases := []struct {
		name    string
		args    []any
		wantErr string // error.type; "" for a success
	}{
		{"success", []any{"SET", key, "v"}, ""},
		{"server error", []any{"INCR", key}, "ERR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel := newTelemetry(t, rc)
			// The client learns the slot's owner before it moves.
			_, err := tel.c.Do(ctx, "SET", key, "not a number")
			require.NoError(t, err)
			_, err = from.Do("DEL", key)
			require.NoError(t, err)
			// The slot is empty: assigning it to its new owner on both
			// sides moves it.
			assignSlot(t, slot, toID, to, from)
			t.Cleanup(func() {
				_, err := to.Do("DEL", key)
				assert.NoError(t, err)
				assignSlot(t, slot, fromID, from, to)
			})
			_, err = to.Do("SET", key, "not a number")
			require.NoError(t, err)

			tel.spans.Reset()
			_, err = tel.c.Do(ctx, tc.args[0].(string), tc.args[1:]...)
			if tc.wantErr == "" {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
			ended := tel.spans.Ended()
			require.Len(t, ended, 1, "one span for the command, whatever its attempts")
			sp := ended[0]
			a := attrs(sp.Attributes())
			assert.Equal(t, to.Addr, a["server.address"]+":"+a["server.port"], "the span names the node of the final reply")
			assert.Equal(t, "2", a["shardis.attempts"], "sent twice: to the old owner, then the new one")
			evs := spanEvents(sp)
			require.NotEmpty(t, evs)
			assert.Equal(t, "redirect", evs[0]["name"])
			assert.Equal(t, "MOVED", evs[0]["shardis.redirect.kind"])
			assert.Equal(t, from.Addr, evs[0]["shardis.redirect.from"])
			assert.Equal(t, to.Addr, evs[0]["shardis.redirect.to"])
			if tc.wantErr == "" {
				assert.Equal(t, codes.Unset, sp.Status().Code, "a redirect followed by a success is no error")
				assert.NotContains(t, a, "error.type")
				assert.Len(t, evs, 1, "%v", evs)
			} else {
				assert.Equal(t, codes.Error, sp.Status().Code)
				assert.Equal(t, tc.wantErr, a["error.type"])
				// The final attempt failed too: its event names its node.
				require.Len(t, evs, 2, "%v", evs)
				assert.Equal(t, "attempt failed", evs[1]["name"])
				assert.Equal(t, to.Addr, evs[1]["server.address"]+":"+evs[1]["server.port"])
				assert.Equal(t, tc.wantErr, evs[1]["error.type"])
			}
		})
	}
}

// TestReview8RetryAfterFailoverIsOneSpan: a command that waits out a
// failover (its master killed, a replica promoted) is one span: each
// failed attempt is an event that names the node it went to, the span
// names the promoted replica that answered in the end, and its status is
// not Error since the command succeeded.
func TestReview8RetryAfterFailoverIsOneSpan(t *testing.T) {
	if testing.Short() {
		t.Skip("starts its own cluster and kills a master")
	}
	rc := redistest.StartClusterTB(t, 3, 1, redistest.Options{NodeTimeout: time.Second})
	tel := instrumented(t, shard.Config{
		Mode:    shard.ModeCluster,
		Seeds:   rc.Seeds(),
		Pool:    pool.Options{DialTimeout: time.Second, ReadTimeout: time.Second},
		Health:  shard.HealthOptions{Interval: 100 * time.Millisecond, FailureLimit: 2, Timeout: 300 * time.Millisecond},
		Cluster: shard.ClusterOptions{MaxRetryWait: 60 * time.Second},
	})
	c, spans := tel.c, tel.spans
	ctx := context.Background()

	victim, err := rc.MasterOfSlot(0)
	require.NoError(t, err)
	replica, err := rc.ReplicaOf(victim)
	require.NoError(t, err)
	key := keyOfSlot0(t)
	_, err = c.Do(ctx, "SET", key, "before")
	require.NoError(t, err)
	require.NoError(t, victim.Kill())

	spans.Reset()
	dctx, cancel := context.WithTimeout(ctx, 60*time.Second)
	defer cancel()
	_, err = c.Do(dctx, "SET", key, "after")
	require.NoError(t, err, "the command waits out the failover")
	ended := spans.Ended()
	require.Len(t, ended, 1, "one span for the command, whatever its attempts")
	sp := ended[0]
	a := attrs(sp.Attributes())
	assert.Equal(t, replica.Addr, a["server.address"]+":"+a["server.port"], "the span names the promoted replica")
	assert.Equal(t, codes.Unset, sp.Status().Code, "the command succeeded in the end")
	assert.NotContains(t, a, "error.type")
	evs := spanEvents(sp)
	require.NotEmpty(t, evs, "the failed attempts show")
	victimSeen := false
	for _, ev := range evs {
		switch ev["name"] {
		case "attempt failed":
			addr := ev["server.address"] + ":" + ev["server.port"]
			assert.Contains(t, []string{victim.Addr, replica.Addr}, addr, "%v", ev)
			assert.NotEmpty(t, ev["shardis.outcome"], "%v", ev)
			victimSeen = victimSeen || addr == victim.Addr
		case "redirect":
		default:
			t.Errorf("unexpected event %v", ev)
		}
	}
	assert.True(t, victimSeen, "an attempt on the dead master shows: %v", evs)
	n, err := strconv.Atoi(a["shardis.attempts"])
	require.NoError(t, err, "shardis.attempts: %q", a["shardis.attempts"])
	assert.GreaterOrEqual(t, n, 2, "the command was sent again")
}

// keyOfSlot0 returns a key in hash slot 0.
func keyOfSlot0(t *testing.T) string {
	t.Helper()
	for i := 0; i < 1<<20; i++ {
		k := fmt.Sprintf("{r8f%d}", i)
		if cluster.Slot(k) == 0 {
			return k
		}
	}
	t.Fatal("no key in slot 0")
	return ""
}
