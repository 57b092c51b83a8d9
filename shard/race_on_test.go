//go:build race

package shard_test

// raceDetector reports that the tests run under -race, where sync.Pool
// drops a share of what is put back and allocation counts rise.
const raceDetector = true
