package dsl

import (
	"iter"
)

// Member is one key and value of an [Object].
type Member struct {
	Key   string
	Value any
}

// indexThreshold is the member count above which an Object keeps a key index.
const indexThreshold = 32

// Object is a JSON object that keeps its members in insertion order.
//
// The zero value is an empty object ready to use. An Object is not safe for
// concurrent mutation; snapshots handed across the engine are never mutated.
type Object struct {
	members []Member
	index   map[string]int // key → position; only when len(members) > indexThreshold
}

// NewObject returns an object holding members in order. A repeated key keeps
// its first position and takes the later value.
func NewObject(members ...Member) *Object {
	o := newObjectCap(len(members))
	for _, m := range members {
		o.Set(m.Key, m.Value)
	}
	return o
}

// newObjectCap returns an empty object with room for n members. An object
// of up to four members is one allocation, its members beside it.
func newObjectCap(n int) *Object {
	switch {
	case n == 1:
		p := new(struct {
			o Object
			m [1]Member
		})
		p.o.members = p.m[:0]
		return &p.o
	case n == 2:
		p := new(struct {
			o Object
			m [2]Member
		})
		p.o.members = p.m[:0]
		return &p.o
	case n == 3 || n == 4:
		p := new(struct {
			o Object
			m [4]Member
		})
		p.o.members = p.m[:0:n]
		return &p.o
	}
	return &Object{members: make([]Member, 0, n)}
}

// Len returns the number of members.
func (o *Object) Len() int {
	if o == nil {
		return 0
	}
	return len(o.members)
}

// Get returns the value stored under key and whether it is present.
func (o *Object) Get(key string) (any, bool) {
	if i := o.find(key); i >= 0 {
		return o.members[i].Value, true
	}
	return nil, false
}

// Has reports whether key is present.
func (o *Object) Has(key string) bool { return o.find(key) >= 0 }

func (o *Object) find(key string) int {
	if o == nil {
		return -1
	}
	if o.index != nil {
		if i, ok := o.index[key]; ok {
			return i
		}
		return -1
	}
	for i := range o.members {
		if o.members[i].Key == key {
			return i
		}
	}
	return -1
}

// Set stores value under key: in place when the key is present, appended otherwise.
func (o *Object) Set(key string, value any) {
	if i := o.find(key); i >= 0 {
		o.members[i].Value = value
		return
	}
	o.appendNew(key, value)
}

// appendNew appends a member whose key is known to be absent.
func (o *Object) appendNew(key string, value any) {
	o.members = append(o.members, Member{key, value})
	n := len(o.members)
	switch {
	case o.index != nil:
		o.index[key] = n - 1
	case n > indexThreshold:
		o.index = make(map[string]int, n*2)
		for i, m := range o.members {
			o.index[m.Key] = i
		}
	}
}

// Delete removes key and reports whether it was present.
func (o *Object) Delete(key string) bool {
	i := o.find(key)
	if i < 0 {
		return false
	}
	o.members = append(o.members[:i], o.members[i+1:]...)
	if o.index != nil {
		if len(o.members) <= indexThreshold {
			o.index = nil
		} else {
			delete(o.index, key)
			for j := i; j < len(o.members); j++ {
				o.index[o.members[j].Key] = j
			}
		}
	}
	return true
}

// At returns the i-th member's key and value.
func (o *Object) At(i int) (string, any) {
	m := o.members[i]
	return m.Key, m.Value
}

// Keys returns the keys in order.
func (o *Object) Keys() []string {
	keys := make([]string, o.Len())
	for i := range keys {
		keys[i] = o.members[i].Key
	}
	return keys
}

// Members returns a copy of the members in order.
func (o *Object) Members() []Member {
	if o == nil {
		return nil
	}
	return append([]Member(nil), o.members...)
}

// All iterates over the members in order.
func (o *Object) All() iter.Seq2[string, any] {
	return func(yield func(string, any) bool) {
		for i := 0; i < o.Len(); i++ {
			if !yield(o.members[i].Key, o.members[i].Value) {
				return
			}
		}
	}
}

// MarshalJSON writes the object as canonical JSON, members in order.
func (o *Object) MarshalJSON() ([]byte, error) { return Marshal(o) }

// UnmarshalJSON reads a JSON object, keeping its key order, with the rules of
// [Unmarshal].
func (o *Object) UnmarshalJSON(data []byte) error {
	v, err := Unmarshal(data)
	if err != nil {
		return err
	}
	x, ok := v.(*Object)
	if !ok {
		return &SyntaxError{Msg: "a JSON object is required"}
	}
	*o = *x
	return nil
}

// MarshalText writes the object as canonical JSON, so that text loggers and
// fmt print it readably.
func (o *Object) MarshalText() ([]byte, error) { return Marshal(o) }
