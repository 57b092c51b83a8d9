package cluster_test

import (
	"fmt"

	"github.com/shardis/shardis/cluster"
)

func ExampleSlot() {
	for _, key := range []string{"foo", "{user1000}.following", "{user1000}.followers"} {
		fmt.Println(key, cluster.Slot(key))
	}
	// Output:
	// foo 12182
	// {user1000}.following 3443
	// {user1000}.followers 3443
}

func ExampleCRC16() {
	fmt.Printf("%#04x\n", cluster.CRC16([]byte("123456789")))
	// Output: 0x31c3
}
