//go:build !linux

package streamable

import "net"

// hangupWatcher is not available here: a taken-over stream's departed
// client is noticed when a write to it fails (the next keep-alive comment
// at the latest).
type hangupWatcher struct{}

func (w *hangupWatcher) watch(conn net.Conn, gone func()) (unwatch func()) { return func() {} }
