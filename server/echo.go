package server

import (
	"strconv"
	"unicode/utf8"
)

// maxEcho bounds how many bytes of a client's input an error message
// repeats.
const maxEcho = 128

// echo returns s quoted for an error message, cut to maxEcho bytes (on a
// character boundary, the cut marked with an ellipsis).
func echo(s string) string {
	if len(s) <= maxEcho {
		return strconv.Quote(s)
	}
	return strconv.Quote(s[:cutAt(s)]) + "…"
}

// clip returns s cut to maxEcho bytes as echo does, unquoted.
func clip(s string) string {
	if len(s) <= maxEcho {
		return s
	}
	return s[:cutAt(s)] + "…"
}

func cutAt(s string) int {
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return cut
}
