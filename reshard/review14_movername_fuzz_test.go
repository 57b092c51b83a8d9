package reshard

import (
	"strings"
	"testing"

	"github.com/shardis/shardis/pool"
	"github.com/shardis/shardis/shard"
)

// FuzzParseMoverName: the name moverPoolFor gives a Move's connections
// reads back as its migration and instance, and any name that reads as
// one is the name built from what it read.
func FuzzParseMoverName(f *testing.F) {
	f.Add("c1", "c2", "ab12", "")
	f.Add("ring-x", "cluster-y", "", "shardis-reshard:a>b")
	f.Add("a", "b", "c", "shardis-reshard:a>b>c>d")
	f.Fuzz(func(t *testing.T, from, to, self, name string) {
		if from != "" && to != "" && !strings.Contains(from+to+self, ">") {
			built := moverPoolFor(pool.Options{}, shard.MigrationInfo{FromID: from, ToID: to}, self).ClientName
			f2, t2, i2, ok := parseMoverName(built)
			if !ok || f2 != from || t2 != to || i2 != self {
				t.Fatalf("%q read as %q %q %q %v", built, f2, t2, i2, ok)
			}
		}
		f2, t2, i2, ok := parseMoverName(name)
		if !ok {
			return
		}
		if f2 == "" || t2 == "" {
			t.Fatalf("%q read with an empty topology: %q %q", name, f2, t2)
		}
		again := moverName + ":" + f2 + ">" + t2 + ">" + i2
		if again != name && again != name+">" {
			t.Fatalf("%q read as %q %q %q", name, f2, t2, i2)
		}
	})
}
