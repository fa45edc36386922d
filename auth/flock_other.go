//go:build !unix

package auth

// lockFile is a no-op where flock is not available: FileStore then only
// serializes its own process's changes (see FileStore).
func lockFile(string) (unlock func(), err error) { return func() {}, nil }
