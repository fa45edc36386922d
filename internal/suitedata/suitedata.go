// Package suitedata finds the official test suites the tests read as data
// (JSON-Schema-Test-Suite, JSONTestSuite, uritemplate-test). They are not
// part of the module: they sit in ../shared/testdata/ next to the project
// root, or wherever MCPKIT_TESTDATA names.
package suitedata

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the directory of the suite sub (a path below the testdata
// root). When it is missing the test is skipped with a message saying
// where it was looked for, or fails when CI=true: CI always has the data.
func Dir(t testing.TB, sub string) string {
	t.Helper()
	root := os.Getenv("MCPKIT_TESTDATA")
	if root == "" {
		if dir := projectRoot(); dir != "" {
			root = filepath.Join(dir, "..", "shared", "testdata")
		}
	}
	path := filepath.Join(root, sub)
	if _, err := os.Stat(path); root == "" || err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("test suite data missing at %s (set MCPKIT_TESTDATA to the testdata folder)", path)
		}
		t.Skipf("test suite data not found at %s: put it in ../shared/testdata next to the project root, or set MCPKIT_TESTDATA", path)
	}
	return path
}

// projectRoot is the nearest directory above the working directory that
// holds go.mod, or "".
func projectRoot() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}
