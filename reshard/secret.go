package reshard

import (
	"strings"

	"github.com/gomodule/redigo/redis"
)

// echoMarker starts the part of Redis' "unknown command" reply that
// repeats the command's arguments.
const echoMarker = "with args beginning with:"

// hidePassword keeps the password MIGRATE ... AUTH/AUTH2 carries out of
// a server's error reply to it (a server that does not know MIGRATE
// echoes its arguments): the echo is dropped and any other copy masked.
func hidePassword(err error, password string) error {
	re, ok := err.(redis.Error)
	if !ok || password == "" {
		return err
	}
	text := string(re)
	if i := strings.Index(text, echoMarker); i >= 0 {
		text = text[:i] + echoMarker + " (hidden)"
	}
	return redis.Error(strings.ReplaceAll(text, password, "***"))
}
