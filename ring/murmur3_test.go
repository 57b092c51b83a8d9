package ring

import (
	"math/rand/v2"
	"testing"

	"github.com/spaolacci/murmur3"
)

// The lookup's inlined MurmurHash3 is spaolacci/murmur3's Sum64, byte for byte.
func TestMurmur3Sum64MatchesTheLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for n := 0; n <= 200; n++ {
		for trial := 0; trial < 20; trial++ {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte(rng.Uint32())
			}
			if got, want := murmur3Sum64(b), murmur3.Sum64(b); got != want {
				t.Fatalf("len %d: murmur3Sum64 = %#x, murmur3.Sum64 = %#x (key %x)", n, got, want, b)
			}
		}
	}
}

func FuzzMurmur3Sum64(f *testing.F) {
	f.Add([]byte(""))
	f.Add([]byte("user:1000:profile"))
	f.Add([]byte("{user1000}.following, and a longer key than sixteen bytes"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := murmur3Sum64(b), murmur3.Sum64(b); got != want {
			t.Fatalf("murmur3Sum64(%x) = %#x, murmur3.Sum64 = %#x", b, got, want)
		}
	})
}
