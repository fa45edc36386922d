package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/mcpkit/mcpkit/ext/tasks"
	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/sqlserver"
	redisstore "github.com/mcpkit/mcpkit/store/redis"
)

// serveTasks are the flags of `mcpkit serve sql` for the Tasks extension
// (io.modelcontextprotocol/tasks): a query still running after --task-after
// becomes a task for the clients that declared the extension, kept in
// --task-store.
type serveTasks struct {
	after time.Duration
	store string
	ttl   time.Duration
}

// defaultTaskAfter is --task-after's default.
const defaultTaskAfter = 3 * time.Second

func (f *serveTasks) register(fs *flag.FlagSet) {
	fs.DurationVar(&f.after, "task-after", defaultTaskAfter, "a query still running after `DURATION` becomes a task (io.modelcontextprotocol/tasks) for clients that declared the extension; 0 turns tasks off")
	fs.StringVar(&f.store, "task-store", "", "keep task records in the SQLite file `PATH`, or \"memory\" (lost at exit); default: a file of the user cache directory (mcpkit/tasks/) named after the listen address and the databases; memory with --stdio or on port 0; with --store, the shared Redis")
	fs.DurationVar(&f.ttl, "task-ttl", time.Hour, "keep a task and its rows for `DURATION` from its creation; one still running then is cancelled")
}

// check validates the flags; the error is a usage error.
func (f *serveTasks) check(set map[string]bool) error {
	switch {
	case f.after < 0:
		return errors.New("--task-after must not be negative")
	case f.after == 0 && (set["task-store"] || set["task-ttl"]):
		return errors.New("--task-store and --task-ttl are for tasks, which --task-after 0 turns off")
	case set["task-store"] && set["store"]:
		return errors.New("--task-store is one server's; with --store the replicas keep their tasks in the shared Redis")
	case f.ttl < time.Second || f.ttl > 7*24*time.Hour:
		return errors.New("--task-ttl must be between 1s and 168h")
	}
	return nil
}

// taskStorePath is where the task records of a server are kept by default:
// a file of the user cache directory named after what identifies the
// server across restarts, its listen address and databases, so that two
// servers do not share one (a store is held by one process at a time).
func taskStorePath(addr string, served []sqlserver.Options) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory for the task store (%v): give --task-store", err)
	}
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00", addr)
	for _, o := range served {
		fmt.Fprintf(h, "%s\x00%s\x00%s\x00", o.Name, o.Path, o.DSN)
	}
	return filepath.Join(dir, "mcpkit", "tasks", hex.EncodeToString(h.Sum(nil)[:8])+".db"), nil
}

// open returns the extension with the query tool as a May tool, and
// sets base.Status so that a query's progress is the task's status
// message; nil when tasks are off. closeStore closes the store after the
// extension. With shared (--store), the tasks are kept in its Redis, for
// every replica.
func (f *serveTasks) open(addr string, useStdio bool, served []sqlserver.Options, maxResultBytes int, shared *redisstore.Store) (x *tasks.Extension, where string, closeStore func(), err error) {
	if f.after == 0 {
		return nil, "", func() {}, nil
	}
	// The query result holds its rows twice (text and structuredContent),
	// each within --max-result-bytes.
	maxTaskResult := 2*maxResultBytes + 1<<20
	path, byDefault := f.store, false
	if shared != nil {
		path = "redis"
	} else if _, port, _ := net.SplitHostPort(addr); path == "" && !useStdio && port != "0" {
		// A server on a port of its own: the same address and databases
		// after a restart find the tasks again. (On port 0 the address
		// changes at each start: tasks stay in memory.)
		if path, err = taskStorePath(addr, served); err != nil {
			return nil, "", nil, err
		}
		byDefault = true
	}
	var store tasks.Store
	closeStore = func() {}
	switch {
	case shared != nil:
		ts := shared.Tasks(&redisstore.TaskOptions{MaxRecordBytes: maxTaskResult + 1<<20})
		store, where, closeStore = ts, "in the shared Redis", func() { ts.Close() }
	case path == "" || path == "memory":
		store, where = tasks.NewMemoryStore(), "in memory"
	default:
		st, err := openTaskStore(path)
		switch {
		case err != nil && byDefault:
			// Held by another server (of the same address, not
			// listening yet): this one keeps its tasks in memory.
			store, where = tasks.NewMemoryStore(), fmt.Sprintf("in memory (the default task store is unavailable: %v)", err)
		case err != nil:
			return nil, "", nil, err
		default:
			store, where, closeStore = st, "in "+path, func() { st.Close() }
		}
	}
	x = tasks.New(&tasks.Options{
		Store: store, TTL: f.ttl, After: f.after,
		MaxResultBytes: maxTaskResult,
	})
	x.SetTool("query", tasks.Policy{Mode: tasks.May})
	return x, where, closeStore, nil
}

// openTaskStore opens the SQLite task store at path, creating its
// directory.
func openTaskStore(path string) (*tasks.SQLiteStore, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("task store: %w", err)
	}
	st, err := tasks.OpenSQLite(path, nil)
	if err != nil && strings.Contains(err.Error(), "locked") {
		err = fmt.Errorf("%w (another server holds it: give this one its own --task-store)", err)
	}
	return st, err
}

// installTasks adds the extension to s.
func installTasks(s *server.Server, x *tasks.Extension) error {
	if x == nil {
		return nil
	}
	return s.Install(x)
}
