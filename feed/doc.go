// Package feed carries change events (list changes, resource updates) from
// the servers that make them to the streams that announce them:
// subscriptions/listen streams, legacy sessions' standalone streams. The
// in-memory MemoryFeed serves one process; replicas share changes through
// a Feed implemented over their broker.
package feed
