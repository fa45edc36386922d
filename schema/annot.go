package schema

// annot records which properties and items of an instance were evaluated by
// successful subschemas at one instance location. It backs
// unevaluatedProperties and unevaluatedItems and is only built when a schema
// uses one of them.
type annot struct {
	allProps bool
	props    map[string]struct{}
	allItems bool
	items    int    // items [0, items) were evaluated
	marked   []bool // items evaluated by contains, indexed like the array
}

func (a *annot) addProp(name string) {
	if a.allProps {
		return
	}
	if a.props == nil {
		a.props = make(map[string]struct{})
	}
	a.props[name] = struct{}{}
}

func (a *annot) hasProp(name string) bool {
	if a.allProps {
		return true
	}
	_, ok := a.props[name]
	return ok
}

func (a *annot) addItem(i, n int) {
	if a.marked == nil {
		a.marked = make([]bool, n)
	}
	if i < len(a.marked) {
		a.marked[i] = true
	}
}

func (a *annot) hasItem(i int) bool {
	return a.allItems || i < a.items || (i < len(a.marked) && a.marked[i])
}

// merge adds the annotations of b to a.
func (a *annot) merge(b *annot) {
	if b == nil || a == b {
		return
	}
	if b.allProps {
		a.allProps, a.props = true, nil
	} else if !a.allProps {
		for k := range b.props {
			a.addProp(k)
		}
	}
	if b.allItems {
		a.allItems = true
	}
	if b.items > a.items {
		a.items = b.items
	}
	for i, m := range b.marked {
		if m {
			a.addItem(i, len(b.marked))
		}
	}
}
