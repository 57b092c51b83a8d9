package e2e

import (
	"fmt"
	"strconv"
	"strings"
)

// Kind is what one operation of a case does.
type Kind string

// The kinds of operation.
const (
	// Single is one command per call, alternately SET and GET of one key.
	Single Kind = "single"
	// Pipeline is one Pipeline.Exec of Size commands: SET and GET of
	// (Size+1)/2 keys interleaved, the last GET left out when Size is odd.
	Pipeline Kind = "pipeline"
	// MSet is one MSET of Size keys, which the client splits by shard
	// (ring mode) or hash slot (cluster mode).
	MSet Kind = "mset"
	// MGet is one MGET of Size keys, split the same way.
	MGet Kind = "mget"
)

// Case is one measurement: Callers goroutines each repeating one kind of
// operation for the case's duration.
type Case struct {
	Name    string `json:"name"`
	Kind    Kind   `json:"kind"`
	Callers int    `json:"callers"`
	// Size is the commands per pipeline or keys per MGET/MSET; 1 for
	// Single.
	Size int `json:"size"`
}

// Commands returns how many commands (keys) one operation of c handles.
func (c Case) Commands() int {
	if c.Kind == Single {
		return 1
	}
	return c.Size
}

// Cases returns the single-command cases for each number of callers, one
// pipeline case per pipeline size, and an MSET and an MGET case per multi-key
// size, each with one caller.
func Cases(callers, pipelines, multi []int) []Case {
	var out []Case
	for _, c := range callers {
		out = append(out, Case{Name: fmt.Sprintf("single c=%d", c), Kind: Single, Callers: c, Size: 1})
	}
	for _, n := range pipelines {
		out = append(out, Case{Name: "pipeline " + sizeName(n), Kind: Pipeline, Callers: 1, Size: n})
	}
	for _, n := range multi {
		out = append(out,
			Case{Name: "MSET " + sizeName(n), Kind: MSet, Callers: 1, Size: n},
			Case{Name: "MGET " + sizeName(n), Kind: MGet, Callers: 1, Size: n})
	}
	return out
}

// DefaultCases are single commands from 1, 16 and 64 callers, pipelines of
// 1,000 and 10,000 commands and MSET/MGET of 100 and 1,000 keys.
func DefaultCases() []Case {
	return Cases([]int{1, 16, 64}, []int{1000, 10000}, []int{100, 1000})
}

// sizeName writes 1000 as "1k" and 10000 as "10k".
func sizeName(n int) string {
	if n >= 1000 && n%1000 == 0 {
		return strconv.Itoa(n/1000) + "k"
	}
	return strconv.Itoa(n)
}

// ParseSizes reads a comma-separated list of positive integers, each at
// most limit; "1k" stands for 1000. An empty list gives nil.
func ParseSizes(list string, limit int) ([]int, error) {
	if strings.TrimSpace(list) == "" {
		return nil, nil
	}
	var out []int
	for _, f := range strings.Split(list, ",") {
		f = strings.TrimSpace(f)
		digits, mult := f, 1
		if rest, ok := strings.CutSuffix(f, "k"); ok {
			digits, mult = rest, 1000
		}
		n, err := strconv.Atoi(digits)
		if err != nil || n <= 0 || n > limit/mult {
			return nil, fmt.Errorf("%w: %q is not a number in 1..%d", ErrBadOptions, f, limit)
		}
		out = append(out, n*mult)
	}
	return out, nil
}
