package shard_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
	"github.com/stretchr/testify/require"
)

// Subscribes and unsubscribes of channels and patterns, from one
// goroutine, while the ring's shards are restarted one after another:
// once things settle, each shard has subscribed exactly the names whose
// last call was a subscribe.
func TestReview2PubSubChurnDuringRestarts(t *testing.T) {
	if testing.Short() {
		t.Skip("restarts servers for seconds")
	}
	servers := redistest.StartNTB(t, 3, redistest.Options{})
	c := newClient(t, ringConfig(servers))
	r, err := ring.New(ringConfig(servers).RingConfig())
	require.NoError(t, err)
	ctx := context.Background()
	sub, err := c.NewSubscription(shard.SubscriptionOptions{})
	require.NoError(t, err)
	defer sub.Close()

	stop := make(chan struct{})
	var wg sync.WaitGroup
	var restartErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			s := servers[i%len(servers)]
			if err := s.Kill(); err != nil {
				restartErr = err
				return
			}
			if err := s.Restart(); err != nil {
				restartErr = err
				return
			}
		}
	}()

	const names = 40
	want := map[string]bool{} // "c:name" or "p:name" -> subscribed
	deadline := time.Now().Add(4 * time.Second)
	var unexpected []error
	for time.Now().Before(deadline) {
		i := rand.IntN(names)
		pattern := rand.IntN(4) == 0
		subscribe := rand.IntN(2) == 0
		name := fmt.Sprintf("r2churn:%d", i)
		key := "c:" + name
		if pattern {
			name += ":*"
			key = "p:" + name
		}
		cctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		switch {
		case subscribe && pattern:
			err = sub.PSubscribe(cctx, name)
		case subscribe:
			err = sub.Subscribe(cctx, name)
		case pattern:
			err = sub.PUnsubscribe(cctx, name)
		default:
			err = sub.Unsubscribe(cctx, name)
		}
		cancel()
		var se *shard.SubscribeError
		if errors.As(err, &se) {
			unexpected = append(unexpected, err)
		}
		want[key] = subscribe
	}
	close(stop)
	wg.Wait()
	require.NoError(t, restartErr)
	require.Empty(t, unexpected)

	check := func() error {
		for key, on := range want {
			name := key[2:]
			for si, s := range servers {
				var got int
				if key[0] == 'p' {
					// PUBLISH on the shard itself counts the pattern's
					// subscribers there (no channel has that name).
					out, err := s.Do("PUBLISH", name[:len(name)-1]+"probe", "x")
					if err != nil {
						return err
					}
					if out != "0" {
						got = 1
					}
				} else {
					got = numSub(t, s, "NUMSUB", name)
				}
				exp := 0
				if on && (key[0] == 'p' || r.Locate(name) == si) {
					exp = 1
				}
				if got != exp {
					return fmt.Errorf("%s on shard %d: %d subscribers, want %d", key, si, got, exp)
				}
			}
		}
		return nil
	}
	var last error
	deadline = time.Now().Add(15 * time.Second)
	for last = check(); last != nil && time.Now().Before(deadline); last = check() {
		time.Sleep(50 * time.Millisecond)
	}
	require.NoError(t, last, "stats %+v", sub.Stats())
}
