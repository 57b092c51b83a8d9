package ring

import (
	"strings"
	"sync"
	"testing"
)

func TestLocateDoesNotAllocate(t *testing.T) {
	long := strings.Repeat("{user:42}:timeline:", 20) // longer than any stack buffer
	for _, cfg := range []Config{
		{Algorithm: Murmur3},
		{Algorithm: Jedis},
		{Algorithm: Jedis, KeyHash: "md5", Tag: "jedis"},
		{Algorithm: JedisLegacy},
		{Algorithm: Ketama},
		{Algorithm: Ketama, KeyHash: "md5", Tag: "{}"},
		{Algorithm: Modula},
		{Algorithm: Modula, KeyHash: "crc32"},
	} {
		cfg.Shards = shardsN(10)
		r := mustNew(t, cfg)
		name := string(cfg.Algorithm) + "/" + r.Config().KeyHash
		for _, key := range []string{"user:1000", long} {
			b := []byte(key)
			var s, bs int
			if n := testing.AllocsPerRun(200, func() { s = r.Locate(key) }); n != 0 {
				t.Errorf("%s: Locate(%d bytes) allocates %.1f times", name, len(key), n)
			}
			if n := testing.AllocsPerRun(200, func() { bs = r.LocateBytes(b) }); n != 0 {
				t.Errorf("%s: LocateBytes(%d bytes) allocates %.1f times", name, len(key), n)
			}
			if s != bs {
				t.Errorf("%s: Locate %d, LocateBytes %d", name, s, bs)
			}
		}
	}
}

func TestConcurrentLocate(t *testing.T) {
	r := mustNew(t, Config{Algorithm: Ketama, Shards: shardsN(5)})
	keys := sampleKeys(2000)
	want := make([]int, len(keys))
	for i, k := range keys {
		want[i] = r.Locate(k)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for i, k := range keys {
				if got := r.Locate(k); got != want[i] {
					t.Errorf("%q: %d, want %d", k, got, want[i])
					return
				}
				_ = r.Shards()
				_ = r.Config()
			}
		})
	}
	wg.Wait()
}
