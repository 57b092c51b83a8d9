package sentinel_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/shardis/shardis/sentinel"
)

// A SetError's text does not claim that no Sentinel answered when they
// did, but named a master that failed the check or answered with an
// error: it says no answer was usable, and each Sentinel's own reason.
func TestReview9SetErrorSaysWhyNoAnswerWasUsable(t *testing.T) {
	tests := []struct {
		name string
		errs []error
		want string
	}{
		{
			name: "a master that failed the check",
			errs: []error{&sentinel.QueryError{Addr: "127.0.0.1:26379", Err: fmt.Errorf("named 127.0.0.1:6379, which failed the check: %w", sentinel.ErrNotMaster)}},
			want: `shardis: sentinel: no usable answer from the Sentinels for master "mymaster"; sentinel 127.0.0.1:26379: named 127.0.0.1:6379, which failed the check: shardis: sentinel: server is not a master`,
		},
		{
			name: "unreachable and unknown master",
			errs: []error{
				&sentinel.QueryError{Addr: "127.0.0.1:26379", Err: errors.New("connection refused")},
				&sentinel.QueryError{Addr: "127.0.0.1:26380", Err: sentinel.ErrUnknownMaster},
			},
			want: `shardis: sentinel: no usable answer from the Sentinels for master "mymaster"; sentinel 127.0.0.1:26379: connection refused; sentinel 127.0.0.1:26380: unknown master name`,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := &sentinel.SetError{Master: "mymaster", Errs: tt.errs}
			if got := err.Error(); got != tt.want {
				t.Fatalf("got  %s\nwant %s", got, tt.want)
			}
			if !errors.Is(err, sentinel.ErrNoSentinel) {
				t.Fatal("a SetError does not match ErrNoSentinel")
			}
		})
	}
}
