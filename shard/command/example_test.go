package command_test

import (
	"errors"
	"fmt"

	"github.com/shardis/shardis/shard/command"
)

func Example() {
	info := command.Lookup("zunionstore")
	args := []any{"out", 2, "zset:a", "zset:b", "WEIGHTS", 1, 2}
	pos, err := info.KeyPositions(args, nil)
	if err != nil {
		panic(err)
	}
	for _, p := range pos {
		key, _ := command.Arg(args[p])
		fmt.Println(p, key)
	}
	fmt.Println("write:", info.IsWrite())
	// Output:
	// 0 out
	// 2 zset:a
	// 3 zset:b
	// write: true
}

func ExampleInfo_KeyPositions_container() {
	// Container commands dispatch on their subcommand.
	pos, _ := command.Lookup("OBJECT").KeyPositions([]any{"ENCODING", "user:1"}, nil)
	fmt.Println(pos)
	// Output: [1]
}

func ExampleInfo_KeyPositions_badArgs() {
	_, err := command.Lookup("EVAL").KeyPositions([]any{"return 1", 3, "only-one-key"}, nil)
	fmt.Println(errors.Is(err, command.ErrBadArgs))
	fmt.Println(err)
	// Output:
	// true
	// shardis: EVAL: the number of keys (3) exceeds the arguments
}

func ExampleInfo_Resolve() {
	info := command.Lookup("XGROUP").Resolve([]any{"CREATE", "stream", "group", "$"})
	fmt.Println(info.Name, info.IsWrite())
	// Output: xgroup|create true
}
