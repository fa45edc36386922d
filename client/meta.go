package client

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/mcpkit/mcpkit/jsonrpc"
	"github.com/mcpkit/mcpkit/protocol"
)

// ErrReservedMeta is returned for a CallOptions.Meta (or Call.Meta) key
// that the client sets itself.
var ErrReservedMeta = errors.New("client: _meta key reserved for the client")

// ErrInvalidMeta is returned for a CallOptions.Meta (or Call.Meta) member
// whose key is not a valid _meta key name or whose value is not JSON.
var ErrInvalidMeta = errors.New("client: invalid _meta member")

// reservedMeta are the _meta keys the client sets itself.
var reservedMeta = map[string]bool{
	protocol.MetaProgressToken: true, protocol.MetaProtocolVersion: true, protocol.MetaClientInfo: true,
	protocol.MetaClientCapabilities: true, protocol.MetaLogLevel: true,
}

// checkMeta refuses the members of extra the client must not send.
func checkMeta(extra map[string]json.RawMessage) error {
	for k := range extra {
		if reservedMeta[k] {
			return fmt.Errorf("%w: %q", ErrReservedMeta, k)
		}
		if !validMetaKey(k) {
			return fmt.Errorf("%w: %q is not a _meta key name", ErrInvalidMeta, k)
		}
	}
	return nil
}

// validMetaKey reports whether k is a valid _meta key: an optional prefix
// of dot-separated labels (each starting with a letter, ending with a
// letter or digit, with letters, digits and hyphens between) followed by a
// slash, then a name that, unless empty, begins and ends with a letter or
// digit and has letters, digits, hyphens, underscores and dots between.
func validMetaKey(k string) bool {
	name := k
	if i := strings.LastIndexByte(k, '/'); i >= 0 {
		prefix := k[:i]
		name = k[i+1:]
		if prefix == "" {
			return false
		}
		for label := range strings.SplitSeq(prefix, ".") {
			if label == "" || !isLetter(label[0]) || !isAlnum(label[len(label)-1]) {
				return false
			}
			for j := 1; j < len(label)-1; j++ {
				if !isAlnum(label[j]) && label[j] != '-' {
					return false
				}
			}
		}
	}
	if name == "" {
		return true
	}
	if !isAlnum(name[0]) || !isAlnum(name[len(name)-1]) {
		return false
	}
	for j := 1; j < len(name)-1; j++ {
		if c := name[j]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

func isLetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
func isAlnum(c byte) bool  { return isLetter(c) || c >= '0' && c <= '9' }

// withMeta returns params (an object or nil) with the request's _meta: in
// the modern era the per-request protocol fields, in both the progress
// token when one is wanted.
func (s *Session) withMeta(params json.RawMessage, progress *jsonrpc.ID) json.RawMessage {
	out, _ := s.withMetaExtra(params, progress, nil)
	return out
}

// withMetaExtra is withMeta with the members of extra (checked with
// checkMeta) after the client's own, in key order; it fails for a value
// that is not JSON.
func (s *Session) withMetaExtra(params json.RawMessage, progress *jsonrpc.ID, extra map[string]json.RawMessage) (json.RawMessage, error) {
	meta := []byte{'{'}
	add := func(k string, v []byte) {
		if len(meta) > 1 {
			meta = append(meta, ',')
		}
		kb, _ := json.Marshal(k)
		meta = append(append(append(meta, kb...), ':'), v...)
	}
	if progress != nil {
		add(protocol.MetaProgressToken, progress.Raw())
	}
	if s.era == EraModern {
		v, _ := json.Marshal(s.version)
		add(protocol.MetaProtocolVersion, v)
		caps, _ := json.Marshal(s.c.Capabilities())
		add(protocol.MetaClientCapabilities, caps)
		info, _ := json.Marshal(s.c.info)
		add(protocol.MetaClientInfo, info)
		if s.c.opts.LogLevel != "" {
			l, _ := json.Marshal(s.c.opts.LogLevel)
			add(protocol.MetaLogLevel, l)
		}
	}
	if len(extra) > 0 {
		for _, k := range slices.Sorted(maps.Keys(extra)) {
			add(k, nil)
			buf := bytes.NewBuffer(meta)
			if err := json.Compact(buf, extra[k]); err != nil {
				return nil, fmt.Errorf("%w: the value of %q is not JSON", ErrInvalidMeta, k)
			}
			meta = buf.Bytes()
		}
	}
	if len(meta) == 1 {
		if len(params) == 0 {
			return json.RawMessage("{}"), nil
		}
		return params, nil
	}
	meta = append(meta, '}')
	out := []byte{'{'}
	if len(params) > 2 {
		out = append(out, params[1:len(params)-1]...)
		out = append(out, ',')
	}
	out = append(out, `"_meta":`...)
	out = append(out, meta...)
	return append(out, '}'), nil
}
