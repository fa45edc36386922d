package auth

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
)

// ErrInsecureStore reports a token file that users other than its owner
// may read or write; FileStore refuses to use it.
var ErrInsecureStore = errors.New("auth: the token file is accessible to other users")

// FileStore is a TokenStore in a JSON file, for commands whose tokens
// outlive a run. The file holds the secrets themselves (access and refresh
// tokens, client secrets), so:
//
//   - it is created with mode 0600 in a directory created with mode 0700,
//     and on Unix a file that group or others may access (any of the 0077
//     bits) is refused with ErrInsecureStore rather than read or rewritten,
//     as ssh does with private keys;
//   - it is replaced atomically (a temporary file in the same directory,
//     synced, then renamed over it), so that a reader never sees half of
//     it;
//   - changes are read-modify-write under an exclusive advisory lock
//     (flock on a ".lock" file next to it, on Unix), so that concurrent
//     processes do not lose each other's entries. Where flock is not
//     available (Windows) only the process's own changes are serialized:
//     two processes saving at once may lose one of the two updates, which
//     costs one more authorization, never a corrupt file.
//
// Nothing is written before the first save: loading from a missing file
// finds nothing.
type FileStore struct {
	path string
	mu   sync.Mutex
}

var _ TokenStore = (*FileStore)(nil)

// NewFileStore returns a FileStore at path.
func NewFileStore(path string) *FileStore { return &FileStore{path: path} }

// DefaultFileStorePath is where mcpkit keeps tokens:
// os.UserConfigDir()/mcpkit/auth.json.
func DefaultFileStorePath() (string, error) {
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "mcpkit", "auth.json"), nil
}

// Path returns the file's path.
func (f *FileStore) Path() string { return f.path }

// StoredToken is a token as a FileStore lists it.
type StoredToken struct {
	Key   Key
	Token Token
}

// fileVersion is the version of the file format.
const fileVersion = 1

// fileData is the file's content. Token and ClientInfo are stored with
// their Go field names.
type fileData struct {
	Version int          `json:"version"`
	Tokens  []fileToken  `json:"tokens,omitempty"`
	Clients []fileClient `json:"clients,omitempty"`
}

type fileToken struct {
	Issuer   string `json:"issuer"`
	Resource string `json:"resource"`
	Token    Token  `json:"token"`
}

type fileClient struct {
	Issuer string     `json:"issuer"`
	Client ClientInfo `json:"client"`
}

// read reads the file; a missing file is empty.
func (f *FileStore) read() (*fileData, error) {
	fh, err := os.Open(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return &fileData{Version: fileVersion}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("auth: token file: %w", err)
	}
	defer fh.Close()
	fi, err := fh.Stat()
	if err != nil {
		return nil, fmt.Errorf("auth: token file: %w", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, fmt.Errorf("auth: token file %s is not a regular file", f.path)
	}
	if runtime.GOOS != "windows" && fi.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("%w: %s has mode %04o; make it 0600 (chmod 600) or remove it", ErrInsecureStore, f.path, fi.Mode().Perm())
	}
	var d fileData
	// The decoder's errors name offsets and types, never values.
	if err := json.NewDecoder(fh).Decode(&d); err != nil {
		return nil, fmt.Errorf("auth: token file %s is not valid: %v", f.path, describeJSONError(err))
	}
	if d.Version != fileVersion {
		return nil, fmt.Errorf("auth: token file %s has version %d, this mcpkit reads %d", f.path, d.Version, fileVersion)
	}
	return &d, nil
}

// describeJSONError describes a decoding error without the text it was
// decoding.
func describeJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("syntax error at offset %d", se.Offset)
	case errors.As(err, &te):
		return fmt.Sprintf("wrong type for %s at offset %d", te.Field, te.Offset)
	}
	return "cannot decode"
}

// update runs change on the file's content under the lock and writes the
// result if change reports a change.
func (f *FileStore) update(change func(d *fileData) bool) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	dir := filepath.Dir(f.path)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return fmt.Errorf("auth: token file: %w", err)
	}
	unlock, err := lockFile(f.path + ".lock")
	if err != nil {
		return fmt.Errorf("auth: locking the token file: %w", err)
	}
	defer unlock()
	d, err := f.read()
	if err != nil {
		return err
	}
	if !change(d) {
		return nil
	}
	d.Version = fileVersion
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return fmt.Errorf("auth: token file: %w", err)
	}
	b = append(b, '\n')
	tmp, err := os.CreateTemp(dir, ".auth-*.tmp") // mode 0600
	if err != nil {
		return fmt.Errorf("auth: token file: %w", err)
	}
	defer os.Remove(tmp.Name()) // after the rename, there is nothing to remove
	if err := tmp.Chmod(0o600); err != nil && runtime.GOOS != "windows" {
		tmp.Close()
		return fmt.Errorf("auth: token file: %w", err)
	}
	if _, err := tmp.Write(b); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: writing the token file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("auth: writing the token file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("auth: writing the token file: %w", err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		return fmt.Errorf("auth: replacing the token file: %w", err)
	}
	return nil
}

// LoadToken implements TokenStore.
func (f *FileStore) LoadToken(_ context.Context, key Key) (*Token, error) {
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	for _, t := range d.Tokens {
		if t.Issuer == key.Issuer && t.Resource == key.Resource {
			tok := t.Token
			return &tok, nil
		}
	}
	return nil, nil
}

// SaveToken implements TokenStore; a nil token deletes.
func (f *FileStore) SaveToken(_ context.Context, key Key, tok *Token) error {
	return f.update(func(d *fileData) bool {
		i := slices.IndexFunc(d.Tokens, func(t fileToken) bool { return t.Issuer == key.Issuer && t.Resource == key.Resource })
		switch {
		case tok == nil && i < 0:
			return false
		case tok == nil:
			d.Tokens = slices.Delete(d.Tokens, i, i+1)
		case i < 0:
			d.Tokens = append(d.Tokens, fileToken{Issuer: key.Issuer, Resource: key.Resource, Token: *tok})
		default:
			d.Tokens[i].Token = *tok
		}
		return true
	})
}

// LoadClient implements TokenStore.
func (f *FileStore) LoadClient(_ context.Context, issuer string) (*ClientInfo, error) {
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	for _, c := range d.Clients {
		if c.Issuer == issuer {
			ci := c.Client
			return &ci, nil
		}
	}
	return nil, nil
}

// SaveClient implements TokenStore; a nil client deletes.
func (f *FileStore) SaveClient(_ context.Context, issuer string, c *ClientInfo) error {
	return f.update(func(d *fileData) bool {
		i := slices.IndexFunc(d.Clients, func(x fileClient) bool { return x.Issuer == issuer })
		switch {
		case c == nil && i < 0:
			return false
		case c == nil:
			d.Clients = slices.Delete(d.Clients, i, i+1)
		case i < 0:
			d.Clients = append(d.Clients, fileClient{Issuer: issuer, Client: *c})
		default:
			d.Clients[i].Client = *c
		}
		return true
	})
}

// Tokens lists the stored tokens, by resource then issuer.
func (f *FileStore) Tokens(context.Context) ([]StoredToken, error) {
	d, err := f.read()
	if err != nil {
		return nil, err
	}
	out := make([]StoredToken, 0, len(d.Tokens))
	for _, t := range d.Tokens {
		out = append(out, StoredToken{Key: Key{Issuer: t.Issuer, Resource: t.Resource}, Token: t.Token})
	}
	slices.SortFunc(out, func(a, b StoredToken) int {
		if c := strings.Compare(a.Key.Resource, b.Key.Resource); c != 0 {
			return c
		}
		return strings.Compare(a.Key.Issuer, b.Key.Issuer)
	})
	return out, nil
}

// DeleteTokens forgets the tokens whose key match accepts and returns
// their keys.
func (f *FileStore) DeleteTokens(_ context.Context, match func(Key) bool) ([]Key, error) {
	var deleted []Key
	err := f.update(func(d *fileData) bool {
		d.Tokens = slices.DeleteFunc(d.Tokens, func(t fileToken) bool {
			k := Key{Issuer: t.Issuer, Resource: t.Resource}
			if match(k) {
				deleted = append(deleted, k)
				return true
			}
			return false
		})
		return len(deleted) > 0
	})
	if err != nil {
		return nil, err
	}
	return deleted, nil
}

// DeleteClients forgets the client registrations of the issuers match
// accepts and returns those issuers.
func (f *FileStore) DeleteClients(_ context.Context, match func(issuer string) bool) ([]string, error) {
	var deleted []string
	err := f.update(func(d *fileData) bool {
		d.Clients = slices.DeleteFunc(d.Clients, func(c fileClient) bool {
			if match(c.Issuer) {
				deleted = append(deleted, c.Issuer)
				return true
			}
			return false
		})
		return len(deleted) > 0
	})
	if err != nil {
		return nil, err
	}
	return deleted, nil
}
