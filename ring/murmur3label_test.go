package ring

import (
	"strconv"
	"strings"
	"testing"

	"github.com/spaolacci/murmur3"
)

// murmur3Labels gives, for every prefix length around the 16-byte blocks
// and every count of digits, what the library's murmur3.Sum64 gives for
// the formatted label.
func TestMurmur3LabelsMatchesTheLibrary(t *testing.T) {
	counts := []int{1, 2, 10, 11, 101, 1001, 12345}
	for plen := 0; plen <= 40; plen++ {
		prefix := strings.Repeat("abcdefghij", 4)[:plen]
		for _, count := range counts {
			pos := make([]uint64, count)
			murmur3Labels(pos, prefix, 0)
			for n, got := range pos {
				label := prefix + strconv.Itoa(n)
				if want := murmur3.Sum64([]byte(label)); got != want {
					t.Fatalf("%q: %#x, murmur3.Sum64 says %#x", label, got, want)
				}
			}
		}
	}
	// Starting anywhere, up to the largest point numbers a ring can have
	// (8 digits, after a prefix that leaves 15 bytes of a partial block).
	for _, first := range []int{1, 9, 99, 1023, 12345, 9_999_990, MaxPoints - 3} {
		for _, prefix := range []string{"", "a-", strings.Repeat("p", 31)} {
			pos := make([]uint64, 13)
			murmur3Labels(pos, prefix, first)
			for j, got := range pos {
				label := prefix + strconv.Itoa(first+j)
				if want := murmur3.Sum64([]byte(label)); got != want {
					t.Fatalf("%q: %#x, murmur3.Sum64 says %#x", label, got, want)
				}
			}
		}
	}
}
