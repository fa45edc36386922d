package main

import (
	"errors"
	"flag"
	"fmt"
)

// serveLimits are the flags of `mcpkit serve sql` that bound what callers
// can hold: streams per principal, and the bytes of the HTTP+SSE messages
// not yet answered. Zero leaves a limit at its library default.
type serveLimits struct {
	sseStreams    int      // sse.Options.MaxStreamsPerPrincipal
	listenStreams int      // server.Options.MaxListenStreamsPerPrincipal
	sseBuffered   byteSize // sse.Options.MaxBufferedBytes
}

// defaultSSEBuffered is sse.Options.MaxBufferedBytes' default, shown in the
// help.
const defaultSSEBuffered = 256 << 20

func (l *serveLimits) register(fs *flag.FlagSet) {
	l.sseBuffered = defaultSSEBuffered
	fs.IntVar(&l.sseStreams, "max-sse-streams-per-principal", 0, "let one caller have at most `N` HTTP+SSE streams open; 0 means 10 for each authenticated caller (a hundredth of the 1,000 there may be), while callers without authentication, which nothing tells apart, share them all")
	fs.IntVar(&l.listenStreams, "max-listen-streams-per-principal", 0, "let one caller have at most `N` subscriptions/listen streams open; 0 means 100 for each authenticated caller (a hundredth of the 10,000), while callers without authentication share them all")
	fs.Var(&l.sseBuffered, "max-sse-buffered", "hold at most `SIZE` of HTTP+SSE messages not yet answered and their responses not yet sent, all streams together (16 MiB a stream); POSTs beyond it are refused with 503")
}

// check validates the flags; the error is a usage error.
func (l *serveLimits) check(useStdio bool, ssePath string, set map[string]bool) error {
	if l.sseStreams < 0 || l.listenStreams < 0 {
		return errors.New("--max-sse-streams-per-principal and --max-listen-streams-per-principal must not be negative")
	}
	for _, name := range []string{"max-sse-streams-per-principal", "max-sse-buffered"} {
		switch {
		case set[name] && useStdio:
			return fmt.Errorf("--%s is for HTTP; --stdio serves the process that started it", name)
		case set[name] && ssePath == "":
			return fmt.Errorf("--%s is for the HTTP+SSE endpoint, which --sse-path \"\" turns off", name)
		}
	}
	return nil
}
