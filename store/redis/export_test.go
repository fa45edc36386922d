package redis

// StopRenewing ends the renewal of t's lease and leaves the lease to
// lapse, as a killed replica does.
func StopRenewing(t *Tasks) { t.stopRenewing() }
