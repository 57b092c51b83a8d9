package sentinel_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/shardis/shardis/sentinel"
)

// A server whose AUTH command is renamed (or a proxy that does not know
// it) answers AUTH with "unknown command 'AUTH', with args beginning
// with: '<password>'": the Sentinel password must not reach the error
// that MasterAddr returns, whatever verb prints it.
func TestReview6SentinelAuthEchoHidesPassword(t *testing.T) {
	const secret = "s3ntinel-echo-Secret"
	srv := redistest.StartTB(t, redistest.Options{Args: []string{"--rename-command", "AUTH", "AUTH-RENAMED"}})
	for _, user := range []string{"", "app"} {
		c, err := sentinel.New("mymaster", []string{srv.Addr}, sentinel.Options{Username: user, Password: secret})
		if err != nil {
			t.Fatal(err)
		}
		_, _, err = c.MasterAddr(context.Background())
		if err == nil {
			t.Fatalf("user %q: MasterAddr succeeded against a server that does not know AUTH", user)
		}
		if !errors.Is(err, sentinel.ErrNoSentinel) {
			t.Errorf("user %q: error %v does not match ErrNoSentinel", user, err)
		}
		for _, verb := range []string{"%v", "%+v", "%#v", "%s", "%q"} {
			if s := fmt.Sprintf(verb, err); strings.Contains(s, secret) {
				t.Errorf("user %q: %s of the error shows the password: %s", user, verb, s)
			}
		}
		if _, _, err := c.Dial(context.Background(), srv.Addr); err == nil {
			t.Errorf("user %q: Dial succeeded", user)
		} else if s := fmt.Sprintf("%v %+v %#v", err, err, err); strings.Contains(s, secret) {
			t.Errorf("user %q: Dial's error shows the password: %s", user, s)
		}
	}
}
