package command

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"go.uber.org/goleak"

	"github.com/shardis/shardis/internal/redistest"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if err := redistest.StopAll(); err != nil && code == 0 {
		code = 1
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			os.Stderr.WriteString("FAIL: goroutines leaked: " + err.Error() + "\n")
			code = 1
		}
	}
	os.Exit(code)
}

// dialServer starts a redis-server for the test (skipped without one,
// failed under CI) and returns a connection to it.
func dialServer(t *testing.T) redis.Conn {
	t.Helper()
	s := redistest.StartTB(t, redistest.Options{})
	c, err := redis.Dial("tcp", s.Addr, redis.DialReadTimeout(10*time.Second), redis.DialWriteTimeout(10*time.Second))
	if err != nil {
		t.Fatalf("dial %s: %v", s.Addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// serverKeys asks COMMAND GETKEYS for the keys of name args. A server
// error reply is returned as redis.Error.
func serverKeys(t *testing.T, c redis.Conn, name string, args []any) ([]string, error) {
	t.Helper()
	cmd := append([]any{"GETKEYS", name}, args...)
	keys, err := redis.Strings(c.Do("COMMAND", cmd...))
	var re redis.Error
	if err != nil && !errors.As(err, &re) {
		t.Fatalf("COMMAND GETKEYS %s: %v", name, err) // connection trouble, not a reply
	}
	return keys, err
}

// ourKeys returns the text of the arguments KeyPositions picks.
func ourKeys(name string, args []any) ([]int, []string, error) {
	pos, err := Lookup(name).KeyPositions(args, nil)
	if err != nil {
		return nil, nil, err
	}
	keys := make([]string, len(pos))
	for i, p := range pos {
		keys[i], _ = Arg(args[p])
	}
	return pos, keys, nil
}
