package shardisotel_test

import "fmt"

// clusterSeeds returns the seed addresses of the package's shared
// cluster, for the example (its users log in as user, password). When
// the cluster cannot be started it returns an address nothing listens
// on, so that the example fails by its output.
func clusterSeeds() []string {
	c, err := shared.Get()
	if err != nil {
		fmt.Println("example cluster:", err)
		return []string{"127.0.0.1:1"}
	}
	return c.Seeds()
}
