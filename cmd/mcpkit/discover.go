package main

import (
	"context"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/mcpkit/mcpkit/client"
	"github.com/mcpkit/mcpkit/protocol"
	"github.com/mcpkit/mcpkit/transport/streamable"
)

// discovery is what discover reports, in both eras.
type discovery struct {
	ServerInfo        protocol.Implementation `json:"serverInfo"`
	Era               string                  `json:"era"`
	Transport         string                  `json:"transport"`
	ProtocolVersion   string                  `json:"protocolVersion"`
	SupportedVersions []string                `json:"supportedVersions,omitempty"`
	// HandshakeVersions are the revisions of the initialize handshake an
	// HTTP server speaks too, found by trying each (modern era).
	HandshakeVersions []string                    `json:"handshakeVersions,omitempty"`
	Capabilities      protocol.ServerCapabilities `json:"capabilities"`
	Instructions      string                      `json:"instructions,omitempty"`
	// TTLMs and CacheScope are server/discover's cache hints (modern era).
	TTLMs      *int64              `json:"ttlMs,omitempty"`
	CacheScope protocol.CacheScope `json:"cacheScope,omitempty"`
}

func runDiscover(ctx context.Context, e *env, args []string) int {
	s := newSub(ctx, e, "discover", `Connect to the server and show what it says about itself: its name and
version, the protocol era, revision and transport spoken (found from the
URL or command alone), the revisions it supports (a modern HTTP server's
handshake revisions too, tried one by one), its capabilities and
extensions, its instructions and (modern era) the cache hints of
server/discover.`, "[flags] TARGET", "[flags] -- command args...")
	rest, code, done := s.parse(args, true)
	if done {
		return code
	}
	if len(rest) > 0 {
		return s.usageError(fmt.Sprintf("unexpected argument %q", rest[0]))
	}
	sess, octx, closeAll, code := s.open(s.clientOptions())
	if sess == nil {
		return code
	}
	defer closeAll()
	d := &discovery{
		ServerInfo:        sess.ServerInfo(),
		Era:               sess.Era().String(),
		Transport:         sess.Transport(),
		ProtocolVersion:   sess.ProtocolVersion(),
		SupportedVersions: sess.SupportedVersions(),
		Capabilities:      sess.ServerCapabilities(),
		Instructions:      sess.Instructions(),
	}
	if sess.Era() == client.EraModern {
		r, err := sess.Discover(octx)
		if err != nil {
			return s.fail(err, false)
		}
		ttl := r.TTLMs
		d.TTLMs, d.CacheScope = &ttl, r.CacheScope
		if s.target.URL != "" {
			d.HandshakeVersions = s.handshakeVersions(octx)
		}
	}
	if s.c.json {
		if err := writeJSON(e.Stdout, d); err != nil {
			return s.fail(err, false)
		}
		return exitOK
	}
	writeDiscovery(e.Stdout, d)
	return exitOK
}

func writeDiscovery(w io.Writer, d *discovery) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) {
		if v == "" {
			v = "-"
		}
		fmt.Fprintf(tw, "%s:\t%s\n", k, v)
	}
	name := strings.TrimSpace(d.ServerInfo.Name + " " + d.ServerInfo.Version)
	if d.ServerInfo.Title != "" {
		name += " (" + d.ServerInfo.Title + ")"
	}
	row("Server", name)
	row("Era", d.Era)
	row("Transport", d.Transport)
	row("Protocol", d.ProtocolVersion)
	supported := strings.Join(d.SupportedVersions, ", ")
	if len(d.HandshakeVersions) > 0 {
		supported += "; with initialize: " + strings.Join(d.HandshakeVersions, ", ")
	}
	row("Supported", supported)
	row("Capabilities", strings.Join(capabilityList(d.Capabilities), ", "))
	row("Extensions", strings.Join(sortedNames(d.Capabilities.Extensions), ", "))
	if d.TTLMs != nil {
		row("Cache", fmt.Sprintf("ttl %s, scope %s", time.Duration(*d.TTLMs)*time.Millisecond, orDash(string(d.CacheScope))))
	}
	tw.Flush()
	if d.Instructions != "" {
		fmt.Fprintf(w, "\nInstructions:\n%s\n", strings.TrimRight(d.Instructions, "\n"))
	}
}

// handshakeVersions tries the initialize handshake in each revision the
// client speaks and returns those the server agreed to.
func (s *sub) handshakeVersions(ctx context.Context) []string {
	var out []string
	for _, v := range protocol.LegacyVersions {
		cl := client.New(protocol.Implementation{Name: "mcpkit", Version: version()}, &client.Options{Era: client.EraLegacy, ProtocolVersion: v})
		sess, err := cl.ConnectURL(ctx, s.target.URL, &streamable.ClientOptions{Header: s.c.headers.h, HTTPClient: s.httpClient()})
		if err != nil {
			continue
		}
		if sess.ProtocolVersion() == v {
			out = append(out, v)
		}
		sess.Close()
	}
	return out
}

// capabilityList names the capabilities with their options.
func capabilityList(c protocol.ServerCapabilities) []string {
	var out []string
	withOpts := func(name string, opts ...string) string {
		var set []string
		for i := 0; i+1 < len(opts); i += 2 {
			if opts[i+1] == "y" {
				set = append(set, opts[i])
			}
		}
		if len(set) == 0 {
			return name
		}
		return name + " (" + strings.Join(set, ", ") + ")"
	}
	yes := func(b bool) string {
		if b {
			return "y"
		}
		return ""
	}
	if c.Completions != nil {
		out = append(out, "completions")
	}
	if c.Logging != nil {
		out = append(out, "logging")
	}
	if c.Prompts != nil {
		out = append(out, withOpts("prompts", "listChanged", yes(c.Prompts.ListChanged)))
	}
	if c.Resources != nil {
		out = append(out, withOpts("resources", "subscribe", yes(c.Resources.Subscribe), "listChanged", yes(c.Resources.ListChanged)))
	}
	if c.Tools != nil {
		out = append(out, withOpts("tools", "listChanged", yes(c.Tools.ListChanged)))
	}
	if len(c.Experimental) > 0 {
		out = append(out, "experimental ("+strings.Join(sortedNames(c.Experimental), ", ")+")")
	}
	return out
}

func sortedNames[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
