package reshard_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/reshard"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestReview12ByteRateHoldsForLargeValues: a pace in bytes (--rate
// 2MB/s) over a few large values (5 of 4 MB) must hold over the run,
// within 20%: 20 MB take about 10 s, not one batch's round trip, and the
// values arrive spread over the run, not in a burst.
func TestReview12ByteRateHoldsForLargeValues(t *testing.T) {
	const (
		n    = 5
		size = 4 << 20
		rate = 2 << 20 // bytes per second, as the CLI reads 2MB/s
	)
	servers, from, to := moveAll(t)
	conn, err := redis.Dial("tcp", servers[0].Addr)
	require.NoError(t, err)
	defer conn.Close()
	val := strings.Repeat("v", size)
	var total int64
	for i := 0; i < n; i++ {
		k := fmt.Sprintf("big:%d", i)
		_, err := conn.Do("SET", k, val)
		require.NoError(t, err)
		u, err := redis.Int64(conn.Do("MEMORY", "USAGE", k))
		require.NoError(t, err)
		total += u
	}
	var (
		mu      sync.Mutex
		arrived []time.Duration // when the new node's key count went up, after the start
		sampErr error
	)
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	start := time.Now()
	go func() {
		defer wg.Done()
		seen := 0
		for {
			v, err := servers[1].Do("DBSIZE")
			k, cerr := strconv.Atoi(v)
			at := time.Since(start)
			mu.Lock()
			if err != nil || cerr != nil {
				sampErr = fmt.Errorf("DBSIZE %q: %v %v", v, err, cerr)
				mu.Unlock()
				return
			}
			for ; seen < k; seen++ {
				arrived = append(arrived, at)
			}
			mu.Unlock()
			select {
			case <-stop:
				return
			case <-time.After(20 * time.Millisecond):
			}
		}
	}()
	rep, err := reshard.Move(context.Background(), reshard.Options{From: from, To: to, BytesPerSecond: rate,
		SkipClientCheck: true, SkipVerify: true})
	elapsed := time.Since(start)
	close(stop)
	wg.Wait()
	require.NoError(t, err)
	require.NoError(t, sampErr)
	// A value that landed after the sampler's last look, which stop may
	// have cut short, arrived before the Move returned.
	v, serr := servers[1].Do("DBSIZE")
	require.NoError(t, serr)
	k, serr := strconv.Atoi(v)
	require.NoError(t, serr)
	for len(arrived) < k {
		arrived = append(arrived, elapsed)
	}
	require.EqualValues(t, n, rep.Moved)
	require.Len(t, arrived, n, "values seen arriving")
	want := time.Duration(float64(total) / rate * float64(time.Second))
	last := arrived[n-1]
	t.Logf("%d bytes (MEMORY USAGE) in %v (the last value at %v; arrivals %v); at the pace: %v", total, elapsed, last, arrived, want)
	assert.InDelta(t, want.Seconds(), last.Seconds(), 0.2*want.Seconds(), "the last value's arrival against the pace")
	for i := 1; i < n; i++ {
		gap := arrived[i] - arrived[i-1]
		assert.GreaterOrEqual(t, gap.Seconds(), 0.8*want.Seconds()/n, "value %d arrived %v after the one before", i, gap)
	}
}
