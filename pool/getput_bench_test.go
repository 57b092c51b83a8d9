package pool

import (
	"context"
	"testing"
)

// BenchmarkGetPut measures a borrow and a give-back of an idle pooled
// connection to a real server (the pool's part of every command that
// does not go through an automatic pipeline): the borrow check and the
// check of the connection's name when it comes back.
func BenchmarkGetPut(b *testing.B) {
	srv := plainServer(b)
	set, err := NewSet(Options{ClientName: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	defer set.Close()
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for range b.N {
		c, err := set.Get(ctx, srv.Addr)
		if err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
}
