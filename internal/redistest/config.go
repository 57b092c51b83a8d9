package redistest

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
)

// Names of the files a server keeps in its directory.
const (
	confName   = "redis.conf"
	logName    = "redis.log"
	outputName = "output.log" // the process's stdout and stderr
	nodesName  = "nodes.conf"
	tlsDirName = "tls"
)

// configText returns the redis.conf for a server on port in dir. Secrets
// only ever go into this file, which is written with mode 0600.
func configText(o Options, port int, dir string, files *TLSFiles) string {
	var b strings.Builder
	line := func(words ...string) {
		b.WriteString(strings.Join(words, " "))
		b.WriteByte('\n')
	}
	p := strconv.Itoa(port)
	line("bind", "127.0.0.1")
	line("daemonize", "no")
	if o.TLS {
		line("port", "0")
		line("tls-port", p)
		line("tls-cert-file", quote(files.CertFile))
		line("tls-key-file", quote(files.KeyFile))
		line("tls-ca-cert-file", quote(files.CAFile))
		line("tls-client-cert-file", quote(files.ClientCertFile))
		line("tls-client-key-file", quote(files.ClientKeyFile))
		line("tls-replication", "yes")
		if o.TLSClientAuth {
			line("tls-auth-clients", "yes")
		} else {
			line("tls-auth-clients", "no")
		}
	} else {
		line("port", p)
	}
	line("dir", quote(dir))
	line("logfile", quote(filepath.Join(dir, logName)))
	line("save", `""`)
	line("appendonly", "no")
	// SIGTERM (Stop) exits at once, without waiting for replicas.
	line("shutdown-on-sigterm", "nosave", "now")
	// DEBUG SLEEP and friends help tests of timeouts; loopback only.
	line("enable-debug-command", "local")
	line("repl-diskless-sync-delay", "0")
	line("repl-ping-replica-period", "1")
	if o.Cluster {
		line("cluster-enabled", "yes")
		line("cluster-config-file", nodesName)
		line("cluster-node-timeout", strconv.FormatInt(o.nodeTimeout().Milliseconds(), 10))
		line("cluster-port", strconv.Itoa(port+busPortOffset))
		if o.TLS {
			line("tls-cluster", "yes")
		}
	}
	if o.DefaultPassword != "" {
		line("requirepass", quote(o.DefaultPassword))
	} else if len(o.Users) > 0 {
		line("user", "default", "off")
	}
	for _, u := range o.Users {
		words := []string{"user", quote(u.Name), "reset", "on"}
		if u.Password == "" {
			words = append(words, "nopass")
		} else {
			sum := sha256.Sum256([]byte(u.Password))
			words = append(words, "#"+hex.EncodeToString(sum[:]))
		}
		rules := u.Rules
		if strings.TrimSpace(rules) == "" {
			rules = defaultRules
		}
		for _, r := range strings.Fields(rules) {
			words = append(words, quote(r))
		}
		line(words...)
	}
	// Cluster replicas log in to their master with the harness account;
	// masterauth can only hold the password in plain text.
	if user, pass, ok := o.credentials(); ok && o.Cluster {
		if user != "" {
			line("masteruser", quote(user))
		}
		line("masterauth", quote(pass))
	}
	return b.String()
}

// quote returns s as a double-quoted redis.conf token: backslash, quote and
// every byte outside printable ASCII are escaped, so that Redis reads back
// exactly s.
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '\\' || c == '"':
			b.WriteByte('\\')
			b.WriteByte(c)
		case c < ' ' || c > '~':
			fmt.Fprintf(&b, "\\x%02x", c)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('"')
	return b.String()
}
