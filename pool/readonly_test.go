package pool

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/internal/redistest"
)

// clientFlags returns the flags field of CLIENT INFO for c.
func clientFlags(t *testing.T, c redis.Conn) string {
	t.Helper()
	info, err := redis.String(c.Do("CLIENT", "INFO"))
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range strings.Fields(info) {
		if v, ok := strings.CutPrefix(f, "flags="); ok {
			return v
		}
	}
	t.Fatalf("no flags in CLIENT INFO %q", info)
	return ""
}

func TestGetReadOnly(t *testing.T) {
	// A lone cluster-enabled node: no slots, but it accepts READONLY.
	srv := startServer(t, redistest.Options{Cluster: true})
	set := newTestSet(t, Options{})
	ctx := context.Background()

	ro, err := set.GetReadOnly(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := set.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if f := clientFlags(t, ro); !strings.Contains(f, "r") {
		t.Errorf("GetReadOnly conn flags = %q, want r (READONLY sent)", f)
	}
	if f := clientFlags(t, rw); strings.Contains(f, "r") {
		t.Errorf("Get conn flags = %q, want no r", f)
	}
	ro.Close()
	rw.Close()
	if set.ReadOnlyPool(srv.Addr) == set.Pool(srv.Addr) {
		t.Error("read-only and read-write conns share a pool")
	}
	if st := set.Stats()[srv.Addr]; st.Active != 2 || st.Idle != 2 || st.Dials != 2 {
		t.Errorf("Stats = %+v, want both pools counted (Active 2 Idle 2 Dials 2)", st)
	}

	// Options.ReadOnly makes Get's conns read-only too.
	all := newTestSet(t, Options{ReadOnly: true})
	c, err := all.Get(ctx, srv.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if f := clientFlags(t, c); !strings.Contains(f, "r") {
		t.Errorf("Get with Options.ReadOnly: flags = %q, want r", f)
	}
}

func TestGetReadOnlyOnPlainServer(t *testing.T) {
	srv := plainServer(t)
	set := newTestSet(t, Options{})
	_, err := set.GetReadOnly(context.Background(), srv.Addr)
	var de *DialError
	if !errors.As(err, &de) || !strings.Contains(err.Error(), "READONLY") {
		t.Fatalf("GetReadOnly on a plain server = %v, want *DialError about READONLY", err)
	}
}
