package main

import (
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// target is the server a subcommand speaks to: a Streamable HTTP endpoint
// or a command to start and speak to over stdio.
type target struct {
	URL  string   // http:// or https://
	Argv []string // the server's command line
}

func (t target) String() string {
	if t.URL != "" {
		return t.URL
	}
	return strings.Join(t.Argv, " ")
}

// splitCommand splits args at the first "--": what comes before belongs to
// the subcommand, what comes after is the stdio server's command line
// (nil when there is no "--").
func splitCommand(args []string) (own, argv []string, hasCommand bool) {
	for i, a := range args {
		if a == "--" {
			return args[:i], args[i+1:], true
		}
	}
	return args, nil, false
}

// parseTarget finds the target: the command after "--" if there was one,
// else the first positional argument, which must be an HTTP(S) URL. It
// returns the remaining positional arguments.
func parseTarget(positional, argv []string, hasCommand bool) (target, []string, error) {
	if hasCommand {
		if len(argv) == 0 || argv[0] == "" {
			return target{}, nil, errors.New(`missing the server command after "--"`)
		}
		return target{Argv: argv}, positional, nil
	}
	if len(positional) == 0 {
		return target{}, nil, errors.New(`missing TARGET (an http:// or https:// URL, or "-- command args...")`)
	}
	raw := positional[0]
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return target{}, nil, fmt.Errorf(`TARGET %q is not an http:// or https:// URL (to start a server, put its command after "--")`, raw)
	}
	return target{URL: raw}, positional[1:], nil
}
