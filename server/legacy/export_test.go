package legacy

// QueueLen returns how many messages s holds for its standalone stream, so
// that tests can wait for the change feed without consuming the queue.
func QueueLen(s *Session) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.queue)
}

// LastQueued returns the newest message queued on s ("" for none).
func LastQueued(s *Session) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if len(s.queue) == 0 {
		return ""
	}
	return string(s.queue[len(s.queue)-1])
}
