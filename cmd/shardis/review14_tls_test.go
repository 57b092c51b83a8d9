package main

import (
	"fmt"
	"strings"
	"testing"

	"github.com/shardis/shardis/internal/redistest"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// reshard and verify between TLS-only servers with an ACL user: the
// rediss-ring URLs carry user and password, and the CA of the servers'
// private certificates comes from a config file that refines the URL
// (pool.tls.ca_file), as a URL has no option for it. The dry run, the
// move and the verification work, and the password appears in no line
// of their output.
func TestReview14ReshardOverTLS(t *testing.T) {
	const user, secret = "ops", "cli-tls-s3cret-14"
	servers := redistest.StartNTB(t, 3, redistest.Options{TLS: true, Args: []string{"--tls-cluster", "yes"},
		Users: []redistest.User{{Name: user, Password: secret}}})
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
	from, to := withCA(url(servers[:2], "a,b")), withCA(url(servers, "a,b,c"))
	fill := 0
	for _, s := range servers[:2] {
		for i := range 200 {
			k := fmt.Sprint("tls:", i)
			code, out, errOut := runCLI(t, "", "locate", "--config", from, k)
			require.Equal(t, 0, code, errOut)
			if strings.Contains(out, "\t"+map[bool]string{true: "a", false: "b"}[s == servers[0]]+"\n") {
				_, err := s.Do("SET", k, "v")
				require.NoError(t, err)
				fill++
			}
		}
	}
	require.Equal(t, 200, fill)
	check := func(what string, code, want int, out, errOut string) {
		t.Helper()
		assert.Equal(t, want, code, "%s: stdout %s\nstderr %s", what, out, errOut)
		assert.NotContains(t, out+errOut, secret, what)
	}
	code, out, errOut := runCLI(t, "", "verify", "--config", from)
	check("verify from", code, 0, out, errOut)
	assert.Contains(t, out, "200 keys scanned, 0 misplaced")
	code, out, errOut = runCLI(t, "", "reshard", "--from", from, "--to", to, "--dry-run", "--quiet")
	check("dry run", code, 0, out, errOut)
	code, out, errOut = runCLI(t, "", "reshard", "--from", from, "--to", to, "--yes", "--quiet")
	check("reshard", code, 0, out, errOut)
	assert.Contains(t, out, "verify: 200 keys scanned, 0 misplaced")
	code, out, errOut = runCLI(t, "", "verify", "--config", to)
	check("verify to", code, 0, out, errOut)
	assert.Contains(t, out, "200 keys scanned, 0 misplaced")

	// Without the CA the servers' certificates are not trusted: the
	// command fails, without the password.
	code, out, errOut = runCLI(t, "", "verify", "--config", url(servers, "a,b,c"))
	check("verify without the CA", code, 3, out, errOut)
	assert.Contains(t, errOut, "certificate signed by unknown authority")
}
