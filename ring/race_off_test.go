//go:build !race

package ring

// raceDetector reports that the tests run under -race, where the
// statistical tests use fewer keys to stay fast.
const raceDetector = false
