package shard_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shardis/shardis/shard"
)

// holdGate holds, once armed, the first call that reaches it until
// release is closed: a caller held between a command's planning and its
// sending (holdPlanned; startHooks: a slow Start hook, which a migration's
// fence does not count) or a slow hook during its execution
// (commandHooks).
type holdGate struct {
	armed   atomic.Bool
	held    chan struct{} // closed when a call is held
	release chan struct{} // closed by the test to let it go on
}

func newHoldGate() *holdGate {
	return &holdGate{held: make(chan struct{}), release: make(chan struct{})}
}

// arm makes the gate hold the next call that reaches it.
func (g *holdGate) arm() { g.armed.Store(true) }

// hold arms the gate, runs call in a goroutine and returns once the gate
// holds it (failing t if that takes 30s), with the channel on which
// call's error comes once the test closes release.
func (g *holdGate) hold(t *testing.T, call func() error) <-chan error {
	t.Helper()
	g.arm()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case <-g.held:
	case err := <-done:
		t.Fatalf("the call ended without reaching the gate: %v", err)
	case <-time.After(30 * time.Second):
		t.Fatal("the call did not reach the gate")
	}
	return done
}

// wait holds its caller if the gate is armed, disarming it.
func (g *holdGate) wait() {
	if g.armed.CompareAndSwap(true, false) {
		close(g.held)
		<-g.release
	}
}

// startHooks returns hooks whose Start hook waits at the gate for an
// operation named name (any, if name is "").
func (g *holdGate) startHooks(name string) *shard.Hooks {
	return &shard.Hooks{Start: func(ctx context.Context, op *shard.Op) context.Context {
		if name == "" || op.Name == name {
			g.wait()
		}
		return ctx
	}}
}

// holdPlanned makes the gate hold, until t ends, an operation named name
// (any, if name is "") counted by a migration's fence between its
// planning and its execution (shard.AfterPlanning): a caller held there
// (descheduled, or waiting for a pooled connection) holds the switch.
func (g *holdGate) holdPlanned(t *testing.T, name string) {
	shard.AfterPlanning(func(_ *shard.Client, op string) {
		if name == "" || op == name {
			g.wait()
		}
	})
	t.Cleanup(func() { shard.AfterPlanning(nil) })
}

// holdOverwrite makes the gate hold, until t ends, a blind overwrite of
// a migration between its write at the new owner and the delete of the
// old copy (shard.BetweenOverwriteSteps).
func (g *holdGate) holdOverwrite(t *testing.T) {
	shard.BetweenOverwriteSteps(func(*shard.Client) { g.wait() })
	t.Cleanup(func() { shard.BetweenOverwriteSteps(nil) })
}

// commandHooks returns hooks whose Command hook waits at the gate for a
// command named name.
func (g *holdGate) commandHooks(name string) *shard.Hooks {
	return &shard.Hooks{Command: func(_ context.Context, ev *shard.CommandEvent) {
		if ev.Name == name {
			g.wait()
		}
	}}
}

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
