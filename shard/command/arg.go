package command

import (
	"fmt"
	"math"
	"reflect"
	"strconv"

	"github.com/gomodule/redigo/redis"
)

// Arg returns the text redigo sends for the argument a: strings and byte
// slices as they are, integers in decimal, float64 as
// strconv.FormatFloat(f, 'g', -1, 64), float32 in its shortest 32-bit form
// (as fmt prints it), booleans as "1" and "0", nil as "", a redis.Argument
// as the text of its RedisArg value, and a type of its own over a string,
// number or boolean (type word string) as fmt prints it, which is what is
// sent. It reports false for any other type.
func Arg(a any) (string, bool) {
	if v, ok := a.(redis.Argument); ok {
		if _, nested := v.RedisArg().(redis.Argument); nested {
			return "", false
		}
		return plainArg(v.RedisArg())
	}
	return plainArg(a)
}

func plainArg(a any) (string, bool) {
	switch v := a.(type) {
	case string:
		return v, true
	case []byte:
		return string(v), true
	case nil:
		return "", true
	case bool:
		if v {
			return "1", true
		}
		return "0", true
	case float64:
		return strconv.FormatFloat(v, 'g', -1, 64), true
	case float32:
		return strconv.FormatFloat(float64(v), 'g', -1, 32), true
	}
	var buf [24]byte
	if b, ok := appendInt(buf[:0], a); ok {
		return string(b), true
	}
	// A type of its own over a string, number or boolean (type word
	// string) is sent as fmt prints it: its String method's text when it
	// has one, else its value.
	switch reflect.ValueOf(a).Kind() {
	case reflect.String, reflect.Bool, reflect.Float32, reflect.Float64,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr:
		return fmt.Sprint(a), true
	}
	return "", false
}

// appendInt appends the decimal form of an integer argument.
func appendInt(b []byte, a any) ([]byte, bool) {
	switch v := a.(type) {
	case int:
		return strconv.AppendInt(b, int64(v), 10), true
	case int64:
		return strconv.AppendInt(b, v, 10), true
	case int32:
		return strconv.AppendInt(b, int64(v), 10), true
	case int16:
		return strconv.AppendInt(b, int64(v), 10), true
	case int8:
		return strconv.AppendInt(b, int64(v), 10), true
	case uint:
		return strconv.AppendUint(b, uint64(v), 10), true
	case uint64:
		return strconv.AppendUint(b, v, 10), true
	case uint32:
		return strconv.AppendUint(b, uint64(v), 10), true
	case uint16:
		return strconv.AppendUint(b, uint64(v), 10), true
	case uint8:
		return strconv.AppendUint(b, uint64(v), 10), true
	case uintptr:
		return strconv.AppendUint(b, uint64(v), 10), true
	}
	return b, false
}

// argIs reports whether the argument a, as it is sent (ArgText), equals
// word, ignoring ASCII case, without allocating for strings, byte slices,
// integers and booleans.
func argIs(a any, word string) bool {
	switch v := a.(type) {
	case string:
		return equalFold(v, word)
	case []byte:
		return equalFold(v, word)
	case float32, float64, redis.Argument:
		return equalFold(ArgText(a), word)
	case nil:
		return word == ""
	case bool:
		if v {
			return word == "1"
		}
		return word == "0"
	}
	var buf [24]byte
	if b, ok := appendInt(buf[:0], a); ok {
		return equalFold(b, word)
	}
	return equalFold(ArgText(a), word) // a type of its own: as fmt prints it
}

// ArgText returns the text redigo sends for the argument a, whatever
// its type: Arg's where Arg knows the type, else what fmt prints for it
// (for a redis.Argument, for its RedisArg value), which is what is sent:
// a String method's text, say. Where Arg reports false for a key (whose
// printed form, a pointer's address say, is seldom meant), a word whose
// meaning the command depends on (CLIENT with a Stringer for SETNAME,
// XREAD with one for BLOCK) reaches the server as that word, and is
// read so (EffectOf).
func ArgText(a any) string {
	if s, ok := Arg(a); ok {
		return s
	}
	if v, ok := a.(redis.Argument); ok {
		return fmt.Sprint(v.RedisArg())
	}
	return fmt.Sprint(a)
}

// argLen returns the length of the argument's text, or -1 when Arg would
// report false.
func argLen(a any) int {
	switch v := a.(type) {
	case string:
		return len(v)
	case []byte:
		return len(v)
	}
	s, ok := Arg(a)
	if !ok {
		return -1
	}
	return len(s)
}

// argInt parses the argument as the server parses a key count: an optional
// minus sign and decimal digits, no leading zeros, no plus sign, no spaces,
// within int64. Unsigned values beyond int64 are reported as MaxInt64.
func argInt(a any) (int64, bool) {
	switch v := a.(type) {
	case string:
		return parseInt(v)
	case []byte:
		return parseInt(v)
	case int:
		return int64(v), true
	case int64:
		return v, true
	case int32:
		return int64(v), true
	case int16:
		return int64(v), true
	case int8:
		return int64(v), true
	case uint, uint64, uint32, uint16, uint8, uintptr:
		var buf [24]byte
		b, _ := appendInt(buf[:0], a)
		n, ok := parseInt(b)
		if !ok {
			return math.MaxInt64, true
		}
		return n, true
	case bool:
		if v {
			return 1, true
		}
		return 0, true
	}
	s, ok := Arg(a)
	if !ok {
		return 0, false
	}
	return parseInt(s)
}

// parseInt follows the server's string-to-integer rules (string2ll).
func parseInt[T string | []byte](s T) (int64, bool) {
	if len(s) == 0 || len(s) > 20 {
		return 0, false
	}
	if len(s) == 1 && s[0] == '0' {
		return 0, true
	}
	neg := s[0] == '-'
	start := 0
	if neg {
		start = 1
	}
	if start == len(s) || s[start] < '1' || s[start] > '9' {
		return 0, false
	}
	var n uint64
	for i := start; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if n > (math.MaxUint64-d)/10 {
			return 0, false
		}
		n = n*10 + d
	}
	if neg {
		if n > 1<<63 {
			return 0, false
		}
		return int64(-n), true
	}
	if n > math.MaxInt64 {
		return 0, false
	}
	return int64(n), true
}

// equalFold reports whether s equals word, ignoring ASCII case.
func equalFold[T string | []byte](s T, word string) bool {
	if len(s) != len(word) {
		return false
	}
	for i := 0; i < len(s); i++ {
		if foldByte(s[i]) != foldByte(word[i]) {
			return false
		}
	}
	return true
}

func foldByte(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + ('a' - 'A')
	}
	return c
}
