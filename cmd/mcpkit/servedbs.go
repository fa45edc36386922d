package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/sqlserver"
)

// The databases of serve sql: --dsn, or --db (an SQLite file, or
// NAME=PATH and NAME=postgres://... repeated), or --config, a JSON file
// naming each database with its own limits:
//
//	{"databases": [
//	  {"name": "shop", "dsn": "postgres://...", "schemas": ["sales", "public"], "max_rows": 500},
//	  {"name": "notes", "path": "notes.db", "allow_writes": true}
//	]}

// dbConfig is one database of a --config file; unset limits are the
// command line's.
type dbConfig struct {
	Name             string   `json:"name"`
	DSN              string   `json:"dsn,omitempty"`
	Path             string   `json:"path,omitempty"`
	Schemas          []string `json:"schemas,omitempty"`
	AllowWrites      *bool    `json:"allow_writes,omitempty"`
	MaxRows          int      `json:"max_rows,omitempty"`
	MaxResultBytes   int      `json:"max_result_bytes,omitempty"`
	StatementTimeout string   `json:"statement_timeout,omitempty"`
	MaxConcurrent    int      `json:"max_concurrent,omitempty"`
	SampleRows       int      `json:"sample_rows,omitempty"`
}

// maxConfigBytes bounds a --config file.
const maxConfigBytes = 1 << 20

// maxDatabases bounds the databases one server serves.
const maxDatabases = 64

// databases returns the options of every database to serve, each on top
// of base (the command line's limits): from --config, the --db values or
// --dsn. Several need names.
func databases(base sqlserver.Options, dbs []string, dsn, config string) ([]sqlserver.Options, error) {
	switch {
	case config != "" && (len(dbs) > 0 || dsn != ""):
		return nil, errors.New("give --config, or --db / --dsn, not both")
	case len(dbs) > 0 && dsn != "":
		return nil, errors.New("give --db or --dsn, not both (--db NAME=postgres://... names a PostgreSQL database beside others)")
	case config != "":
		return readConfig(base, config)
	case dsn != "":
		o := base
		o.DSN = dsn
		return []sqlserver.Options{o}, nil
	case len(dbs) == 0:
		return []sqlserver.Options{base}, nil
	}
	if len(dbs) == 1 && !isNamed(dbs[0]) {
		o := base
		o.Path = dbs[0]
		return []sqlserver.Options{o}, nil
	}
	if len(dbs) > maxDatabases {
		return nil, fmt.Errorf("at most %d databases", maxDatabases)
	}
	var out []sqlserver.Options
	seen := map[string]bool{}
	for _, v := range dbs {
		if !isNamed(v) {
			return nil, fmt.Errorf("--db %q: with several databases each needs a name, --db NAME=PATH or --db NAME=postgres://...", v)
		}
		name, target, _ := strings.Cut(v, "=")
		if seen[name] {
			return nil, fmt.Errorf("--db: two databases named %q", name)
		}
		seen[name] = true
		o := base
		o.Name = name
		if isDSN(target) {
			o.DSN = target
		} else {
			o.Path = target
		}
		out = append(out, o)
	}
	return out, nil
}

// isNamed reports whether a --db value is NAME=...: a valid name before
// the first '='.
func isNamed(v string) bool {
	name, _, ok := strings.Cut(v, "=")
	return ok && sqlserver.ValidName(name)
}

func isDSN(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

func readConfig(base sqlserver.Options, path string) ([]sqlserver.Options, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxConfigBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxConfigBytes {
		return nil, fmt.Errorf("%s: larger than %d bytes", path, maxConfigBytes)
	}
	var cfg struct {
		Databases []dbConfig `json:"databases"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&cfg); err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	if len(cfg.Databases) == 0 || len(cfg.Databases) > maxDatabases {
		return nil, fmt.Errorf("%s: want 1 to %d databases, got %d", path, maxDatabases, len(cfg.Databases))
	}
	var out []sqlserver.Options
	seen := map[string]bool{}
	for i, c := range cfg.Databases {
		at := fmt.Sprintf("%s: databases[%d]", path, i)
		if len(cfg.Databases) > 1 && !sqlserver.ValidName(c.Name) {
			return nil, fmt.Errorf("%s: name %q is not a name (a letter, then letters, digits, _ or -)", at, c.Name)
		}
		if seen[c.Name] {
			return nil, fmt.Errorf("%s: two databases named %q", at, c.Name)
		}
		seen[c.Name] = true
		if (c.DSN == "") == (c.Path == "") {
			return nil, fmt.Errorf("%s (%s): give dsn or path", at, c.Name)
		}
		o := base
		o.Name, o.DSN, o.Path = c.Name, c.DSN, c.Path
		if len(c.Schemas) > 0 {
			o.Schemas = c.Schemas
		}
		if c.AllowWrites != nil {
			o.AllowWrites = *c.AllowWrites
		}
		if c.MaxRows < 0 || c.MaxResultBytes < 0 || c.MaxConcurrent < 0 || c.SampleRows < 0 {
			return nil, fmt.Errorf("%s (%s): limits must not be negative", at, c.Name)
		}
		o.MaxRows = pick(c.MaxRows, o.MaxRows)
		o.MaxResultBytes = pick(c.MaxResultBytes, o.MaxResultBytes)
		o.MaxConcurrent = pick(c.MaxConcurrent, o.MaxConcurrent)
		o.SampleRows = pick(c.SampleRows, o.SampleRows)
		if c.StatementTimeout != "" {
			d, err := time.ParseDuration(c.StatementTimeout)
			if err != nil || d <= 0 {
				return nil, fmt.Errorf("%s (%s): statement_timeout %q is not a positive duration such as 10s", at, c.Name, c.StatementTimeout)
			}
			o.StatementTimeout = d
		}
		out = append(out, o)
	}
	return out, nil
}

func pick(v, dflt int) int {
	if v > 0 {
		return v
	}
	return dflt
}

// roleMap parses the --role values, CLAIM-VALUE=ROLE.
func roleMap(values []string) (map[string]string, error) {
	if len(values) == 0 {
		return nil, nil
	}
	out := map[string]string{}
	for _, v := range values {
		claim, role, ok := strings.Cut(v, "=")
		if !ok || claim == "" || role == "" {
			return nil, fmt.Errorf("--role %q: want CLAIM-VALUE=ROLE (\"*\" for every other value)", v)
		}
		out[claim] = role
	}
	return out, nil
}

// describeDBs names what serve sql serves, for its first line.
func describeDBs(opts []sqlserver.Options) string {
	if len(opts) == 1 {
		return describeDB(opts[0].Path, opts[0].DSN)
	}
	parts := make([]string, len(opts))
	for i, o := range opts {
		parts[i] = o.Name + " (" + describeDB(o.Path, o.DSN) + ")"
	}
	return strings.Join(parts, ", ")
}
