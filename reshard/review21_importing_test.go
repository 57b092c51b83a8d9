package reshard

import (
	"maps"
	"slices"
	"testing"
)

// TestReview21ParseImporting: the verification takes a key for placed at
// a master that imports its slot, which it reads from the "[slot-<-id]"
// marks of the master's own CLUSTER NODES line; a migrating mark, another
// node's line, or a malformed mark must not count.
func TestReview21ParseImporting(t *testing.T) {
	const other = "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 master - 0 1 4 connected 0-5460 [93->-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]\n"
	for _, tc := range []struct {
		name string
		text string
		want []int
	}{
		{"none", other + "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30002@31002 myself,master - 0 0 2 connected 5461-10922\n", nil},
		{"importing", other + "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30002@31002 myself,master - 0 0 2 connected 5461-10922 [93-<-07c37dfeb235213a872192d90877d0cd55635b91] [16383-<-07c37dfeb235213a872192d90877d0cd55635b91]\n", []int{93, 16383}},
		{"migrating only", "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30002@31002 myself,master - 0 0 2 connected 5461-10922 [5461->-07c37dfeb235213a872192d90877d0cd55635b91]\n", nil},
		{"another node's mark", "07c37dfeb235213a872192d90877d0cd55635b91 127.0.0.1:30004@31004 master - 0 1 4 connected [7-<-e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca]\ne7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30002@31002 myself,master - 0 0 2 connected 5461-10922\n", nil},
		{"out of range", "e7d1eecce10fd6bb5eb35b9f99a514335d9ba9ca 127.0.0.1:30002@31002 myself,master - 0 0 2 connected [16384-<-07c37dfeb235213a872192d90877d0cd55635b91] [x-<-07c37dfeb235213a872192d90877d0cd55635b91]\n", nil},
		{"no myself line", other, nil},
		{"empty", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := slices.Sorted(maps.Keys(parseImporting(tc.text)))
			if !slices.Equal(got, tc.want) {
				t.Errorf("parseImporting = %v, want %v", got, tc.want)
			}
		})
	}
}
