package shard

import (
	"fmt"
	"os"
	"strings"
)

// fileMigration is the migration block of a config file:
//
//	migration:
//	  from: redis-ring://10.0.0.1:6379,10.0.0.2:6379   # or from_file: old.yaml
//	  addrs: {"10.0.0.4:6379": "10.1.0.4:6379"}        # as the old nodes reach the new
type fileMigration struct {
	From     string            `yaml:"from"`
	FromFile string            `yaml:"from_file"`
	Addrs    map[string]string `yaml:"addrs"`
}

// apply sets cfg.Migration from the block (nothing when it is absent).
// reading lists the files being read, the block's own last: a from_file
// that is one of them (under any name) would be read forever.
func (fm *fileMigration) apply(cfg *Config, reading []string) error {
	if fm == nil {
		return nil
	}
	var (
		from Config
		err  error
	)
	switch {
	case fm.From != "" && fm.FromFile != "":
		return fmt.Errorf("%w: migration: give from or from_file, not both", ErrBadConfig)
	case fm.From != "":
		from, err = ParseURL(fm.From)
	case fm.FromFile != "":
		if strings.Contains(fm.FromFile, "://") {
			// A URL given as a file: the error opening it would quote
			// its password.
			return badFieldf("migration.from_file", "migration.from_file holds a URL, not a file's path (not quoted, as it may hold a password): give a URL as migration.from")
		}
		if loopsBack(fm.FromFile, reading) {
			return fmt.Errorf("%w: migration.from_file %s leads back to a file being read (a topology cannot migrate from itself)", ErrBadConfig, fm.FromFile)
		}
		from, err = loadConfig(fm.FromFile, reading)
	default:
		return fmt.Errorf("%w: migration: from or from_file names the old topology", ErrBadConfig)
	}
	if err != nil {
		field := "migration.from"
		if fm.FromFile != "" {
			field = "migration.from_file"
		}
		return badFieldf(field, "migration: %w", err)
	}
	addrs := fm.Addrs
	if len(addrs) == 0 {
		addrs = nil // "addrs: {}" says what no addrs says, as its YAML writes it back
	}
	cfg.Migration = &Migration{From: &from, Addrs: addrs}
	return nil
}

// applyMigrationURL sets cfg.Migration from a URL's from option.
func applyMigrationURL(cfg *Config, raw string) error {
	from, err := ParseURL(raw)
	if err != nil {
		return badConfigf("URL option from: %w", err)
	}
	cfg.Migration = &Migration{From: &from}
	return nil
}

// loopsBack reports whether path is one of the files reading, under any
// name (os.SameFile). A path that cannot be read is left for its reader
// to report.
func loopsBack(path string, reading []string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	for _, r := range reading {
		if ri, err := os.Stat(r); err == nil && os.SameFile(fi, ri) {
			return true
		}
	}
	return false
}
