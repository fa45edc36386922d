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
	cut := maxEcho
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return strconv.Quote(s[:cut]) + "…"
}
