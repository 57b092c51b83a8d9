package shard_test

import (
	"errors"
	"fmt"

	"github.com/shardis/shardis/shard"
)

// A config file's bad field gives an error that matches ErrBadConfig and
// holds a *FieldError naming the field by its path in the file, so that a
// program can point its user at the setting to fix.
func ExampleFieldError() {
	_, err := shard.ParseConfig([]byte("shards: [{addr: '127.0.0.1:6379'}]\npool: {max_idle: many}\n"))
	var fe *shard.FieldError
	fmt.Println(errors.Is(err, shard.ErrBadConfig), errors.As(err, &fe))
	fmt.Println(fe.Field)
	fmt.Println(fe)
	// Output:
	// true true
	// pool.max_idle
	// line 2: pool.max_idle: "many" is not a valid int
}
