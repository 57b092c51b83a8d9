package command

import (
	"math"
	"slices"
	"testing"
)

// A server's COMMAND INFO entry may give a key spec any keystep. With a
// step near the largest int, the loop that walks the key range overflowed
// into negative indexes and returned positions outside the arguments, on
// which the client indexed its arguments and panicked. A step past the end
// of the range must give the first key alone.
func TestReview14HugeKeyStepGivesTheFirstKeyOnly(t *testing.T) {
	for _, tt := range []struct {
		name      string
		find      string
		findSpec  []any
		args      []any
		positions []int
	}{
		{"range, largest step", "range",
			[]any{[]byte("lastkey"), int64(0), []byte("keystep"), int64(math.MaxInt64), []byte("limit"), int64(0)},
			[]any{"k"}, []int{0}},
		{"range to the end, largest step", "range",
			[]any{[]byte("lastkey"), int64(-1), []byte("keystep"), int64(math.MaxInt64), []byte("limit"), int64(0)},
			[]any{"k", "v", "k2", "v2"}, []int{0}},
		{"range to the end, step just past it", "range",
			[]any{[]byte("lastkey"), int64(-1), []byte("keystep"), int64(math.MaxInt64 - 2), []byte("limit"), int64(0)},
			[]any{"k", "v", "k2"}, []int{0}},
		{"range to the end, step 2", "range",
			[]any{[]byte("lastkey"), int64(-1), []byte("keystep"), int64(2), []byte("limit"), int64(0)},
			[]any{"k", "v", "k2", "v2", "k3"}, []int{0, 2, 4}},
		{"keynum, largest step", "keynum",
			[]any{[]byte("keynumidx"), int64(0), []byte("firstkey"), int64(1), []byte("keystep"), int64(math.MaxInt64)},
			[]any{int64(3), "a", "b", "c"}, []int{1}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			entry := learnEntry(-2, nil, "index", []any{[]byte("index"), int64(1)}, tt.find, tt.findSpec)
			info, err := FromCommandInfo(entry)
			if err != nil {
				t.Fatal(err)
			}
			got, err := info.KeyPositions(tt.args, nil)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(got, tt.positions) {
				t.Errorf("KeyPositions(%q) = %v, want %v", tt.args, got, tt.positions)
			}
		})
	}
}
