package redis_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpkit/mcpkit/store/redis"
)

// TestReadStateKeys: the first key seals, the others only open; files
// others may read, malformed keys and too many keys are refused.
func TestReadStateKeys(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string, mode os.FileMode) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), mode); err != nil {
			t.Fatal(err)
		}
		return p
	}
	a, b := strings.Repeat("aa", 32), strings.Repeat("bb", 32)
	key, prev, err := redis.ReadStateKeys(write("ring", a+"\n"+b+"\n", 0o600))
	if err != nil || !bytes.Equal(key, bytes.Repeat([]byte{0xaa}, 32)) || len(prev) != 1 || !bytes.Equal(prev[0], bytes.Repeat([]byte{0xbb}, 32)) {
		t.Fatalf("ring: %x %x %v", key, prev, err)
	}
	for name, tc := range map[string]struct {
		text string
		mode os.FileMode
	}{
		"open":     {a, 0o644},
		"short":    {"abcd", 0o600},
		"empty":    {"\n", 0o600},
		"too many": {strings.Repeat(a+"\n", 6), 0o600},
	} {
		if _, _, err := redis.ReadStateKeys(write(name, tc.text, tc.mode)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	t.Setenv(redis.StateKeyEnv, b+","+a)
	if key, prev, err := redis.ReadStateKeys(""); err != nil || key[0] != 0xbb || len(prev) != 1 {
		t.Errorf("from the environment: %x %x %v", key, prev, err)
	}
	t.Setenv(redis.StateKeyEnv, "")
	if key, _, err := redis.ReadStateKeys(""); key != nil || err != nil {
		t.Errorf("nothing set: %x %v", key, err)
	}
}
