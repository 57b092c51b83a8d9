package shard_test

import "sync"

// loopWorkers starts n goroutines; goroutine g calls work(g, i) for i =
// 0, 1, 2, ... until stop is called. stop waits for them to return.
// work must not call t.Fatal or require (it runs off the test goroutine).
func loopWorkers(n int, work func(g, i int)) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; ; i++ {
				select {
				case <-done:
					return
				default:
				}
				work(g, i)
			}
		}()
	}
	return func() {
		close(done)
		wg.Wait()
	}
}
