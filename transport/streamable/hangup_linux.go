//go:build linux

package streamable

import (
	"net"
	"sync"
	"syscall"
)

// hangupWatcher notices, without a goroutine per connection, that the
// client of a taken-over stream closed its connection (or sent something,
// which a listen client does not): while any connection is watched, one
// goroutine waits on an epoll set of their sockets.
type hangupWatcher struct {
	mu      sync.Mutex
	epfd    int
	wake    [2]int // a pipe in the epoll set (id 0): the watcher's wake-up
	running bool
	nextID  int32
	watched map[int32]watchedConn
}

type watchedConn struct {
	raw  syscall.RawConn
	gone func()
}

// watch calls gone, once, when the client of conn hangs up. The returned
// function stops watching; call it before closing conn.
func (w *hangupWatcher) watch(conn net.Conn, gone func()) (unwatch func()) {
	sc, ok := conn.(syscall.Conn)
	if !ok {
		return func() {}
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return func() {}
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.running && !w.start() {
		return func() {}
	}
	w.nextID++
	id := w.nextID
	epfd := w.epfd
	var cerr error
	err = raw.Control(func(fd uintptr) {
		// One-shot: a connection is reported once.
		ev := syscall.EpollEvent{Events: syscall.EPOLLIN | syscall.EPOLLRDHUP | epollOneShot, Fd: id}
		cerr = syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, int(fd), &ev)
	})
	if err != nil || cerr != nil {
		return func() {}
	}
	w.watched[id] = watchedConn{raw: raw, gone: gone}
	return func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		if _, ok := w.watched[id]; !ok {
			return
		}
		delete(w.watched, id)
		if w.running && w.epfd == epfd {
			_ = raw.Control(func(fd uintptr) {
				_ = syscall.EpollCtl(epfd, syscall.EPOLL_CTL_DEL, int(fd), nil)
			})
			if len(w.watched) == 0 {
				// Nothing left to watch: let the watcher end now.
				_, _ = syscall.Write(w.wake[1], []byte{0})
			}
		}
	}
}

// start creates the epoll set and its wake-up pipe and starts the
// watcher. w.mu is held.
func (w *hangupWatcher) start() bool {
	epfd, err := syscall.EpollCreate1(syscall.EPOLL_CLOEXEC)
	if err != nil {
		return false
	}
	var p [2]int
	if err := syscall.Pipe2(p[:], syscall.O_CLOEXEC|syscall.O_NONBLOCK); err != nil {
		syscall.Close(epfd)
		return false
	}
	ev := syscall.EpollEvent{Events: syscall.EPOLLIN, Fd: 0}
	if err := syscall.EpollCtl(epfd, syscall.EPOLL_CTL_ADD, p[0], &ev); err != nil {
		syscall.Close(epfd)
		syscall.Close(p[0])
		syscall.Close(p[1])
		return false
	}
	w.epfd, w.wake, w.running = epfd, p, true
	w.watched = make(map[int32]watchedConn)
	go w.run(epfd, p)
	return true
}

// epollOneShot is EPOLLONESHOT (1 << 30), which package syscall does not
// name on every architecture.
const epollOneShot = 1 << 30

// run reports hang-ups until nothing is watched.
func (w *hangupWatcher) run(epfd int, wake [2]int) {
	events := make([]syscall.EpollEvent, 64)
	var drain [64]byte
	for {
		n, err := syscall.EpollWait(epfd, events, 10000)
		failed := err != nil && err != syscall.EINTR
		if err != nil {
			n = 0
		}
		w.mu.Lock()
		var gone []func()
		for _, ev := range events[:max(n, 0)] {
			if ev.Fd == 0 {
				_, _ = syscall.Read(wake[0], drain[:])
				continue
			}
			if c, ok := w.watched[ev.Fd]; ok {
				delete(w.watched, ev.Fd)
				gone = append(gone, c.gone)
			}
		}
		// On a failure the streams left fall back on their keep-alive
		// comments to notice their clients leaving.
		stop := len(w.watched) == 0 || failed
		if stop {
			w.running = false
			syscall.Close(epfd)
			syscall.Close(wake[0])
			syscall.Close(wake[1])
		}
		w.mu.Unlock()
		for _, f := range gone {
			f()
		}
		if stop {
			return
		}
	}
}
