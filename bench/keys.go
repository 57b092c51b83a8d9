package bench

import "fmt"

// Keys returns n distinct keys "<prefix>:<i>:pf", with i written as eight or
// more decimal digits, so that Keys("user", n) gives 16-byte keys such as
// "user:00000042:pf" for n up to 10^8. It returns nil for n <= 0.
func Keys(prefix string, n int) []string {
	if n <= 0 {
		return nil
	}
	keys := make([]string, n)
	for i := range keys {
		keys[i] = fmt.Sprintf("%s:%08d:pf", prefix, i)
	}
	return keys
}
