package command

import (
	"fmt"
	"slices"
	"strings"

	"github.com/shardis/shardis/shard/command/internal/cmdspec"
)

// FromCommandInfo builds the Info of a command the generated table does not
// know from its entry in a server's COMMAND INFO reply (RESP2, as redigo
// returns it): commands of Redis versions newer than RedisVersion, Valkey
// and module commands, renamed commands. Flags, key specs and tips the
// package does not know are left out, so a spec this package cannot
// evaluate makes KeyPositions fail rather than guess.
//
// The result is not added to the table (Lookup does not find it); callers
// cache it themselves, and should check it against COMMAND GETKEYS once
// before trusting its key positions. An error describes what is malformed
// in the reply.
func FromCommandInfo(entry any) (*Info, error) {
	cmd, err := cmdspec.ParseCommand(entry)
	if err != nil {
		return nil, fmt.Errorf("shardis: COMMAND INFO reply: %w", err)
	}
	info := fromSpec(cmd)
	info.finish()
	return info, nil
}

func fromSpec(c cmdspec.Command) *Info {
	info := &Info{
		Name:          strings.ToLower(c.Name),
		Arity:         c.Arity,
		FirstKey:      c.FirstKey,
		LastKey:       c.LastKey,
		Step:          c.Step,
		ACLCategories: nonEmpty(c.ACLCategories),
		Tips:          nonEmpty(c.Tips),
	}
	for _, f := range c.Flags {
		if i := slices.Index(flagNames[:], f); i >= 0 {
			info.Flags |= 1 << i
		}
	}
	for _, t := range c.Tips {
		k, v, _ := strings.Cut(t, ":")
		switch k {
		case "request_policy":
			if i := slices.Index(requestNames[:], v); i > 0 {
				info.RequestPolicy = RequestPolicy(i)
			}
		case "response_policy":
			if i := slices.Index(responseNames[:], v); i > 0 {
				info.ResponsePolicy = ResponsePolicy(i)
			}
		}
	}
	for _, ks := range c.KeySpecs {
		var spec KeySpec
		for _, f := range ks.Flags {
			if i := slices.Index(keyFlagNames[:], f); i >= 0 {
				spec.Flags |= 1 << i
			}
		}
		switch ks.Begin {
		case "index":
			spec.Begin = BeginSearch{Kind: BeginIndex, Index: ks.Index}
		case "keyword":
			spec.Begin = BeginSearch{Kind: BeginKeyword, Keyword: ks.Keyword, StartFrom: ks.StartFrom}
		}
		switch ks.Find {
		case "range":
			spec.Find = FindKeys{Kind: FindRange, LastKey: ks.LastKey, KeyStep: ks.KeyStep, Limit: ks.Limit}
		case "keynum":
			spec.Find = FindKeys{Kind: FindKeyNum, KeyNumIdx: ks.KeyNumIdx, FirstKey: ks.FirstKey, KeyStep: ks.KeyStep}
		}
		info.KeySpecs = append(info.KeySpecs, spec)
	}
	for _, s := range c.Subcommands {
		info.Subcommands = append(info.Subcommands, fromSpec(s))
	}
	return info
}

// nonEmpty returns a copy of ss, or nil when it is empty, as in the table.
func nonEmpty(ss []string) []string {
	if len(ss) == 0 {
		return nil
	}
	return slices.Clone(ss)
}
