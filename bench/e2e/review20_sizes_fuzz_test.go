package e2e

import (
	"errors"
	"strings"
	"testing"
)

// FuzzReview20ParseSizes: a --callers, --pipelines or --multi list gives
// an ErrBadOptions error or sizes each in 1..limit, one per entry; the
// list written back with the report's names (1000 as "1k") reads as the
// same sizes.
func FuzzReview20ParseSizes(f *testing.F) {
	for _, s := range []string{"1,16,64", "1k,10k", "", " ", "0", "-1", "5k", "1kk", "k", "1,,2", " 2 , 3k ", "9223372036854775807", "+5", "0x10", "1_000"} {
		f.Add(s, 10000)
	}
	f.Fuzz(func(t *testing.T, list string, limit int) {
		sizes, err := ParseSizes(list, limit)
		if err != nil {
			if !errors.Is(err, ErrBadOptions) {
				t.Fatalf("ParseSizes(%q, %d): error %v is not ErrBadOptions", list, limit, err)
			}
			return
		}
		if strings.TrimSpace(list) == "" {
			if sizes != nil {
				t.Fatalf("ParseSizes(%q) = %v, want none", list, sizes)
			}
			return
		}
		if len(sizes) != strings.Count(list, ",")+1 {
			t.Fatalf("ParseSizes(%q) = %v: %d sizes for %d entries", list, sizes, len(sizes), strings.Count(list, ",")+1)
		}
		names := make([]string, len(sizes))
		for i, n := range sizes {
			if n < 1 || n > limit {
				t.Fatalf("ParseSizes(%q, %d) = %v: %d is not in 1..%d", list, limit, sizes, n, limit)
			}
			names[i] = sizeName(n)
		}
		again, err := ParseSizes(strings.Join(names, ","), limit)
		if err != nil {
			t.Fatalf("ParseSizes(%q) = %v, written back as %v: %v", list, sizes, names, err)
		}
		if len(again) != len(sizes) {
			t.Fatalf("ParseSizes(%q) = %v, written back: %v", list, sizes, again)
		}
		for i := range sizes {
			if again[i] != sizes[i] {
				t.Fatalf("ParseSizes(%q) = %v, written back as %v: %v", list, sizes, names, again)
			}
		}
	})
}
