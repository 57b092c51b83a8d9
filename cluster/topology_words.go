package cluster

// word is text for the field names and the few values (roles, health
// states, a loopback IP) that a CLUSTER SHARDS reply repeats for every
// node: those come back as the constant strings, without an allocation
// each. A reply for 1,000 masters with 2 replicas holds about 30,000 of
// them, a megabyte of garbage per refresh when each became a new string.
func word(v any) (string, bool) {
	b, ok := v.([]byte)
	if !ok {
		return text(v)
	}
	switch string(b) { // compared in place, not converted
	case "slots":
		return "slots", true
	case "nodes":
		return "nodes", true
	case "id":
		return "id", true
	case "port":
		return "port", true
	case "tls-port":
		return "tls-port", true
	case "ip":
		return "ip", true
	case "endpoint":
		return "endpoint", true
	case "hostname":
		return "hostname", true
	case "role":
		return "role", true
	case "replication-offset":
		return "replication-offset", true
	case "health":
		return "health", true
	case "master":
		return "master", true
	case "replica":
		return "replica", true
	case "online":
		return "online", true
	case "failed":
		return "failed", true
	case "loading":
		return "loading", true
	case "":
		return "", true
	case "127.0.0.1":
		return "127.0.0.1", true
	}
	return string(b), true
}
