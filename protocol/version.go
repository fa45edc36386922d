package protocol

// Protocol revisions mcpkit knows.
const (
	// Version2026_07_28 is the stateless ("modern") revision.
	Version2026_07_28 = "2026-07-28"
	// Version2025_11_25 is the last revision with the initialize handshake.
	Version2025_11_25 = "2025-11-25"
	// Version2025_06_18 is a legacy revision.
	Version2025_06_18 = "2025-06-18"
	// Version2025_03_26 is the first revision with Streamable HTTP.
	Version2025_03_26 = "2025-03-26"
	// Version2024_11_05 is the first revision, with the HTTP+SSE transport.
	Version2024_11_05 = "2024-11-05"

	// LatestVersion is the newest revision mcpkit implements.
	LatestVersion = Version2026_07_28
)

// ModernVersions lists the per-request-metadata revisions, newest first.
var ModernVersions = []string{Version2026_07_28}

// LegacyVersions lists the handshake revisions, newest first.
var LegacyVersions = []string{Version2025_11_25, Version2025_06_18, Version2025_03_26, Version2024_11_05}

// IsModern reports whether v is a revision that carries its version and
// capabilities in every request's _meta.
func IsModern(v string) bool {
	for _, m := range ModernVersions {
		if v == m {
			return true
		}
	}
	return false
}
