package redistest_test

import (
	"fmt"
	"log"

	"github.com/shardis/shardis/internal/redistest"
)

func ExampleStart() {
	s, err := redistest.Start(redistest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer s.Stop()

	if _, err := s.Do("SET", "greeting", "hello"); err != nil {
		log.Fatal(err)
	}
	reply, err := s.Do("GET", "greeting")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(reply)
	// Output: hello
}

func ExampleStartCluster() {
	c, err := redistest.StartCluster(3, 0, redistest.Options{})
	if err != nil {
		log.Fatal(err)
	}
	defer c.Stop()

	m, err := c.MasterOfSlot(0)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(len(c.Masters()), m == c.Nodes[0])
	// Output: 3 true
}
