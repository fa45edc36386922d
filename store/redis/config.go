package redis

import (
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/mcpkit/mcpkit/server"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// Share sets the pieces of o that replicas share to those kept in s: the
// change feed, the single-use states, the legacy sessions and the bus
// between replicas. o.StateKey must be the same on every replica too
// (ReadStateKey).
func (s *Store) Share(o *server.Options) {
	o.Feed = s.Feed()
	o.OnceStore = s.OnceStore()
	o.Legacy.Store = s.Sessions()
	o.Legacy.Bus = s.Bus()
}

// ShareStreams sets the event store of o to the one kept in s, so that a
// legacy SSE stream resumes on any replica.
func (s *Store) ShareStreams(o *streamable.Options) { o.Events = s.Events() }

// StateKeyEnv names the environment variable that may hold the state key,
// 64 hexadecimal digits, instead of a file.
const StateKeyEnv = "MCPKIT_STATE_KEY"

// ReadStateKey reads the 32-byte key that seals requestState
// (server.Options.StateKey), which replicas must share: from the file at
// path (64 hexadecimal digits, surrounding space ignored, or 32 raw bytes),
// or, when path is "", from $MCPKIT_STATE_KEY; nil when neither is set. A
// file that others may read is refused.
func ReadStateKey(path string) ([]byte, error) {
	var text string
	if path != "" {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		if fi.Mode().Perm()&0o077 != 0 {
			return nil, fmt.Errorf("state key file %s may be read by others (mode %v): chmod 600 it", path, fi.Mode().Perm())
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, err
		}
		if len(b) == 32 {
			return b, nil
		}
		text = string(b)
	} else if text = os.Getenv(StateKeyEnv); text == "" {
		return nil, nil
	}
	key, err := hex.DecodeString(strings.TrimSpace(text))
	if err != nil || len(key) != 32 {
		return nil, errors.New("the state key must be 32 bytes: 64 hexadecimal digits")
	}
	return key, nil
}
