package reshard

import (
	"testing"
	"time"
)

// TestDocumentedMoverDefaults pins the defaults docs/resharding.md gives
// the mover ("Batch (512) keys per MIGRATE", "MaxBlock (10 ms)", "its own
// Timeout (10 s)"), written here as the docs give them.
func TestDocumentedMoverDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	for _, tt := range []struct {
		doc       string
		got, want any
	}{
		{"Batch (512)", o.Batch, 512},
		{"MaxBlock (10 ms)", o.MaxBlock, 10 * time.Millisecond},
		{"Timeout (10 s)", o.Timeout, 10 * time.Second},
	} {
		if tt.got != tt.want {
			t.Errorf("docs/resharding.md says %s; the code has %v", tt.doc, tt.got)
		}
	}
}
