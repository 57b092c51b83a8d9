package redistest

import (
	"context"
	"fmt"
	"net"
	"strconv"
	"time"
)

// SlotMoveOptions tune MoveSlot. The zero value moves as fast as it can,
// 100 keys per MIGRATE.
type SlotMoveOptions struct {
	// Batch is how many keys one MIGRATE moves; 0 means 100.
	Batch int
	// Pause is slept after each MIGRATE, as a throttled migration tool
	// does, so that clients meet the slot half moved for a while.
	Pause time.Duration
}

// MoveSlot moves slot, with its keys, from the master from to the master
// to the way redis-cli --cluster reshard does: SETSLOT IMPORTING on to,
// MIGRATING on from, MIGRATE of opts.Batch keys at a time (logged in at to
// with the harness account) until from holds none, then SETSLOT NODE on
// to, from and each of others, so that every master named knows the new
// owner at once rather than by gossip. An empty slot moves without a
// MIGRATE. It returns how many MIGRATE calls it made, and stops at the
// first error, leaving the slot as far as it got. Each command waits at
// most 10 s, or until ctx ends.
func MoveSlot(ctx context.Context, slot int, from, to *Server, others []*Server, opts SlotMoveOptions) (int, error) {
	query := func(s *Server, args ...string) (any, error) {
		cctx, cancel := context.WithTimeout(ctx, doTimeout)
		defer cancel()
		return s.query(cctx, args...)
	}
	do := func(s *Server, args ...string) (string, error) {
		v, err := query(s, args...)
		return formatReply(v), err
	}
	if slot < 0 || slot >= SlotCount {
		return 0, fmt.Errorf("%w: slot %d not in 0..%d", ErrInvalid, slot, SlotCount-1)
	}
	batch := opts.Batch
	if batch <= 0 {
		batch = 100
	}
	fromID, err := do(from, "CLUSTER", "MYID")
	if err != nil {
		return 0, fmt.Errorf("redistest: CLUSTER MYID on %s: %w", from.Addr, err)
	}
	toID, err := do(to, "CLUSTER", "MYID")
	if err != nil {
		return 0, fmt.Errorf("redistest: CLUSTER MYID on %s: %w", to.Addr, err)
	}
	s := strconv.Itoa(slot)
	if _, err := query(to, "CLUSTER", "SETSLOT", s, "IMPORTING", fromID); err != nil {
		return 0, fmt.Errorf("redistest: SETSLOT %d IMPORTING on %s: %w", slot, to.Addr, err)
	}
	if _, err := query(from, "CLUSTER", "SETSLOT", s, "MIGRATING", toID); err != nil {
		return 0, fmt.Errorf("redistest: SETSLOT %d MIGRATING on %s: %w", slot, from.Addr, err)
	}
	host, port, err := net.SplitHostPort(to.Addr)
	if err != nil {
		return 0, fmt.Errorf("redistest: %w", err)
	}
	migrate := []string{"MIGRATE", host, port, "", "0", "5000"}
	if user, pass, ok := to.opts.credentials(); ok {
		if user == "" {
			migrate = append(migrate, "AUTH", pass)
		} else {
			migrate = append(migrate, "AUTH2", user, pass)
		}
	}
	migrate = append(migrate, "KEYS")
	calls := 0
	for {
		v, err := query(from, "CLUSTER", "GETKEYSINSLOT", s, strconv.Itoa(batch))
		if err != nil {
			return calls, fmt.Errorf("redistest: GETKEYSINSLOT %d on %s: %w", slot, from.Addr, err)
		}
		keys, ok := v.([]any)
		if !ok {
			return calls, fmt.Errorf("redistest: GETKEYSINSLOT %d on %s answered %T", slot, from.Addr, v)
		}
		if len(keys) == 0 {
			break
		}
		args := append([]string(nil), migrate...)
		for _, k := range keys {
			key, ok := k.(string)
			if !ok {
				return calls, fmt.Errorf("redistest: GETKEYSINSLOT %d on %s answered a %T key", slot, from.Addr, k)
			}
			args = append(args, key)
		}
		if _, err := query(from, args...); err != nil {
			return calls, fmt.Errorf("redistest: MIGRATE of slot %d from %s to %s: %w", slot, from.Addr, to.Addr, err)
		}
		calls++
		if opts.Pause > 0 {
			select {
			case <-time.After(opts.Pause):
			case <-ctx.Done():
				return calls, fmt.Errorf("redistest: moving slot %d: %w", slot, ctx.Err())
			}
		}
	}
	// The target first, then the source, then the others (as redis-cli).
	for _, m := range append([]*Server{to, from}, others...) {
		if _, err := query(m, "CLUSTER", "SETSLOT", s, "NODE", toID); err != nil {
			return calls, fmt.Errorf("redistest: SETSLOT %d NODE on %s: %w", slot, m.Addr, err)
		}
	}
	return calls, nil
}
