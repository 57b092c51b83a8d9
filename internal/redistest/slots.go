package redistest

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
)

// slotRange is one entry of CLUSTER SLOTS.
type slotRange struct {
	Start, End int
	Master     string   // node id
	Replicas   []string // node ids
}

// parseSlots parses a CLUSTER SLOTS reply: ranges of
// [start, end, [ip, port, id, ...], replica...].
func parseSlots(v any) ([]slotRange, error) {
	entries, ok := v.([]any)
	if !ok {
		return nil, fmt.Errorf("%w: CLUSTER SLOTS reply is %T, not an array", errProtocol, v)
	}
	out := make([]slotRange, 0, len(entries))
	for _, e := range entries {
		fields, ok := e.([]any)
		if !ok || len(fields) < 3 {
			return nil, fmt.Errorf("%w: CLUSTER SLOTS entry %v", errProtocol, e)
		}
		start, ok1 := fields[0].(int64)
		end, ok2 := fields[1].(int64)
		if !ok1 || !ok2 || start < 0 || end < start || end >= SlotCount {
			return nil, fmt.Errorf("%w: CLUSTER SLOTS range %v-%v", errProtocol, fields[0], fields[1])
		}
		r := slotRange{Start: int(start), End: int(end)}
		for i, n := range fields[2:] {
			node, ok := n.([]any)
			if !ok || len(node) < 3 {
				return nil, fmt.Errorf("%w: CLUSTER SLOTS node %v", errProtocol, n)
			}
			id, ok := node[2].(string)
			if !ok {
				return nil, fmt.Errorf("%w: CLUSTER SLOTS node id %v", errProtocol, node[2])
			}
			if i == 0 {
				r.Master = id
			} else {
				r.Replicas = append(r.Replicas, id)
			}
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b slotRange) int { return a.Start - b.Start })
	return out, nil
}

// covered reports whether sorted ranges cover 0..16383 exactly once.
func covered(ranges []slotRange) error {
	next := 0
	for _, r := range ranges {
		switch {
		case r.Start > next:
			return fmt.Errorf("slots %d-%d are not served", next, r.Start-1)
		case r.Start < next:
			return fmt.Errorf("slot %d is served twice", r.Start)
		}
		next = r.End + 1
	}
	if next < SlotCount {
		return fmt.Errorf("slots %d-%d are not served", next, SlotCount-1)
	}
	return nil
}

// ownersSignature renders "start-end:master" for every range, so that two
// nodes' views can be compared.
func ownersSignature(ranges []slotRange) string {
	parts := make([]string, len(ranges))
	for i, r := range ranges {
		parts[i] = strconv.Itoa(r.Start) + "-" + strconv.Itoa(r.End) + ":" + r.Master
	}
	return strings.Join(parts, " ")
}

// infoField returns the value of name in an INFO reply.
func infoField(info, name string) string {
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimRight(line, "\r"), name+":"); ok {
			return v
		}
	}
	return ""
}
