package schema

import (
	"encoding/json"
	"fmt"
	"sort"
	"strconv"
	"unicode/utf8"
)

// maxSteps bounds the number of subschema evaluations per Validate call so
// that pathological schemas cannot make validation run unboundedly long.
const maxSteps = 1 << 24

// Validate checks an instance, typically produced by encoding/json decoding
// into any (map[string]any, []any, string, float64 or json.Number, bool, nil).
// Other Go values are first converted through encoding/json. It returns nil
// or a ValidationErrors.
func (s *Schema) Validate(instance any) error {
	v := validator{dynamic: s.dynamic}
	v.validate(s.root, instance, nil)
	return v.result()
}

// ValidateJSON decodes data (keeping numbers exact with json.Number), reading
// it once with jsonrpc.Unmarshal, and validates the result. Malformed JSON,
// and JSON that repeats a member name (a *DuplicateMemberError), yields an
// error that is not a ValidationErrors.
func (s *Schema) ValidateJSON(data []byte) error {
	if s.plain != nil && s.plain.validJSON(data) {
		return nil
	}
	inst, err := parseValue(data)
	if err != nil {
		return fmt.Errorf("schema: invalid JSON instance: %w", err)
	}
	return s.Validate(inst)
}

type validator struct {
	errs    ValidationErrors
	quiet   bool
	aborted bool
	steps   int

	// dynamic is set when the schema has a "$dynamicRef" that depends on the
	// dynamic scope: the schema resources entered on the way to the subschema
	// being evaluated, outermost first, kept in scope.
	dynamic bool
	scope   []*resource
}

// enter evaluates s with its resource pushed onto the dynamic scope.
func (v *validator) enter(s *schema, inst any, ann *annot) bool {
	v.scope = append(v.scope, s.res)
	ok := v.validate(s, inst, ann) // s.res is innermost now: evaluates s
	v.scope = v.scope[:len(v.scope)-1]
	return ok
}

func (v *validator) dynRefTarget(s *schema) *schema {
	if s.dynName == "" {
		return s.dynRef
	}
	return v.dynamicTarget(s.dynName, s.dynRef)
}

// dynamicTarget resolves a "$dynamicRef" that initially resolved to the
// "$dynamicAnchor" name in schema t: the outermost resource in the dynamic
// scope that declares that dynamic anchor provides the target.
func (v *validator) dynamicTarget(name string, t *schema) *schema {
	for _, r := range v.scope {
		if x, ok := r.dynAnchors[name]; ok {
			return x
		}
	}
	return t
}

func (v *validator) result() error {
	if v.aborted {
		v.errs = append(v.errs, &ValidationError{Keyword: "", Message: "validation aborted: schema evaluation limit exceeded"})
	}
	if len(v.errs) == 0 {
		return nil
	}
	sort.SliceStable(v.errs, func(i, j int) bool { return v.errs[i].Path < v.errs[j].Path })
	return v.errs
}

// more reports whether validation should keep going after a failure.
func (v *validator) more() bool {
	return !v.quiet && !v.aborted && len(v.errs) < maxErrors
}

// fail records an error (unless running quietly) and reports whether
// validation should continue collecting errors.
func (v *validator) fail(kw, format string, args ...any) bool {
	if v.quiet || v.aborted {
		return false
	}
	if len(v.errs) < maxErrors {
		v.errs = append(v.errs, &ValidationError{Keyword: kw, Message: fmt.Sprintf(format, args...)})
	}
	return len(v.errs) < maxErrors
}

// check evaluates s against inst without recording errors.
func (v *validator) check(s *schema, inst any, ann *annot) bool {
	q := v.quiet
	v.quiet = true
	ok := v.validate(s, inst, ann)
	v.quiet = q
	return ok
}

// childKey validates the value of property key; errors it records get the
// key prepended to their (relative) paths.
func (v *validator) childKey(s *schema, inst any, key string) bool {
	start := len(v.errs)
	ok := v.validate(s, inst, nil)
	if len(v.errs) > start {
		seg := "/" + escapeToken(key)
		for _, e := range v.errs[start:] {
			e.Path = seg + e.Path
		}
	}
	return ok
}

// childIndex validates array item i, prefixing "/i" to the paths of new errors.
func (v *validator) childIndex(s *schema, inst any, i int) bool {
	start := len(v.errs)
	ok := v.validate(s, inst, nil)
	if len(v.errs) > start {
		seg := "/" + strconv.Itoa(i)
		for _, e := range v.errs[start:] {
			e.Path = seg + e.Path
		}
	}
	return ok
}

// validate evaluates s against inst. Errors are recorded with paths relative
// to inst; callers descending into children prefix them. When ann is non-nil the
// locations evaluated by s are added to it (used by unevaluated*).
func (v *validator) validate(s *schema, inst any, ann *annot) bool {
	if v.dynamic && s.res != nil && (len(v.scope) == 0 || v.scope[len(v.scope)-1] != s.res) {
		return v.enter(s, inst, ann)
	}
	if s.isBool {
		if s.boolVal {
			return true
		}
		v.fail("false", "no value is allowed here")
		return false
	}
	if v.aborted {
		return false
	}
	if v.steps++; v.steps > maxSteps {
		v.aborted = true
		return false
	}
	k := kindOf(inst)
	if k == kInvalid {
		n, err := normalize(inst)
		if err != nil {
			v.fail("type", "unsupported Go value of type %T", inst)
			return false
		}
		inst, k = n, kindOf(n)
	}

	// A schema using unevaluated* tracks its own annotations and passes the
	// union up to the caller afterwards.
	a := ann
	var own annot
	if s.hasUnevalAny {
		a = &own
	}

	ok := true
	if s.ref != nil && !v.validate(s.ref, inst, a) {
		if ok = false; !v.more() {
			return false
		}
	}
	if s.dynRef != nil && !v.validate(v.dynRefTarget(s), inst, a) {
		if ok = false; !v.more() {
			return false
		}
	}
	if s.types != 0 && !typeMatches(s.types, k, inst) {
		if ok = false; !v.fail("type", "must be %s, got %s", s.types, kindName(k, inst)) {
			return false
		}
	}
	if s.hasConst && !jsonEqual(inst, s.constVal) {
		if ok = false; !v.fail("const", "must be equal to %s", jsonText(s.constVal)) {
			return false
		}
	}
	if s.hasEnum && !inEnum(s.enum, inst) {
		if ok = false; !v.fail("enum", "must be one of %s", jsonText(s.enum)) {
			return false
		}
	}
	switch k {
	case kObject:
		if s.objectChecks && !v.object(s, inst.(map[string]any), a) {
			if ok = false; !v.more() {
				return false
			}
		}
	case kArray:
		if s.arrayChecks && !v.array(s, inst.([]any), a) {
			if ok = false; !v.more() {
				return false
			}
		}
	case kNumber:
		if !v.number(s, inst) {
			if ok = false; !v.more() {
				return false
			}
		}
	case kString:
		if !v.str(s, inst.(string)) {
			if ok = false; !v.more() {
				return false
			}
		}
	}
	if (s.allOf != nil || s.anyOf != nil || s.oneOf != nil || s.not != nil || s.ifS != nil) &&
		!v.applicators(s, inst, a) {
		if ok = false; !v.more() {
			return false
		}
	}
	if k == kObject {
		m := inst.(map[string]any)
		for _, d := range s.depSchemas {
			if _, present := m[d.name]; present && !v.validate(d.s, inst, a) {
				if ok = false; !v.more() {
					return false
				}
			}
		}
		if s.unevalProps != nil && !v.unevaluatedProps(s, m, a) {
			ok = false
		}
	}
	if k == kArray && s.unevalItems != nil && !v.unevaluatedItems(s, inst.([]any), a) {
		ok = false
	}
	if ok && s.hasUnevalAny && ann != nil {
		ann.merge(a)
	}
	return ok
}

func typeMatches(t typeSet, k kind, inst any) bool {
	switch k {
	case kNull:
		return t&tNull != 0
	case kBool:
		return t&tBool != 0
	case kString:
		return t&tString != 0
	case kObject:
		return t&tObject != 0
	case kArray:
		return t&tArray != 0
	case kNumber:
		if t&tNumber != 0 {
			return true
		}
		if t&tInteger != 0 {
			f, _, _ := toFloat(inst)
			return isInteger(f)
		}
	}
	return false
}

func kindName(k kind, inst any) string {
	if k == kNumber {
		if f, _, _ := toFloat(inst); isInteger(f) {
			return "integer"
		}
	}
	return k.String()
}

func inEnum(enum []any, inst any) bool {
	for _, e := range enum {
		if jsonEqual(inst, e) {
			return true
		}
	}
	return false
}

// jsonText renders a schema value for an error message.
func jsonText(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Sprint(v)
	}
	return string(b)
}

func (v *validator) object(s *schema, m map[string]any, a *annot) bool {
	ok := true
	if s.minProps >= 0 && len(m) < s.minProps {
		if ok = false; !v.fail("minProperties", "must have at least %d properties", s.minProps) {
			return false
		}
	}
	if s.maxProps >= 0 && len(m) > s.maxProps {
		if ok = false; !v.fail("maxProperties", "must have at most %d properties", s.maxProps) {
			return false
		}
	}
	for _, r := range s.required {
		if _, present := m[r]; !present {
			if ok = false; !v.fail("required", "missing required property %q", r) {
				return false
			}
		}
	}
	for _, d := range s.depRequired {
		if _, present := m[d.prop]; !present {
			continue
		}
		for _, r := range d.required {
			if _, present := m[r]; !present {
				if ok = false; !v.fail("dependentRequired", "property %q is required when %q is present", r, d.prop) {
					return false
				}
			}
		}
	}
	for _, ps := range s.props {
		val, present := m[ps.name]
		if !present {
			continue
		}
		if a != nil {
			a.addProp(ps.name)
		}
		if !v.childKey(ps.s, val, ps.name) {
			if ok = false; !v.more() {
				return false
			}
		}
	}
	if s.patternProps != nil || s.additional != nil {
		for key, val := range m {
			matched := false
			if s.propIndex != nil {
				_, matched = s.propIndex[key]
			}
			for _, pp := range s.patternProps {
				if !pp.re.MatchString(key) {
					continue
				}
				matched = true
				if a != nil {
					a.addProp(key)
				}
				if !v.childKey(pp.s, val, key) {
					if ok = false; !v.more() {
						return false
					}
				}
			}
			if matched || s.additional == nil {
				continue
			}
			if s.additional.isBool && !s.additional.boolVal {
				if ok = false; !v.fail("additionalProperties", "additional property %q is not allowed", key) {
					return false
				}
				continue
			}
			if !v.childKey(s.additional, val, key) {
				if ok = false; !v.more() {
					return false
				}
			}
		}
		if s.additional != nil && a != nil {
			a.allProps = true
		}
	}
	if s.propNames != nil {
		for key := range m {
			if !v.check(s.propNames, key, nil) {
				if ok = false; !v.fail("propertyNames", "property name %q is invalid", key) {
					return false
				}
			}
		}
	}
	return ok
}

func (v *validator) array(s *schema, arr []any, a *annot) bool {
	ok := true
	if s.minItems >= 0 && len(arr) < s.minItems {
		if ok = false; !v.fail("minItems", "must have at least %d items", s.minItems) {
			return false
		}
	}
	if s.maxItems >= 0 && len(arr) > s.maxItems {
		if ok = false; !v.fail("maxItems", "must have at most %d items", s.maxItems) {
			return false
		}
	}
	if s.uniqueItems {
		if uniq, i, j := allUnique(arr); !uniq {
			if ok = false; !v.fail("uniqueItems", "items at indexes %d and %d are equal", i, j) {
				return false
			}
		}
	}
	n := min(len(s.prefixItems), len(arr))
	for i := 0; i < n; i++ {
		if !v.childIndex(s.prefixItems[i], arr[i], i) {
			if ok = false; !v.more() {
				return false
			}
		}
	}
	if a != nil && n > a.items {
		a.items = n
	}
	if s.items != nil {
		if s.items.isBool && !s.items.boolVal && len(arr) > n {
			if ok = false; !v.fail("items", "must have at most %d items", n) {
				return false
			}
		} else {
			for i := n; i < len(arr); i++ {
				if !v.childIndex(s.items, arr[i], i) {
					if ok = false; !v.more() {
						return false
					}
				}
			}
		}
		if a != nil {
			a.allItems = true
		}
	}
	if s.contains != nil && !v.containsCheck(s, arr, a) {
		ok = false
	}
	return ok
}

func (v *validator) containsCheck(s *schema, arr []any, a *annot) bool {
	minC := 1
	if s.minContains >= 0 {
		minC = s.minContains
	}
	count := 0
	for i, e := range arr {
		if !v.check(s.contains, e, nil) {
			continue
		}
		count++
		if a != nil {
			a.addItem(i, len(arr))
		} else if count >= minC && s.maxContains < 0 {
			return true
		}
	}
	if count < minC {
		v.fail("contains", "must contain at least %d matching item(s), found %d", minC, count)
		return false
	}
	if s.maxContains >= 0 && count > s.maxContains {
		v.fail("maxContains", "must contain at most %d matching item(s), found %d", s.maxContains, count)
		return false
	}
	return true
}

func (v *validator) number(s *schema, inst any) bool {
	if !s.minimum.set && !s.maximum.set && !s.exclMin.set && !s.exclMax.set && !s.multipleOf.set {
		return true
	}
	f, lit, _ := toFloat(inst)
	ok := true
	if s.minimum.set && f < s.minimum.f {
		if ok = false; !v.fail("minimum", "must be >= %s", s.minimum.lit) {
			return false
		}
	}
	if s.maximum.set && f > s.maximum.f {
		if ok = false; !v.fail("maximum", "must be <= %s", s.maximum.lit) {
			return false
		}
	}
	if s.exclMin.set && f <= s.exclMin.f {
		if ok = false; !v.fail("exclusiveMinimum", "must be > %s", s.exclMin.lit) {
			return false
		}
	}
	if s.exclMax.set && f >= s.exclMax.f {
		if ok = false; !v.fail("exclusiveMaximum", "must be < %s", s.exclMax.lit) {
			return false
		}
	}
	if s.multipleOf.set && !isMultipleOf(f, lit, s.multipleOf.f, s.multipleOf.lit) {
		if ok = false; !v.fail("multipleOf", "must be a multiple of %s", s.multipleOf.lit) {
			return false
		}
	}
	return ok
}

func (v *validator) str(s *schema, str string) bool {
	ok := true
	if s.minLength >= 0 || s.maxLength >= 0 {
		n := utf8.RuneCountInString(str)
		if s.minLength >= 0 && n < s.minLength {
			if ok = false; !v.fail("minLength", "must be at least %d characters long", s.minLength) {
				return false
			}
		}
		if s.maxLength >= 0 && n > s.maxLength {
			if ok = false; !v.fail("maxLength", "must be at most %d characters long", s.maxLength) {
				return false
			}
		}
	}
	if s.pattern != nil && !s.pattern.MatchString(str) {
		if ok = false; !v.fail("pattern", "must match pattern %q", s.pattern.String()) {
			return false
		}
	}
	if s.formatCheck != nil && !s.formatCheck(str) {
		if ok = false; !v.fail("format", "must be a valid %s", s.format) {
			return false
		}
	}
	return ok
}
