package command

import (
	"fmt"
	"math"
	"testing"

	"github.com/gomodule/redigo/redis"
)

// tagged implements redis.Argument.
type tagged struct{ v any }

func (t tagged) RedisArg() any { return t.v }

var argCases = []struct {
	in   any
	want string
	ok   bool
}{
	{"text", "text", true},
	{"", "", true},
	{[]byte("bytes"), "bytes", true},
	{[]byte(nil), "", true},
	{0, "0", true},
	{-42, "-42", true},
	{int8(-8), "-8", true},
	{int16(16), "16", true},
	{int32(-32), "-32", true},
	{int64(math.MinInt64), "-9223372036854775808", true},
	{uint(7), "7", true},
	{uint8(255), "255", true},
	{uint16(65535), "65535", true},
	{uint32(math.MaxUint32), "4294967295", true},
	{uint64(math.MaxUint64), "18446744073709551615", true},
	{uintptr(9), "9", true},
	{1.5, "1.5", true},
	{0.1, "0.1", true},
	{1e21, "1e+21", true},
	{math.Copysign(0, -1), "-0", true},
	{math.Inf(1), "+Inf", true},
	{float64(3), "3", true},
	{float32(0.1), "0.1", true},
	{float32(1e-7), "1e-07", true},
	{true, "1", true},
	{false, "0", true},
	{nil, "", true},
	{tagged{"inner"}, "inner", true},
	{tagged{12}, "12", true},
	{tagged{[]byte("b")}, "b", true},
	{tagged{tagged{"x"}}, "", false},
	{struct{}{}, "", false},
	{[]string{"a"}, "", false},
	{complex(1, 2), "", false},
}

func TestArg(t *testing.T) {
	for _, tc := range argCases {
		got, ok := Arg(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("Arg(%#v) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}

// TestArgMatchesWire sends each argument through redigo to a real server
// with ECHO: what comes back is what redigo put on the wire.
func TestArgMatchesWire(t *testing.T) {
	c := dialServer(t)
	for _, tc := range argCases {
		if !tc.ok {
			continue
		}
		echoed, err := redis.String(c.Do("ECHO", tc.in))
		if err != nil {
			t.Fatalf("ECHO %#v: %v", tc.in, err)
		}
		if echoed != tc.want {
			t.Errorf("redigo sent %q for %#v, Arg says %q", echoed, tc.in, tc.want)
		}
	}
	// float32 is formatted by fmt in redigo; check a spread of values.
	for _, f := range []float32{1.0 / 3, 2.5e10, -7.125, math.MaxFloat32, math.SmallestNonzeroFloat32} {
		if got, _ := Arg(f); got != fmt.Sprint(f) {
			t.Errorf("Arg(float32 %v) = %q, fmt says %q", f, got, fmt.Sprint(f))
		}
	}
}

func TestParseInt(t *testing.T) {
	cases := []struct {
		in   string
		want int64
		ok   bool
	}{
		{"0", 0, true},
		{"7", 7, true},
		{"-1", -1, true},
		{"9223372036854775807", math.MaxInt64, true},
		{"-9223372036854775808", math.MinInt64, true},
		{"9223372036854775808", 0, false},
		{"-9223372036854775809", 0, false},
		{"99999999999999999999", 0, false},
		{"184467440737095516150", 0, false},
		{"", 0, false},
		{"-", 0, false},
		{"-0", 0, false},
		{"00", 0, false},
		{"01", 0, false},
		{"+1", 0, false},
		{" 1", 0, false},
		{"1 ", 0, false},
		{"1a", 0, false},
		{"1.0", 0, false},
	}
	for _, tc := range cases {
		got, ok := parseInt(tc.in)
		if got != tc.want || ok != tc.ok {
			t.Errorf("parseInt(%q) = %d, %v; want %d, %v", tc.in, got, ok, tc.want, tc.ok)
		}
		gotB, okB := parseInt([]byte(tc.in))
		if gotB != got || okB != ok {
			t.Errorf("parseInt([]byte(%q)) = %d, %v; the string form gives %d, %v", tc.in, gotB, okB, got, ok)
		}
	}
}

func TestArgIs(t *testing.T) {
	cases := []struct {
		in   any
		word string
		want bool
	}{
		{"store", "STORE", true},
		{[]byte("StOrE"), "STORE", true},
		{"STOREX", "STORE", false},
		{12, "12", true},
		{uint8(3), "3", true},
		{true, "1", true},
		{false, "1", false},
		{nil, "", true},
		{2.5, "2.5", true},
		{tagged{"keys"}, "KEYS", true},
		{struct{}{}, "", false},
	}
	for _, tc := range cases {
		if got := argIs(tc.in, tc.word); got != tc.want {
			t.Errorf("argIs(%#v, %q) = %v", tc.in, tc.word, got)
		}
	}
}
