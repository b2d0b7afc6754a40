package plan

// object is a JSON object as the input reader reads it, where
// encoding/json reads a map[string]any: its fields sorted by key, each
// key once with the last value given for it. A sorted slice, not a map:
// the checks and conversions read an object's keys in order anyway, a
// line's object is small, and a map's code was about 20 KB of the Go
// build of the decision module and two of a decision's allocations
// (plan/doc.go, "What it links").
type object []field

type field struct {
	key string
	val any
}

// get is the value of key, by binary search.
func (o object) get(key string) (any, bool) {
	lo, hi := 0, len(o)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if o[m].key < key {
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(o) && o[lo].key == key {
		return o[lo].val, true
	}
	return nil, false
}

// entry is a field as read, with its place among its object's fields.
type entry struct {
	field
	at int
}

// makeObject makes the fields of an object, in the order read, an
// object: sorted in place, the last value of each key kept. twice is the
// key whose second occurrence comes first, the one encoding/json's
// reading into a map meets first as already there.
func makeObject(read object) (obj object, twice string, dup bool) {
	if len(read) > 12 {
		return makeLargeObject(read)
	}
	for i := 1; i < len(read) && !dup; i++ {
		for j := 0; j < i; j++ {
			if read[j].key == read[i].key {
				twice, dup = read[i].key, true
				break
			}
		}
	}
	for i := 1; i < len(read); i++ { // stable: equal keys stay in the order read
		for j := i; j > 0 && read[j].key < read[j-1].key; j-- {
			read[j], read[j-1] = read[j-1], read[j]
		}
	}
	return lastOfEach(read), twice, dup
}

// lastOfEach keeps, of sorted fields, the last of each key, in place.
func lastOfEach(sorted object) object {
	out := sorted[:0]
	for i := range sorted {
		if i+1 < len(sorted) && sorted[i+1].key == sorted[i].key {
			continue
		}
		out = append(out, sorted[i])
	}
	clear(sorted[len(out):])
	return out
}

// makeLargeObject is makeObject for more than a few fields: a merge
// sort, so that a line of many keys costs n log n. Package sort's
// generic code would grow the decision module.
func makeLargeObject(read object) (obj object, twice string, dup bool) {
	e := make([]entry, len(read))
	for i, f := range read {
		e[i] = entry{f, i}
	}
	sortEntries(e, make([]entry, 0, len(e)/2+1))
	second := len(e)
	for i, f := range e {
		read[i] = f.field
		if i > 0 && e[i-1].key == f.key && f.at < second {
			second, twice, dup = f.at, f.key, true
		}
	}
	return lastOfEach(read), twice, dup
}

// sortEntries sorts by key, equal keys in the order read, merging
// through tmp.
func sortEntries(e, tmp []entry) {
	if len(e) <= 12 {
		for i := 1; i < len(e); i++ {
			for j := i; j > 0 && e[j].key < e[j-1].key; j-- {
				e[j], e[j-1] = e[j-1], e[j]
			}
		}
		return
	}
	m := len(e) / 2
	sortEntries(e[:m], tmp)
	sortEntries(e[m:], tmp)
	t := append(tmp[:0], e[:m]...)
	i, j, k := 0, m, 0
	for i < len(t) && j < len(e) {
		if e[j].key < t[i].key {
			e[k] = e[j]
			j++
		} else {
			e[k] = t[i]
			i++
		}
		k++
	}
	copy(e[k:], t[i:])
}
