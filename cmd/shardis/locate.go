package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"strconv"
	"strings"

	"github.com/shardis/shardis/internal/errtext"
	"github.com/shardis/shardis/ring"
	"github.com/shardis/shardis/shard"
)

func init() {
	register(command{name: "locate", summary: "print the ring shard of keys (murmur3, Jedis, twemproxy)", run: runLocate})
}

const locateUsage = `Usage: shardis locate --config FILE [--hex] [KEY ...]
       shardis locate --hash {murmur3|jedis|jedis-legacy|ketama|modula}
       [--key-hash NAME] [--tag {none|cluster|jedis|XY}] --shards LIST [--hex] [KEY ...]

--config reads the ring (hash, key_hash, tag and shards with their names and
weights) from the client's YAML or JSON file (see shard.LoadConfig) or a
redis-ring:// URL, so that the answer is the one the client gives; it cannot be combined with --hash,
--key-hash, --tag or --shards. Shard names matter: with jedis placement,
listing the same servers without their names moves most keys.

Prints one line per key, in input order: the key exactly as given, a TAB,
the index of its shard in LIST (from 0), a TAB, and the shard's label (its
name, else host:port).

LIST is comma-separated twemproxy-style entries "HOST:PORT[:WEIGHT][ NAME]",
for example "127.0.0.1:6381:2 shard-a,127.0.0.1:6382:1 shard-b"; the weight
defaults to 1.

--hash jedis places keys as Jedis ShardedJedis/JedisSharding 2.10 - 6.x do
(jedis-legacy: 2.0 - 2.9); ketama and modula as a twemproxy pool with the
same "servers:" list does; murmur3 is the library's own ring. --key-hash and
--tag default to the algorithm's defaults: murmur3 hashes with murmur3 and
the Redis Cluster tag rule; jedis with "murmur" (or "md5") and no tags;
ketama and modula with "fnv1a_64" (or any twemproxy hash: one_at_a_time,
md5, crc16, crc32, crc32a, fnv1_64, fnv1a_64, fnv1_32, fnv1a_32, hsieh,
murmur, jenkins) and no tags.

Without KEY arguments, keys are read from standard input, one per line. Only
the "\n" that ends a line is removed: every other byte, a "\r" included,
belongs to the key, and an empty line is the empty key. Use --hex for keys
that hold a "\n". Put "--" before keys that start with "-".

Flags:
`

// runLocate implements "shardis locate".
func runLocate(ctx context.Context, env *cliEnv, args []string) error {
	fs := flag.NewFlagSet("locate", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), locateUsage)
		fs.PrintDefaults()
	}
	algorithm := fs.String("hash", string(ring.Murmur3), "placement algorithm: murmur3, jedis, jedis-legacy, ketama or modula")
	keyHash := fs.String("key-hash", "", "key hash function (default: the algorithm's)")
	tag := fs.String("tag", "", "hash tag rule: none, cluster, jedis, or a two-character pair such as {} (default: the algorithm's)")
	shardList := fs.String("shards", "", "the shards, \"HOST:PORT[:WEIGHT][ NAME],...\" (required)")
	configFile := fs.String("config", "", "YAML or JSON client config file (ring mode), or a redis-ring:// URL, to read the ring from, instead of --hash, --key-hash, --tag and --shards")
	hexKeys := fs.Bool("hex", false, "each key is its bytes in hex (\"666f6f\" is foo); printed back as given.\n"+
		"On standard input a \"\\r\" before the \"\\n\" is then ignored too")
	if err := parseFlags(env, fs, args, false); err != nil {
		return err
	}
	var ringCfg ring.Config
	if *configFile != "" {
		var conflict []string
		fs.Visit(func(f *flag.Flag) {
			if f.Name == "hash" || f.Name == "key-hash" || f.Name == "tag" || f.Name == "shards" {
				conflict = append(conflict, "--"+f.Name)
			}
		})
		if len(conflict) > 0 {
			return fmt.Errorf("%w: --config gives the whole ring; drop %s", errUsage, strings.Join(conflict, ", "))
		}
		cfg, err := loadTopology(*configFile)
		if err != nil {
			return err
		}
		if cfg.Mode == shard.ModeCluster {
			return fmt.Errorf("%w: %s is a cluster-mode config; use shardis slot for the hash slot of keys", errUsage, redactArg(*configFile))
		}
		ringCfg = cfg.RingConfig()
	} else {
		if *shardList == "" {
			return fmt.Errorf("%w: --shards is required (for example --shards 127.0.0.1:6379,127.0.0.1:6380), or --config FILE", errUsage)
		}
		shards, err := ring.ParseShards(*shardList)
		if err != nil {
			return errtext.Errorf("%w: %w", errUsage, err)
		}
		ringCfg = ring.Config{Algorithm: ring.Algorithm(*algorithm), KeyHash: *keyHash, Tag: *tag, Shards: shards}
	}
	r, err := ring.New(ringCfg)
	if err != nil {
		return errtext.Errorf("%w: %w", errUsage, err)
	}
	shards := r.Shards()
	loc := &locator{ring: r, shards: shards}

	return answerKeys(ctx, env, "locate", fs.Args(), *hexKeys, loc.write)
}

// locator answers "locate" queries against one ring.
type locator struct {
	ring   *ring.Ring
	shards []ring.Shard
}

// write prints "given<TAB>index<TAB>label" and returns the writer's first
// error.
func (l *locator) write(out *bufio.Writer, given, key []byte) error {
	i := l.ring.LocateBytes(key)
	out.Write(given)
	out.WriteByte('\t')
	out.Write(strconv.AppendInt(out.AvailableBuffer(), int64(i), 10))
	out.WriteByte('\t')
	out.WriteString(l.shards[i].Label())
	return out.WriteByte('\n')
}
