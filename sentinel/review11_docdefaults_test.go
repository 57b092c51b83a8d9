package sentinel

import (
	"testing"
	"time"
)

// TestDocumentedSentinelDefaults pins what docs/sentinel.md states of this
// package: the +switch-master subscription is "PINGed every second", and
// the channel is +switch-master.
func TestDocumentedSentinelDefaults(t *testing.T) {
	if watchKeepAlive != time.Second {
		t.Errorf("docs/sentinel.md: subscriptions PINGed every second; the code has %v", watchKeepAlive)
	}
	if SwitchMasterChannel != "+switch-master" {
		t.Errorf("docs/sentinel.md: the channel is +switch-master; the code has %q", SwitchMasterChannel)
	}
}
