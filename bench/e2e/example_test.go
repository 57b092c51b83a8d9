package e2e_test

import (
	"fmt"

	"github.com/shardis/shardis/bench/e2e"
)

// Build a smaller set of cases than the default one, as
// "shardis bench e2e --callers 1,8 --pipelines 1k --multi 100" does.
func ExampleCases() {
	pipelines, err := e2e.ParseSizes("1k", 100000)
	if err != nil {
		panic(err)
	}
	for _, c := range e2e.Cases([]int{1, 8}, pipelines, []int{100}) {
		fmt.Printf("%-12s %d caller(s), %d command(s) per operation\n", c.Name, c.Callers, c.Commands())
	}
	// Output:
	// single c=1   1 caller(s), 1 command(s) per operation
	// single c=8   8 caller(s), 1 command(s) per operation
	// pipeline 1k  1 caller(s), 1000 command(s) per operation
	// MSET 100     1 caller(s), 100 command(s) per operation
	// MGET 100     1 caller(s), 100 command(s) per operation
}
