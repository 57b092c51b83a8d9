package pool

import (
	"os"
	"os/exec"
	"testing"
)

// TestReview5BuildsOn32BitPlatforms: the reply parser passed the array
// length limit 1<<31 as an int, a constant that overflows int on 32-bit
// platforms, so the package, and every package of the library that
// imports it, did not compile for GOARCH=386 or arm (a Raspberry Pi, an
// old router, a 32-bit container). It must build there too; lengths are
// parsed without overflowing a 32-bit int (a ten-digit length wrapped
// around into a small or negative one, read as a short bulk string or a
// null).
func TestReview5BuildsOn32BitPlatforms(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the go command")
	}
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Fatalf("the go command is needed: %v", err)
	}
	for _, arch := range []string{"386", "arm"} {
		cmd := exec.Command(goCmd, "build", ".")
		cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+arch, "CGO_ENABLED=0")
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Errorf("GOARCH=%s go build: %v\n%s", arch, err, out)
		}
	}
}
