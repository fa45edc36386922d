package schema

func (v *validator) applicators(s *schema, inst any, a *annot) bool {
	ok := true
	for _, sub := range s.allOf {
		if !v.validate(sub, inst, a) {
			if ok = false; !v.more() {
				return false
			}
		}
	}
	if s.anyOf != nil {
		matched := false
		for _, sub := range s.anyOf {
			if a == nil {
				if v.check(sub, inst, nil) {
					matched = true
					break
				}
				continue
			}
			var t annot
			if v.check(sub, inst, &t) {
				matched = true
				a.merge(&t)
			}
		}
		if !matched {
			if ok = false; !v.fail("anyOf", "must match at least one schema in anyOf") {
				return false
			}
		}
	}
	if s.oneOf != nil {
		first, second := -1, -1
		var keep annot
		for i, sub := range s.oneOf {
			var t annot
			tp := &t
			if a == nil {
				tp = nil
			}
			if !v.check(sub, inst, tp) {
				continue
			}
			if first < 0 {
				first, keep = i, t
				continue
			}
			second = i
			break
		}
		switch {
		case first < 0:
			if ok = false; !v.fail("oneOf", "must match exactly one schema in oneOf, matched none") {
				return false
			}
		case second >= 0:
			if ok = false; !v.fail("oneOf", "must match exactly one schema in oneOf, matched %d and %d", first, second) {
				return false
			}
		case a != nil:
			a.merge(&keep)
		}
	}
	if s.not != nil && v.check(s.not, inst, nil) {
		if ok = false; !v.fail("not", "must not match the schema in not") {
			return false
		}
	}
	if s.ifS != nil && (s.thenS != nil || s.elseS != nil || a != nil) {
		var t annot
		tp := &t
		if a == nil {
			tp = nil
		}
		if v.check(s.ifS, inst, tp) {
			if a != nil {
				a.merge(&t)
			}
			if s.thenS != nil && !v.validate(s.thenS, inst, a) {
				ok = false
			}
		} else if s.elseS != nil && !v.validate(s.elseS, inst, a) {
			ok = false
		}
	}
	return ok
}

func (v *validator) unevaluatedProps(s *schema, m map[string]any, a *annot) bool {
	ok := true
	for key, val := range m {
		if a.hasProp(key) {
			continue
		}
		if s.unevalProps.isBool && !s.unevalProps.boolVal {
			if ok = false; !v.fail("unevaluatedProperties", "unevaluated property %q is not allowed", key) {
				return false
			}
			continue
		}
		if !v.childKey(s.unevalProps, val, key) {
			if ok = false; !v.more() {
				return false
			}
		}
	}
	a.allProps = true
	return ok
}

func (v *validator) unevaluatedItems(s *schema, arr []any, a *annot) bool {
	ok := true
	for i, val := range arr {
		if a.hasItem(i) {
			continue
		}
		if s.unevalItems.isBool && !s.unevalItems.boolVal {
			if ok = false; !v.fail("unevaluatedItems", "unevaluated item at index %d is not allowed", i) {
				return false
			}
			continue
		}
		if !v.childIndex(s.unevalItems, val, i) {
			if ok = false; !v.more() {
				return false
			}
		}
	}
	a.allItems = true
	return ok
}
