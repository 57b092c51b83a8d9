package shardisotel_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
)

// TestReview8ErrorTypeIsACodeNotData: a span's error.type,
// db.response.status_code and status come from the error reply's first
// word when it is an error code (ERR, WRONGTYPE, ...). A script's error
// reply is the script's own text (redis.error_reply, {err=...}): its first
// word can be a key, a value or a secret, and must not become an
// attribute; the outcome class stands for it. With statements off no
// span may carry such data.
func TestReview8ErrorTypeIsACodeNotData(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	tel := ringTelemetry(t, []*redistest.Server{s})
	ctx := context.Background()
	cases := []struct {
		name, script, secret, want string
	}{
		{"error_reply with a value", "return redis.error_reply('tok3n-S3cret rejected')", "S3cret", "server_error"},
		{"err table with a key", "return {err='user:alice@example.com is locked'}", "alice", "server_error"},
		{"lower-case word", "return redis.error_reply('hunter2 was the password')", "hunter2", "server_error"},
		{"a code", "return redis.error_reply('MYCODE a message with pa55 inside')", "pa55", "MYCODE"},
		{"a runtime error", "error('boom pa55')", "pa55", "ERR"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			tel.spans.Reset()
			_, err := tel.c.DoKey(ctx, "k", "EVAL", tc.script, "0")
			require.Error(t, err)
			ended := tel.spans.Ended()
			require.Len(t, ended, 1)
			sp := ended[0]
			a := attrs(sp.Attributes())
			assert.Equal(t, tc.want, a["error.type"])
			if tc.want == "server_error" {
				assert.NotContains(t, a, "db.response.status_code")
			} else {
				assert.Equal(t, tc.want, a["db.response.status_code"])
			}
			assert.Equal(t, codes.Error, sp.Status().Code)
			text := fmt.Sprintf("%v %v %v", sp.Attributes(), sp.Events(), sp.Status())
			assert.NotContains(t, text, tc.secret)
			assert.False(t, strings.Contains(text, "@example.com"), text)
		})
	}
}
