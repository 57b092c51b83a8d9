package shard

import (
	"strings"

	"github.com/gomodule/redigo/redis"
	"github.com/shardis/shardis/shard/command"
)

// echoMarker starts the part of Redis' "unknown command" reply that
// repeats the command's arguments (a renamed or disabled MIGRATE, AUTH,
// CONFIG, ...).
const echoMarker = "with args beginning with:"

// hideSecretEcho keeps the secrets of a command (secretArgs: the password
// of MIGRATE's AUTH/AUTH2, AUTH, HELLO ... AUTH, ACL SETUSER, CONFIG SET)
// out of the server's error reply to it: the echoed arguments are dropped
// and any other copy of a secret is masked, so that neither the caller's
// error nor a hook's event carries it. Other replies are returned as they
// are.
func hideSecretEcho(name string, args []any, re redis.Error) redis.Error {
	secret := secretArgs(name, args)
	text := string(re)
	if word, ok := misspeltSecret(name); ok {
		// The server quotes the misspelt name itself, which may hold the
		// password ("AUTH app password" given as one name), and the
		// arguments.
		if j := strings.Index(text, "unknown command"); j >= 0 {
			return redis.Error(text[:j] + "unknown command (name and arguments hidden: a misspelt " + strings.ToUpper(word) + ")")
		}
	}
	hidden := false
	for i, a := range args {
		if !secret(i) {
			continue
		}
		if !hidden {
			if j := strings.Index(text, echoMarker); j >= 0 {
				text = text[:j] + echoMarker + " (hidden)"
			}
			hidden = true
		}
		if s := command.ArgText(a); len(s) >= 3 {
			text = strings.ReplaceAll(text, s, "***")
		}
	}
	return redis.Error(text)
}
