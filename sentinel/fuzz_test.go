package sentinel

import (
	"errors"
	"net"
	"testing"
)

// decode turns fuzz bytes into a reply value of the shapes redigo
// returns: a tiny prefix language so the fuzzer reaches nested arrays.
func decode(data []byte, depth int) (any, []byte) {
	if len(data) == 0 || depth > 4 {
		return nil, data
	}
	tag, data := data[0], data[1:]
	switch tag % 5 {
	case 0:
		return nil, data
	case 1: // bulk of length n
		if len(data) == 0 {
			return []byte{}, data
		}
		n := int(data[0]) % 16
		data = data[1:]
		n = min(n, len(data))
		return append([]byte(nil), data[:n]...), data[n:]
	case 2:
		if len(data) == 0 {
			return int64(0), data
		}
		return int64(int8(data[0])) * 1000, data[1:]
	case 3: // array of n
		if len(data) == 0 {
			return []any{}, data
		}
		n := int(data[0]) % 6
		data = data[1:]
		arr := make([]any, 0, n)
		for range n {
			var v any
			v, data = decode(data, depth+1)
			arr = append(arr, v)
		}
		return arr, data
	default:
		return "master", data
	}
}

func FuzzParseReplies(f *testing.F) {
	f.Add([]byte{3, 2, 1, 9, '1', '2', '7', '.', '0', '.', '0', '.', '1', 1, 4, '6', '3', '7', '9'})
	f.Add([]byte{3, 3, 4, 2, 5, 3, 0})
	f.Add([]byte{0})
	f.Fuzz(func(t *testing.T, data []byte) {
		v, _ := decode(data, 0)
		if addr, err := ParseMasterAddr(v); err == nil {
			if _, _, err := net.SplitHostPort(addr); err != nil {
				t.Fatalf("ParseMasterAddr returned %q: %v", addr, err)
			}
		} else if !errors.Is(err, ErrBadReply) && !errors.Is(err, ErrUnknownMaster) {
			t.Fatalf("untyped error %v", err)
		}
		if _, err := ParseRole(v); err != nil && !errors.Is(err, ErrBadReply) {
			t.Fatalf("untyped error %v", err)
		}
		if reps, err := ParseReplicas(v); err == nil {
			for _, r := range reps {
				if _, _, err := net.SplitHostPort(r.Addr); err != nil {
					t.Fatalf("replica address %q: %v", r.Addr, err)
				}
			}
		} else if !errors.Is(err, ErrBadReply) {
			t.Fatalf("untyped error %v", err)
		}
	})
}

func FuzzParseSwitchMaster(f *testing.F) {
	f.Add("master-1 127.0.0.1 7000 127.0.0.1 7001")
	f.Add("m ::1 1 ::1 2")
	f.Fuzz(func(t *testing.T, msg string) {
		ev, err := ParseSwitchMaster(msg)
		if err != nil {
			if !errors.Is(err, ErrBadReply) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		for _, a := range []string{ev.OldAddr, ev.NewAddr} {
			if _, _, err := net.SplitHostPort(a); err != nil {
				t.Fatalf("address %q: %v", a, err)
			}
		}
	})
}
