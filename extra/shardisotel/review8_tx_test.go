package shardisotel_test

import (
	"context"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/extra/shardisotel"
	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
)

// TestReview8TransactionIsASpan: a Client.Tx is one span named MULTI on
// its node, with a child span for its MULTI ... EXEC, and its commands
// measured on the node; a transaction aborted by a watched key is an
// error span (server_error). The statement is the whole transaction,
// secrets hidden.
func TestReview8TransactionIsASpan(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	tel := ringTelemetry(t, []*redistest.Server{s}, shardisotel.WithStatements(0))
	ctx := context.Background()
	const key = "r8tx"

	_, err := tel.c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		if _, err := tx.Do("GET", key); err != nil {
			return err
		}
		return tx.Queue("CONFIG", "SET", "masterauth", "tx-Secret-1")
	})
	require.NoError(t, err)
	_, err = tel.c.Tx(ctx, []string{key}, func(tx *shard.Tx) error {
		conn, err := redis.Dial("tcp", s.Addr)
		if err != nil {
			return err
		}
		defer conn.Close()
		if _, err := conn.Do("SET", key, "changed"); err != nil {
			return err
		}
		return tx.Queue("SET", key, "mine")
	})
	require.ErrorIs(t, err, shard.ErrTxAborted)

	var ops, parts []map[string]string
	var status []codes.Code
	for _, sp := range tel.spans.Ended() {
		a := attrs(sp.Attributes())
		a["name"] = sp.Name()
		switch sp.Name() {
		case "MULTI":
			ops = append(ops, a)
			status = append(status, sp.Status().Code)
		case "MULTI " + s.Addr: // the MULTI ... EXEC batch, named by PipelineEvent.Operation
			parts = append(parts, a)
		default:
			t.Errorf("unexpected span %q", sp.Name())
		}
	}
	require.Len(t, ops, 2)
	require.Len(t, parts, 2)
	assert.Equal(t, "MULTI", ops[0]["db.operation.name"])
	assert.Equal(t, s.Addr, ops[0]["server.address"]+":"+ops[0]["server.port"])
	assert.Equal(t, "WATCH r8tx\nMULTI\nCONFIG SET masterauth ?\nEXEC", ops[0]["db.query.text"])
	assert.Equal(t, "MULTI\nCONFIG SET masterauth ?\nEXEC", parts[0]["db.query.text"])
	assert.Equal(t, []codes.Code{codes.Unset, codes.Error}, status)
	assert.Equal(t, "server_error", ops[1]["error.type"])
	assert.Equal(t, "server_error", parts[1]["error.type"])
	for _, sp := range tel.spans.Ended() {
		for _, kv := range sp.Attributes() {
			assert.NotContains(t, kv.Value.String(), "tx-Secret-1")
		}
	}
	assert.Equal(t, map[string]uint64{
		s.Addr + " WATCH ok":           2,
		s.Addr + " GET ok":             1,
		s.Addr + " MULTI ok":           1,
		s.Addr + " MULTI server_error": 1,
	}, durationSeries(t, tel.reader))
}
