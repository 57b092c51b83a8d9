package shard_test

import (
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
)

// fenceWhileHeld runs call, whose hook gate holds, raises the fence (the
// fenced marker) while it is held, and gives the switch 10s to be
// acknowledged by the beacons before it releases the gate. It reports
// whether the switch was acknowledged while the hook was held, and
// returns the channel on which call's error comes.
func (s *switchSetup) fenceWhileHeld(t *testing.T, c *shard.Client, gate *holdGate, call func() error) (acked bool, done <-chan error) {
	t.Helper()
	done = gate.hold(t, call)
	s.mark(t, c, shard.PhaseFenced)
	deadline := time.Now().Add(10 * time.Second)
	for !s.beaconSays(shard.PhaseFenced) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	acked = s.beaconSays(shard.PhaseFenced)
	close(gate.release)
	return acked, done
}

// heldResult waits for the error of a call that fenceWhileHeld released.
func heldResult(t *testing.T, done <-chan error) error {
	t.Helper()
	select {
	case err := <-done:
		return err
	case <-time.After(60 * time.Second):
		t.Fatal("the held call never returned")
		return nil
	}
}
