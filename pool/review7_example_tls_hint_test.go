package pool_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/pool"
)

// A server whose port expects TLS resets a plain-text connection at its
// first command, before any reply. The error then matches
// ErrClosedBeforeReply, which says so, next to the network's own error:
// the fix is Options.TLSConfig.
func ExampleErrClosedBeforeReply() {
	s, err := redistest.Start(redistest.Options{TLS: true}) // in your code: your server
	if err != nil {
		fmt.Fprintln(os.Stderr, "example server:", err)
		return
	}
	defer s.Stop()

	set, err := pool.NewSet(pool.Options{ClientName: "app"}) // no TLSConfig
	if err != nil {
		fmt.Println(err)
		return
	}
	defer set.Close()
	_, err = set.Get(context.Background(), s.Addr)
	var de *pool.DialError
	fmt.Println("dial error:", errors.As(err, &de))
	fmt.Println("closed before the first reply:", errors.Is(err, pool.ErrClosedBeforeReply))
	// Output:
	// dial error: true
	// closed before the first reply: true
}
