package auth

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"
)

func TestFileStore(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "mcpkit")
	path := filepath.Join(dir, "auth.json")
	s := NewFileStore(path)
	if tok, err := s.LoadToken(ctx, Key{"i", "r"}); tok != nil || err != nil {
		t.Fatalf("empty store: %v %v", tok, err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("loading created the file: %v", err)
	}
	exp := time.Date(2030, 1, 2, 3, 4, 5, 0, time.UTC)
	k1, k2 := Key{"https://as.example", "https://mcp.example/a"}, Key{"https://as.example", "https://mcp.example/b"}
	tok := &Token{AccessToken: "at", TokenType: "Bearer", RefreshToken: "rt", Expiry: exp, Scope: "read write"}
	if err := s.SaveToken(ctx, k1, tok); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveToken(ctx, k2, &Token{AccessToken: "at2"}); err != nil {
		t.Fatal(err)
	}
	ci := &ClientInfo{ClientID: "id", ClientSecret: "sec", AuthMethod: AuthMethodBasic}
	if err := s.SaveClient(ctx, "https://as.example", ci); err != nil {
		t.Fatal(err)
	}
	if runtime.GOOS != "windows" {
		for p, want := range map[string]os.FileMode{dir: 0o700, path: 0o600, path + ".lock": 0o600} {
			if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != want {
				t.Errorf("%s: mode %v (%v), want %04o", p, fi.Mode().Perm(), err, want)
			}
		}
	}
	// A new FileStore (another process) reads the same.
	s2 := NewFileStore(path)
	got, err := s2.LoadToken(ctx, k1)
	if err != nil || got == nil || *got != *tok {
		t.Fatalf("round trip: %+v %v", got, err)
	}
	gc, err := s2.LoadClient(ctx, "https://as.example")
	if err != nil || gc == nil || *gc != *ci {
		t.Fatalf("client round trip: %+v %v", gc, err)
	}
	list, err := s2.Tokens(ctx)
	if err != nil || len(list) != 2 || list[0].Key != k1 || list[1].Key != k2 {
		t.Fatalf("Tokens = %v %v", list, err)
	}
	deleted, err := s2.DeleteTokens(ctx, func(k Key) bool { return k == k2 })
	if err != nil || len(deleted) != 1 {
		t.Fatalf("DeleteTokens = %v %v", deleted, err)
	}
	if got, _ := s.LoadToken(ctx, k2); got != nil {
		t.Fatal("deleted token still there")
	}
	if err := s.SaveToken(ctx, k1, nil); err != nil {
		t.Fatal(err)
	}
	if got, _ := s.LoadToken(ctx, k1); got != nil {
		t.Fatal("nil SaveToken did not delete")
	}
	if gc, _ := s.LoadClient(ctx, "https://as.example"); gc == nil {
		t.Fatal("deleting tokens deleted the registration")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 { // auth.json and its lock, no temporary file left
		t.Fatalf("directory holds %v", entries)
	}
}

// TestFileStoreInsecure: a file that others may read is refused, for
// reading and for writing, without showing its content.
func TestFileStoreInsecure(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no Unix permissions")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "auth.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"tokens":[{"issuer":"i","resource":"r","token":{"AccessToken":"sekrit"}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o644); err != nil {
		t.Fatal(err)
	}
	s := NewFileStore(path)
	if _, err := s.LoadToken(ctx, Key{"i", "r"}); !errors.Is(err, ErrInsecureStore) {
		t.Fatalf("LoadToken: %v", err)
	}
	if err := s.SaveToken(ctx, Key{"i", "r2"}, &Token{AccessToken: "x"}); !errors.Is(err, ErrInsecureStore) {
		t.Fatalf("SaveToken: %v", err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if tok, err := s.LoadToken(ctx, Key{"i", "r"}); err != nil || tok == nil || tok.AccessToken != "sekrit" {
		t.Fatalf("after chmod: %v %v", tok, err)
	}
	// A damaged file is reported without its content.
	if err := os.WriteFile(path, []byte(`{"version":1,"tokens":"sekrit"}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.LoadToken(ctx, Key{"i", "r"}); err == nil || strings.Contains(err.Error(), "sekrit") {
		t.Fatalf("damaged file: %v", err)
	}
}

// TestFileStoreConcurrent: concurrent savers (separate FileStores, as
// separate processes would be) lose nothing.
func TestFileStoreConcurrent(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no flock")
	}
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "auth.json")
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := NewFileStore(path)
			for j := range 5 {
				if err := s.SaveToken(ctx, Key{"i", fmt.Sprintf("r%d-%d", i, j)}, &Token{AccessToken: "x"}); err != nil {
					t.Error(err)
				}
			}
		}()
	}
	wg.Wait()
	list, err := NewFileStore(path).Tokens(ctx)
	if err != nil || len(list) != 40 {
		t.Fatalf("%d tokens, %v", len(list), err)
	}
}
