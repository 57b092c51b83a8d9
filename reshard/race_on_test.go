//go:build race

package reshard_test

// raceDetector reports that the tests run under -race: the shardis CLI
// they run is built with it too.
const raceDetector = true
