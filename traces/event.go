package traces

import "strings"

// Event is one request of a trace.
//
// A Reader reuses one Event: its byte slices are views into the reader's
// buffers, valid until the next call of Next (as encoding/csv's records are
// with ReuseRecord). Copy what must outlive that.
type Event struct {
	// User is the key the request is limited by (the "user" field); never
	// empty.
	User []byte
	// Time is the request time in nanoseconds: the numeric timestamp times
	// the trace unit, or Unix nanoseconds for an RFC 3339 timestamp.
	Time int64
	// TimeText is the timestamp exactly as the trace wrote it.
	TimeText []byte
	// Cost is how many units the request takes; 1 when the trace gives none.
	Cost int64
	// Line is the 1-based line of the record in the trace (its first line
	// when a quoted CSV field spans several).
	Line int
	// File is the name of the trace the event came from, as errors give
	// it: one of several when they are merged.
	File string

	costText []byte      // the cost as written; nil when the trace gave none
	attrs    []attr      // fields other than user, timestamp and cost, in trace order
	names    *fieldNames // the fields user, timestamp and cost came from; nil: their names
}

// attr is one attribute of an event: a field other than user, timestamp
// and cost.
type attr struct {
	name  string
	value []byte
}

// Attr returns the value of the field name and whether the event has it.
// Besides the attributes, "user", "timestamp" (the text as written) and
// "cost" (when the trace gave one) work too, and so do the names of the
// fields they were read from (Options.UserField and so on). The value is a
// view valid until the next call of Next.
func (e *Event) Attr(name string) ([]byte, bool) {
	if n := e.names; n != nil && n.mapped {
		switch name {
		case n.user:
			name = "user"
		case n.time:
			name = "timestamp"
		case n.cost:
			name = "cost"
		}
	}
	switch name {
	case "user":
		return e.User, true
	case "timestamp":
		return e.TimeText, true
	case "cost":
		if e.costText != nil {
			return e.costText, true
		}
	}
	for i := range e.attrs {
		if e.attrs[i].name == name {
			return e.attrs[i].value, true
		}
	}
	return nil, false
}

// addAttr appends an attribute. It sets the new element's fields one by
// one: appending a composite literal builds it on the stack and copies
// it with wider loads than the stores that built it, which stalls (see
// addField).
func (e *Event) addAttr(name string, value []byte) {
	n := len(e.attrs)
	if n == cap(e.attrs) {
		e.attrs = append(e.attrs, attr{})
	} else {
		e.attrs = e.attrs[:n+1]
	}
	e.attrs[n].set(name, value)
}

// set sets a's name and value, one field after the other (see addAttr).
func (a *attr) set(name string, value []byte) {
	a.name, a.value = name, value
}

// attrValue returns the value of the attribute name, without the
// mapping of Attr.
func (e *Event) attrValue(name string) ([]byte, bool) {
	for i := range e.attrs {
		if e.attrs[i].name == name {
			return e.attrs[i].value, true
		}
	}
	return nil, false
}

// NumAttrs returns the number of attributes: fields other than user,
// timestamp and cost.
func (e *Event) NumAttrs() int { return len(e.attrs) }

// AttrAt returns the name and value of the i-th attribute, 0 <= i <
// NumAttrs(), in the order the trace gave them. The value is a view valid
// until the next call of Next.
func (e *Event) AttrAt(i int) (name string, value []byte) {
	if i < 0 || i >= len(e.attrs) {
		return "", nil
	}
	return e.attrs[i].name, e.attrs[i].value
}

// SetAttrs replaces the event's attributes with the given name/value pairs
// (kv holds name, value, name, value, ...; a trailing odd name is ignored).
// The values are copied. It is meant for building events to write; a Reader
// sets attributes itself.
func (e *Event) SetAttrs(kv ...string) {
	e.attrs = e.attrs[:0]
	for i := 0; i+1 < len(kv); i += 2 {
		e.attrs = append(e.attrs, attr{name: kv[i], value: []byte(kv[i+1])})
	}
}

// ResetAttrs removes the event's attributes and its explicit cost text.
func (e *Event) ResetAttrs() {
	e.attrs = e.attrs[:0]
	e.costText = nil
}

// AddAttr appends an attribute. value is kept as a view, not copied.
func (e *Event) AddAttr(name string, value []byte) {
	e.attrs = append(e.attrs, attr{name: name, value: value})
}

// fieldList lists the event's fields for an error about a missing one,
// after a space: ` (fields: "user", "path")`; empty when it has none.
func (e *Event) fieldList() string {
	var names []string
	if e.User != nil {
		names = append(names, quote([]byte(e.names.user)))
	}
	if e.TimeText != nil {
		names = append(names, quote([]byte(e.names.time)))
	}
	for _, a := range e.attrs {
		names = append(names, quote([]byte(a.name)))
	}
	if len(names) == 0 {
		return " (the record has no fields)"
	}
	return " (fields: " + strings.Join(names, ", ") + ")"
}
