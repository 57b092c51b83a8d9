package hashtag

import (
	"strings"
	"testing"
)

var sinkTag string

func BenchmarkTag(b *testing.B) {
	dollar, _ := Pair('$', '$')
	keys := []struct{ name, key string }{
		{"tagged16", "{user1000}.posts"},
		{"plain16", "user:1000:posts!"},
		{"plain1K", strings.Repeat("k", 1024)},
	}
	for _, r := range []Rule{None, Cluster, Jedis, dollar} {
		for _, k := range keys {
			b.Run(r.String()+"/"+k.name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					sinkTag = r.Tag(k.key)
				}
			})
		}
	}
}
