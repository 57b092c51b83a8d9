package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// shardis reshard over TLS with an ACL user that may not run MIGRATE:
// the command fails (exit status 1) before moving anything, says the
// user lacks the permission the server's refusal names (not to check
// the way between the servers), and shows no password.
func TestReview21ReshardACLUserWithoutMigrate(t *testing.T) {
	const user, secret = "ops", "cli-acl-s3cret-21"
	servers := redistest.StartNTB(t, 2, redistest.Options{TLS: true, Args: []string{"--tls-cluster", "yes"},
		Users: []redistest.User{
			{Name: "admin", Password: "admin-pw-21"},
			{Name: user, Password: secret, Rules: "~* &* +@all -migrate"},
		}})
	url := func(ss []*redistest.Server, names string) string {
		addrs := make([]string, len(ss))
		for i, s := range ss {
			addrs[i] = s.Addr
		}
		return fmt.Sprintf("rediss-ring://%s:%s@%s?names=%s", user, secret, strings.Join(addrs, ","), names)
	}
	withCA := func(u string) string {
		return writeConfig(t, fmt.Sprintf("url: %q\npool:\n  tls:\n    ca_file: %q\n", u, servers[0].TLS.CAFile))
	}
	from, to := withCA(url(servers[:1], "a")), withCA(url(servers[1:], "b"))
	_, err := servers[0].Do("SET", "acl21", "v")
	require.NoError(t, err)
	code, out, errOut := runCLI(t, "", "reshard", "--from", from, "--to", to, "--yes", "--quiet")
	assert.Equal(t, 1, code, "stdout %s\nstderr %s", out, errOut)
	assert.NotContains(t, out+errOut, secret)
	assert.Contains(t, errOut, "no permissions to run the 'migrate' command")
	assert.Contains(t, errOut, "lacks the permission")
	assert.NotContains(t, errOut, "tls-cluster yes", "no TLS advice for an ACL refusal")
	v, err := servers[0].Do("GET", "acl21")
	require.NoError(t, err)
	assert.Equal(t, "v", v, "the key stays at its old node")
}
