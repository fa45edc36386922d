package schema

import (
	"errors"
	"fmt"
	"net/url"
	"strconv"
	"strings"
)

// uriKey returns u without its fragment, the key under which a schema
// resource is registered.
func uriKey(u *url.URL) string {
	if u.Fragment == "" && u.RawFragment == "" {
		return u.String()
	}
	v := *u
	v.Fragment, v.RawFragment = "", ""
	return v.String()
}

// link resolves every pending "$ref" and "$dynamicRef". Targets that were not
// compiled as part of the normal walk (for example a pointer into an unknown
// keyword, or a document supplied by the Loader) are compiled on demand,
// which may queue further references. Linking after compilation is what
// lets recursive references work.
func (c *compiler) link() error {
	for len(c.pending) > 0 {
		pr := c.pending[len(c.pending)-1]
		c.pending = c.pending[:len(c.pending)-1]
		target, dynName, err := c.resolve(pr)
		if err != nil {
			kw := "$ref"
			if pr.dynamic {
				kw = "$dynamicRef"
			}
			return fmt.Errorf("schema: at %q: %s %q: %w", where(pr.s.loc), kw, pr.ref, err)
		}
		if pr.dynamic {
			pr.s.dynRef, pr.s.dynName = target, dynName
			if dynName != "" {
				c.dynamic = true
			}
		} else {
			pr.s.ref = target
		}
	}
	return nil
}

// errExternal explains why a reference outside the document is rejected.
var errExternal = fmt.Errorf("external reference is unresolved (only references within the document are supported; remote schemas are never fetched)")

// resolve finds the schema a reference initially resolves to. For a
// "$dynamicRef" whose target was declared with a "$dynamicAnchor" of the
// fragment's name, it also returns that name: such a reference starts from
// the dynamic scope at validation time.
func (c *compiler) resolve(pr pendingRef) (*schema, string, error) {
	u, err := pr.base.Parse(pr.ref)
	if err != nil {
		return nil, "", fmt.Errorf("invalid reference: %v", err)
	}
	key := uriKey(u)
	res, ok := c.resources[key]
	if !ok {
		if c.opts.Loader != nil && uriKey(pr.base) == defaultBase && !isAbsolute(pr.ref) {
			return nil, "", errors.New("relative reference without a base URI (the document has no absolute $id)")
		}
		if res, err = c.load(key); err != nil {
			return nil, "", err
		}
	}
	frag := u.Fragment
	if frag != "" && frag[0] != '/' {
		s, ok := res.anchors[frag]
		if !ok {
			return nil, "", fmt.Errorf("anchor %q not found", frag)
		}
		if pr.dynamic && res.dynAnchors[frag] == s {
			return s, frag, nil
		}
		return s, "", nil
	}
	loc := res.loc
	if frag != "" {
		for _, tok := range strings.Split(frag[1:], "/") {
			loc += "/" + escapeToken(unescapeToken(tok))
		}
	}
	if s, ok := c.byLoc[loc]; ok {
		return s, "", nil
	}
	node, ok := c.lookup(loc)
	if !ok {
		return nil, "", fmt.Errorf("no value at JSON pointer %q", where(loc))
	}
	resBase, err := url.Parse(res.uri)
	if err != nil {
		return nil, "", err
	}
	s, err := c.compile(node, loc, resBase)
	return s, "", err
}

// isAbsolute reports whether a reference is an absolute URI (has a scheme).
func isAbsolute(ref string) bool {
	u, err := url.Parse(ref)
	return err == nil && u.IsAbs()
}

// load compiles the document at uri obtained from the Loader.
func (c *compiler) load(uri string) (*resource, error) {
	if c.opts.Loader == nil {
		return nil, errExternal
	}
	data, err := c.opts.Loader(uri)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", uri, err)
	}
	root, err := decodeJSON(data)
	if err != nil {
		return nil, fmt.Errorf("loading %s: invalid JSON: %w", uri, err)
	}
	draft7, err := dialectOf(root)
	if err != nil {
		return nil, fmt.Errorf("loading %s: %w", uri, err)
	}
	c.docs[uri] = &document{root: root, draft7: draft7}
	base, err := url.Parse(uri)
	if err != nil {
		return nil, err
	}
	loc := uri + "#"
	c.resources[uri] = &resource{uri: uri, loc: loc}
	s, err := c.compile(root, loc, base)
	if err != nil {
		return nil, err
	}
	if s.res == nil { // a boolean document
		return c.resources[uri], nil
	}
	// The retrieval URI names the same resource as the root's own "$id".
	c.resources[uri] = s.res
	return s.res, nil
}

// lookup finds the raw document value at a location.
func (c *compiler) lookup(loc string) (any, bool) {
	docKey, ptr := splitLoc(loc)
	d, ok := c.docs[docKey]
	if !ok {
		return nil, false
	}
	node := d.root
	if ptr == "" {
		return node, true
	}
	for _, tok := range strings.Split(ptr[1:], "/") {
		tok = unescapeToken(tok)
		switch n := node.(type) {
		case map[string]any:
			v, ok := n[tok]
			if !ok {
				return nil, false
			}
			node = v
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(n) || (len(tok) > 1 && tok[0] == '0') {
				return nil, false
			}
			node = n[i]
		default:
			return nil, false
		}
	}
	return node, true
}

// inPlace lists the subschemas that apply to the same instance location as s.
func (s *schema) inPlace(yield func(*schema) bool) {
	one := func(x *schema) bool { return x == nil || yield(x) }
	if !one(s.ref) || !one(s.dynRef) || !one(s.not) || !one(s.ifS) || !one(s.thenS) || !one(s.elseS) {
		return
	}
	for _, list := range [][]*schema{s.allOf, s.anyOf, s.oneOf} {
		for _, x := range list {
			if !yield(x) {
				return
			}
		}
	}
	for _, d := range s.depSchemas {
		if !yield(d.s) {
			return
		}
	}
}

// checkCycles rejects reference cycles that never descend into the instance
// (such as {"$ref": "#"}), which would otherwise make validation loop forever.
func (c *compiler) checkCycles() error {
	const (
		unseen = iota
		active
		done
	)
	state := make(map[*schema]int, len(c.byLoc))
	var visit func(s *schema) *schema
	visit = func(s *schema) *schema {
		switch state[s] {
		case active:
			return s
		case done:
			return nil
		}
		state[s] = active
		var bad *schema
		for x := range s.inPlace {
			if bad = visit(x); bad != nil {
				break
			}
		}
		if s.dynName != "" && bad == nil {
			// Any schema declaring the anchor may be the target at run time.
			for _, x := range c.dynByName[s.dynName] {
				if bad = visit(x); bad != nil {
					break
				}
			}
		}
		state[s] = done
		return bad
	}
	for _, s := range c.byLoc {
		if bad := visit(s); bad != nil {
			return fmt.Errorf("schema: at %q: reference cycle does not consume any part of the instance", where(bad.loc))
		}
	}
	return nil
}
