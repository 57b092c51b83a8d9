package shard_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// review11TxRuns are the ways a transaction sends a value: each run
// queues or sends SET r11:k value, then INCR r11:n, and returns the
// errors of the commands after the SET (a Conn's; none for Client.Tx)
// and that of the SET (Client.Tx: the transaction's).
var review11TxRuns = []struct {
	name string
	run  func(c *shard.Client, value string) (after []error, setErr error)
}{
	{"Tx", func(c *shard.Client, value string) ([]error, error) {
		_, err := c.Tx(context.Background(), []string{"r11:k"}, func(tx *shard.Tx) error {
			if err := tx.Queue("SET", "r11:k", value); err != nil {
				return err
			}
			return tx.Queue("INCR", "r11:n")
		})
		return nil, err
	}},
	{"Tx.Do", func(c *shard.Client, value string) ([]error, error) {
		_, err := c.Tx(context.Background(), []string{"r11:k"}, func(tx *shard.Tx) error {
			_, err := tx.Do("SET", "r11:k", value)
			return err
		})
		return nil, err
	}},
	{"Conn MULTI/EXEC", func(c *shard.Client, value string) ([]error, error) {
		conn := c.Conn()
		defer conn.Close()
		for _, cmd := range [][]any{{"WATCH", "r11:k"}, {"MULTI"}, {"SET", "r11:k", value}, {"INCR", "r11:n"}, {"EXEC"}} {
			if err := conn.Send(cmd[0].(string), cmd[1:]...); err != nil {
				return nil, err
			}
		}
		r, err := conn.Do("")
		replies, _ := r.([]any)
		if len(replies) != 5 {
			return []error{err}, errors.New("Do(\"\") returned no 5 replies")
		}
		return []error{replyErr(replies[3]), replyErr(replies[4])}, replyErr(replies[2])
	}},
	{"Conn under WATCH", func(c *shard.Client, value string) ([]error, error) {
		conn := c.Conn()
		defer conn.Close()
		if _, err := conn.Do("WATCH", "r11:k"); err != nil {
			return nil, err
		}
		for _, cmd := range [][]any{{"SET", "r11:k", value}, {"INCR", "r11:n"}} {
			if err := conn.Send(cmd[0].(string), cmd[1:]...); err != nil {
				return nil, err
			}
		}
		r, err := conn.Do("")
		replies, _ := r.([]any)
		if len(replies) != 2 {
			return []error{err}, errors.New("Do(\"\") returned no 2 replies")
		}
		return []error{replyErr(replies[1])}, replyErr(replies[0])
	}},
}

// replyErr returns a Conn's reply that is an error, or a stand-in error
// for one that is not (the command should have failed).
func replyErr(r any) error {
	if err, ok := r.(error); ok {
		return err
	}
	return errors.New("succeeded")
}

// TestReview11TransactionResetGetsTheServersRefusal: a server refuses a
// value over its proto-max-bulk-len with "-ERR Protocol error: invalid
// bulk length" and resets the connection while the value is still being
// written. A transaction (Client.Tx, a Tx.Do, MULTI ... EXEC or a write
// under WATCH on a Conn) whose write met the reset returned the bare
// write error, "write: connection reset by peer" (in every round with a
// 32 MB value), although the server's refusal was in the socket: a
// plain Do and a pipeline read it. The refusal must be the error (the
// SET's, on a Conn), the commands after it fail as not run, nothing is
// of unknown outcome, and nothing after the value ran.
func TestReview11TransactionResetGetsTheServersRefusal(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--proto-max-bulk-len", "1mb"}})
	c := newClient(t, faultConfig(server.Addr, 2*time.Second))
	values := map[string]string{
		"32MB": strings.Repeat("x", 32<<20), // the write of the value meets the reset
		"2MB":  strings.Repeat("x", 2<<20),  // the reset comes at the value or what follows it
	}
	for _, tt := range review11TxRuns {
		for size, value := range values {
			t.Run(tt.name+"/"+size, func(t *testing.T) {
				for i := range 5 {
					after, setErr := tt.run(c, value)
					var re redis.Error
					if !errors.As(setErr, &re) || !strings.Contains(string(re), "Protocol error") {
						t.Errorf("round %d: SET of a value over proto-max-bulk-len: %v, want the server's protocol error", i, setErr)
					}
					for k, err := range after {
						assert.ErrorContains(t, err, "not run", "round %d: command %d after the refused SET", i, k)
						var uo *shard.UnknownOutcomeError
						assert.False(t, errors.As(err, &uo), "round %d: command %d after the refused SET: %v", i, k, err)
					}
					var uo *shard.UnknownOutcomeError
					assert.False(t, errors.As(setErr, &uo), "round %d: %v", i, setErr)
				}
			})
		}
	}
	n, err := server.Do("EXISTS", "r11:k", "r11:n")
	require.NoError(t, err)
	require.Equal(t, "0", n, "a command after a value over proto-max-bulk-len ran")
	require.False(t, c.Stats().Nodes[0].Down, "the node was marked down")
	_, err = c.Do(context.Background(), "SET", "r11:ok", "1")
	require.NoError(t, err)
}

// TestReview11TransactionResetWithoutRefusalSaysNotRun: a server that
// resets the connection without a reply (a query over its
// client-query-buffer-limit: it drops the client) leaves a transaction
// whose write it cut short not run; the error said only "write:
// connection reset by peer". As for a command sent by Do, it must say
// that the transaction (on a Conn: the SET and every command after it)
// did not run, and be of no unknown outcome.
func TestReview11TransactionResetWithoutRefusalSaysNotRun(t *testing.T) {
	server := redistest.StartTB(t, redistest.Options{Args: []string{"--client-query-buffer-limit", "1mb"}})
	c := newClient(t, faultConfig(server.Addr, 2*time.Second))
	value := strings.Repeat("x", 32<<20)
	for _, tt := range review11TxRuns {
		if tt.name == "Tx.Do" {
			continue // fn wrote through Do: its error is fn's, whatever ran before
		}
		t.Run(tt.name, func(t *testing.T) {
			for i := range 3 {
				after, setErr := tt.run(c, value)
				for k, err := range append([]error{setErr}, after...) {
					var re redis.Error
					assert.False(t, errors.As(err, &re), "round %d, command %d: a reply, where the server sent none: %v", i, k, err)
					var ne *shard.NodeError
					assert.True(t, errors.As(err, &ne), "round %d, command %d: %v, want a *NodeError", i, k, err)
					assert.ErrorContains(t, err, "not run", "round %d, command %d", i, k)
					var uo *shard.UnknownOutcomeError
					assert.False(t, errors.As(err, &uo), "round %d, command %d: %v", i, k, err)
				}
			}
		})
	}
	n, err := server.Do("EXISTS", "r11:k", "r11:n")
	require.NoError(t, err)
	require.Equal(t, "0", n, "a command after the reset ran")
	require.False(t, c.Stats().Nodes[0].Down, "the node was marked down")
}
