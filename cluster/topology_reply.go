package cluster

import "fmt"

// Helpers that read the RESP2 values redigo returns: []any for arrays,
// []byte for bulk strings, string for status replies, int64 for integers,
// nil for null, and redis.Error for error replies. Plain ints are accepted
// too, for replies built by hand.

// text returns v as a string when it is a bulk or status string.
func text(v any) (string, bool) {
	switch v := v.(type) {
	case []byte:
		return string(v), true
	case string:
		return v, true
	}
	return "", false
}

// integer returns v as an int64 when it is an integer.
func integer(v any) (int64, bool) {
	switch v := v.(type) {
	case int64:
		return v, true
	case int:
		return int64(v), true
	}
	return 0, false
}

// kind names the RESP type of v for error messages.
func kind(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case []byte, string:
		return "a string"
	case int64, int:
		return "an integer"
	case []any:
		return "an array"
	case error:
		return "an error reply"
	}
	return fmt.Sprintf("a %T", v)
}

// validPort converts a port number from a reply, which must be in
// 1..65535.
func validPort(p int64) (int, bool) {
	if p < 1 || p > 65535 {
		return 0, false
	}
	return int(p), true
}

// validSlot reports whether s is a slot number.
func validSlot(s int64) bool {
	return s >= 0 && s < SlotCount
}
