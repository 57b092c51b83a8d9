package report

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestMovementChartWithAStrategyThatMovesNothing: a strategy that moves
// no key when a shard is added (a placement that ignores the new shard)
// has a ratio of 0, which a logarithmic axis cannot show. The chart must
// still come out whole: no -Inf or NaN in it, and its axis starting at a
// positive value (0.5 or lower, as for any other report).
func TestMovementChartWithAStrategyThatMovesNothing(t *testing.T) {
	r := placementReport(t)
	require.NotEmpty(t, r.Results)
	r.Results[0].Add.MovedPct = 0
	data, err := MovementChart(r)
	require.NoError(t, err)
	svg := string(data)
	for _, bad := range []string{"NaN", "Inf"} {
		assert.False(t, strings.Contains(svg, bad), "the chart holds %s", bad)
	}
	texts := svgTexts(t, data)
	assert.Contains(t, texts, "0.5", "the axis starts at 0.5 as for any report")
}
