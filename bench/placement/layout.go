package placement

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/shardis/shardis/ring"
)

// Layout is one set of shards that every strategy is measured on.
type Layout struct {
	// Name identifies the layout in reports, e.g. "10 equal".
	Name string `json:"name"`
	// Shards are the shards, in the order their indexes are reported.
	Shards []ring.Shard `json:"shards"`
}

// Weighted reports whether the shards do not all have the same weight.
func (l Layout) Weighted() bool {
	for _, s := range l.Shards {
		if s.Weight != l.Shards[0].Weight {
			return true
		}
	}
	return false
}

// TotalWeight returns the sum of the shards' weights.
func (l Layout) TotalWeight() int {
	t := 0
	for _, s := range l.Shards {
		t += s.Weight
	}
	return t
}

// validate checks what every strategy needs: shards, positive weights and
// distinct labels (shards are matched by label when measuring movement).
func (l Layout) validate() error {
	if len(l.Shards) == 0 {
		return fmt.Errorf("%w: layout %q has no shards", ErrBadInput, l.Name)
	}
	seen := map[string]bool{}
	for _, s := range l.Shards {
		if s.Weight <= 0 {
			return fmt.Errorf("%w: layout %q: shard %s has weight %d", ErrBadInput, l.Name, s.Label(), s.Weight)
		}
		if seen[s.Label()] {
			return fmt.Errorf("%w: layout %q: two shards are called %s", ErrBadInput, l.Name, s.Label())
		}
		seen[s.Label()] = true
	}
	return nil
}

// GeneratedShard returns shard i (from 1) of the generated layouts: name
// "shard-i" at "10.0.0.i:6379" (10.0.x.y beyond 255 shards). Nothing is
// ever sent to these addresses; they only give the strategies that hash
// addresses something realistic to hash.
func GeneratedShard(i, weight int) ring.Shard {
	return ring.Shard{
		Name:   "shard-" + strconv.Itoa(i),
		Addr:   fmt.Sprintf("10.0.%d.%d:6379", i/256, i%256),
		Weight: weight,
	}
}

// EqualLayout returns n generated shards of weight 1, named "<n> equal".
func EqualLayout(n int) Layout {
	l := Layout{Name: fmt.Sprintf("%d equal", n)}
	for i := 1; i <= n; i++ {
		l.Shards = append(l.Shards, GeneratedShard(i, 1))
	}
	return l
}

// WeightedLayout returns one generated shard per weight, named
// "weighted 1:2:3:4" after the weights.
func WeightedLayout(weights ...int) Layout {
	parts := make([]string, len(weights))
	l := Layout{}
	for i, w := range weights {
		parts[i] = strconv.Itoa(w)
		l.Shards = append(l.Shards, GeneratedShard(i+1, w))
	}
	l.Name = "weighted " + strings.Join(parts, ":")
	return l
}

// DefaultLayouts returns the layouts a comparison uses unless told
// otherwise: 3, 10 and 100 equal shards, and four shards weighted 1:2:3:4.
func DefaultLayouts() []Layout {
	return []Layout{EqualLayout(3), EqualLayout(10), EqualLayout(100), WeightedLayout(1, 2, 3, 4)}
}

// ParseLayout reads a layout in ring.ParseShards syntax
// ("HOST:PORT[:WEIGHT][ NAME],...") and names it after its shard count.
func ParseLayout(list string) (Layout, error) {
	shards, err := ring.ParseShards(list)
	if err != nil {
		return Layout{}, fmt.Errorf("%w: %w", ErrBadInput, err)
	}
	l := Layout{Name: fmt.Sprintf("--shards (%d)", len(shards)), Shards: shards}
	return l, l.validate()
}

// addedShard returns the shard that the "add one shard" measurement
// appends: "shard-<n+1>" (or the first such name and address not taken)
// with the smallest weight of the layout.
func addedShard(l Layout) ring.Shard {
	minW := l.Shards[0].Weight
	taken := map[string]bool{}
	for _, s := range l.Shards {
		minW = min(minW, s.Weight)
		taken[s.Name], taken[s.Addr], taken[s.Label()] = true, true, true
	}
	for i := len(l.Shards) + 1; ; i++ {
		s := GeneratedShard(i, minW)
		if !taken[s.Name] && !taken[s.Addr] {
			return s
		}
	}
}
