package cluster

import (
	"strings"
	"testing"
)

var sinkSlot int

func BenchmarkSlot16(b *testing.B) {
	key := "user:1000:posts!" // 16 bytes, no hash tag
	b.ReportAllocs()
	for b.Loop() {
		sinkSlot = Slot(key)
	}
}

func BenchmarkSlot1K(b *testing.B) {
	key := strings.Repeat("k", 1024)
	b.ReportAllocs()
	for b.Loop() {
		sinkSlot = Slot(key)
	}
}
