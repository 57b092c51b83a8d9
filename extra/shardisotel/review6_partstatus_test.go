package shardisotel_test

import (
	"context"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// TestReview6PipelinePartSpanHasErrorStatus: a node's part of a pipeline
// whose command failed (here LPUSH on a string: WRONGTYPE) is a failed
// operation on that node: its span carries error.type and, as the
// semantic conventions ask of a span with error.type, status Error, as
// the pipeline's own span does. Before, the part's span had error.type
// with status Unset, so a trace backend showed the failing node's part
// as a success.
func TestReview6PipelinePartSpanHasErrorStatus(t *testing.T) {
	s := redistest.StartTB(t, redistest.Options{})
	tel := ringTelemetry(t, []*redistest.Server{s})
	ctx := context.Background()
	p := tel.c.Pipeline()
	p.Send("SET", "r6part:k", "v")
	p.Send("LPUSH", "r6part:k", "x")
	res, err := p.Exec(ctx)
	require.NoError(t, err)
	require.Len(t, res, 2)
	require.NoError(t, res[0].Err)
	require.Error(t, res[1].Err, "LPUSH on a string")

	var part, whole sdktrace.ReadOnlySpan
	for _, sp := range tel.spans.Ended() {
		switch {
		case sp.Name() == "PIPELINE":
			whole = sp
		case strings.HasPrefix(sp.Name(), "PIPELINE "):
			part = sp
		}
	}
	require.NotNil(t, whole, "no PIPELINE span")
	require.NotNil(t, part, "no span for the node's part")
	assert.Equal(t, codes.Error, whole.Status().Code, "the pipeline's span")
	assert.Equal(t, "WRONGTYPE", attrs(part.Attributes())["error.type"], "the part's error.type")
	assert.Equal(t, codes.Error, part.Status().Code, "the part's span has error.type %q but status %v",
		attrs(part.Attributes())["error.type"], part.Status())
	assert.NotContains(t, part.Status().Description, "r6part", "the status quotes no argument")
}
