package main

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseRate: --rate gives either an error or one finite pace of at
// least 1 key or 1KB per second (the other 0), and 0, 0 only for an
// empty value; a number written with a suffix reads back as that number
// times the suffix's unit when that is at least the minimum, and is
// refused below it.
func FuzzParseRate(f *testing.F) {
	for _, s := range []string{"5000", "5000/s", "20MB/s", "512kb", "1e308GB", "", "NaN", "-1", "0x1p3KB", "Inf", "1e-300", "0.5", "1023B", "1KB"} {
		f.Add(s, 1.5, uint8(0))
	}
	f.Add("", 0.5, uint8(0)) // 0.5 keys/s: below the minimum
	f.Add("", 0.5, uint8(2)) // 0.5KB: below the minimum
	f.Add("", 1.0, uint8(2)) // 1KB: the minimum
	units := []struct {
		suffix string
		mult   float64
	}{{"", 0}, {"B", 1}, {"KB", 1024}, {"mb/s", 1 << 20}, {"GB", 1 << 30}}
	f.Fuzz(func(t *testing.T, s string, v float64, unit uint8) {
		keys, bytes, err := parseRate(s)
		if err == nil {
			empty := strings.TrimSuffix(strings.TrimSpace(s), "/s") == ""
			switch {
			case empty && (keys != 0 || bytes != 0):
				t.Fatalf("%q: %v keys/s, %v bytes/s, want no pace", s, keys, bytes)
			case empty:
			case (keys > 0) == (bytes > 0):
				t.Fatalf("%q: %v keys/s and %v bytes/s, want one pace", s, keys, bytes)
			case keys < 0 || bytes < 0 || math.IsInf(keys, 0) || math.IsInf(bytes, 0) || math.IsNaN(keys) || math.IsNaN(bytes):
				t.Fatalf("%q: %v keys/s, %v bytes/s", s, keys, bytes)
			case keys > 0 && keys < 1, bytes > 0 && bytes < 1024:
				t.Fatalf("%q: %v keys/s, %v bytes/s accepted, below the minimum (1 key/s, 1KB/s)", s, keys, bytes)
			}
		}
		if !(v > 0) || math.IsInf(v, 0) {
			return
		}
		u := units[int(unit)%len(units)]
		in := strconv.FormatFloat(v, 'g', -1, 64) + u.suffix
		keys, bytes, err = parseRate(in)
		want := v * u.mult
		switch {
		case u.mult == 0 && v < 1:
			if err == nil {
				t.Fatalf("%q: %v keys/s accepted, below 1 key/s", in, keys)
			}
		case u.mult == 0:
			if err != nil || keys != v || bytes != 0 {
				t.Fatalf("%q: %v keys/s, %v bytes/s, %v; want %v keys/s", in, keys, bytes, err, v)
			}
		case math.IsInf(want, 0) || want < 1024:
			if err == nil {
				t.Fatalf("%q: %v bytes/s accepted", in, bytes)
			}
		default:
			if err != nil || keys != 0 || bytes != want {
				t.Fatalf("%q: %v keys/s, %v bytes/s, %v; want %v bytes/s", in, keys, bytes, err, want)
			}
		}
	})
}
