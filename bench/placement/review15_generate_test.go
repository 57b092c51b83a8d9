package placement

import (
	"errors"
	"testing"
)

// A key count that cannot be held in memory is bad input, not a crash of
// the process (past some size a fatal out-of-memory error, which cannot be
// recovered).
func TestReview15GenerateKeysRefusesHugeCounts(t *testing.T) {
	var keys []string
	var err error
	func() {
		defer func() {
			if r := recover(); r != nil {
				err = nil
				t.Errorf("GenerateKeys panicked: %v", r)
			}
		}()
		keys, err = GenerateKeys("k:{id}", 1<<40)
	}()
	if !errors.Is(err, ErrBadInput) {
		t.Errorf("GenerateKeys(1<<40): %v, want an error wrapping ErrBadInput", err)
	}
	if keys != nil {
		t.Errorf("GenerateKeys(1<<40) returned %d keys", len(keys))
	}
}
