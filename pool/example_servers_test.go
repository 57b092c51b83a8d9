package pool

import (
	"flag"
	"fmt"
	"os"

	"github.com/shardis/shardis/internal/redistest"
)

// skipExamplesWithoutRedis makes the test binary skip the examples, which
// run against a real redis-server, when redis-server is not installed and
// CI is not set; under CI a missing server stays a failure.
func skipExamplesWithoutRedis() {
	err := redistest.Available()
	if ci := os.Getenv("CI"); err == nil || (ci != "" && ci != "false") {
		return
	}
	fmt.Fprintf(os.Stderr, "%v: skipping the examples (install redis-server and redis-tools to run them)\n", err)
	if flag.Lookup("test.skip") != nil {
		_ = flag.Set("test.skip", "^Example")
	}
}
