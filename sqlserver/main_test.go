package sqlserver

import (
	"os"
	"testing"
)

// TestMain turns SQLite's memory accounting on before any test opens a
// connection, as Open does in a program that has not used SQLite before,
// so that the heap limit applies in the tests too.
func TestMain(m *testing.M) {
	enableMemstatus()
	os.Exit(m.Run())
}
