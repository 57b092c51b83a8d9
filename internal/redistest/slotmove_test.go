package redistest

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
)

// TestMoveSlotMovesTheKeysAndTellsEveryMaster: MoveSlot on a cluster with
// a password, from a slot's master to another (OtherMaster), moves the 250 keys of a slot in batches of 100 (three
// MIGRATE calls, logged in at the target), and afterwards every master
// names the target as the slot's owner and the source holds none of its
// keys. A slot with no keys moves without a MIGRATE.
func TestMoveSlotMovesTheKeysAndTellsEveryMaster(t *testing.T) {
	c := StartClusterTB(t, 3, 0, Options{DefaultPassword: "move-slot-pw"})
	ctx := context.Background()
	v, err := c.Nodes[0].Do("CLUSTER", "KEYSLOT", "{ms}")
	if err != nil {
		t.Fatal(err)
	}
	slot, err := strconv.Atoi(v)
	if err != nil {
		t.Fatal(err)
	}
	masters := c.Masters()
	if len(masters) != 3 {
		t.Fatalf("%d masters, want 3", len(masters))
	}
	// ends returns the master of slot and another one to move it to.
	ends := func(slot int) (from, to *Server) {
		t.Helper()
		from, err := c.MasterOfSlot(slot)
		if err != nil {
			t.Fatal(err)
		}
		to, err = c.OtherMaster(from)
		if err != nil {
			t.Fatal(err)
		}
		if to == from || !slices.Contains(masters, to) {
			t.Fatalf("OtherMaster(%s) = %s, not another of the masters %v", from, to, masters)
		}
		return from, to
	}
	from, to := ends(slot)
	const n = 250
	for i := range n {
		if _, err := from.Do("SET", fmt.Sprintf("{ms}:%d", i), strconv.Itoa(i)); err != nil {
			t.Fatal(err)
		}
	}

	calls, err := MoveSlot(ctx, slot, from, to, masters, SlotMoveOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if calls != 3 {
		t.Errorf("%d MIGRATE calls for %d keys, want 3 of 100", calls, n)
	}
	for _, check := range []struct {
		s    *Server
		want string
	}{{from, "0"}, {to, strconv.Itoa(n)}} {
		if got, err := check.s.Do("CLUSTER", "COUNTKEYSINSLOT", strconv.Itoa(slot)); err != nil || got != check.want {
			t.Errorf("%s holds %q keys of slot %d (%v), want %s", check.s.Addr, got, slot, err, check.want)
		}
	}
	if got, err := to.Do("GET", "{ms}:249"); err != nil || got != "249" {
		t.Errorf("GET at the target = %q, %v; want 249", got, err)
	}
	for _, m := range masters {
		if owner := slotOwner(t, m, slot); owner != to.Port {
			t.Errorf("%s says port %d owns slot %d, want %d", m.Addr, owner, slot, to.Port)
		}
	}

	// An empty slot: no MIGRATE, and the owner changes all the same.
	empty := (slot + 1) % SlotCount
	owner, dst := ends(empty)
	calls, err = MoveSlot(ctx, empty, owner, dst, masters, SlotMoveOptions{})
	if err != nil || calls != 0 {
		t.Errorf("MoveSlot of an empty slot = %d, %v; want 0 MIGRATE calls", calls, err)
	}
	for _, m := range masters {
		if got := slotOwner(t, m, empty); got != dst.Port {
			t.Errorf("%s says port %d owns slot %d, want %d", m.Addr, got, empty, dst.Port)
		}
	}
}

// TestKeyOnFindsAKeyOfTheMaster: KeyOn returns a key whose slot, as the
// server computes it, the given master serves.
func TestKeyOnFindsAKeyOfTheMaster(t *testing.T) {
	c := StartClusterTB(t, 3, 0, Options{})
	masters := c.Masters()
	if len(masters) != 3 {
		t.Fatalf("%d masters, want 3", len(masters))
	}
	for _, m := range masters {
		k, slot, err := c.KeyOn(m, "ko")
		if err != nil {
			t.Fatal(err)
		}
		if v, err := m.Do("CLUSTER", "KEYSLOT", k); err != nil || v != strconv.Itoa(slot) {
			t.Errorf("KeyOn(%s) = %q in slot %d; KEYSLOT says %q, %v", m.Addr, k, slot, v, err)
		}
		if owner := slotOwner(t, masters[0], slot); owner != m.Port {
			t.Errorf("KeyOn(%s) = %q in slot %d, which port %d serves", m.Addr, k, slot, owner)
		}
	}
}

// slotOwner returns the port of the master that s says serves slot, from
// its CLUSTER NODES.
func slotOwner(t *testing.T, s *Server, slot int) int {
	t.Helper()
	for _, n := range nodesView(t, s) {
		if n.has("master") && n.owns(slot) {
			return n.Port
		}
	}
	return 0
}
