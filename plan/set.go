package plan

import (
	"cmp"
	"slices"
	"strconv"
)

// SetMagic starts the bytes of a set of plans (rules/plans.bin).
const SetMagic = "DLPLANSET"

// SetFormatVersion is the version of a set's encoding after SetMagic.
const SetFormatVersion = 1

// Entry is one plan of a set: the version it decides and its bytes, as
// engine.RuleSet.Plan wrote them.
type Entry struct {
	Ref  string // "name@version"
	Plan []byte
}

// EncodeSet writes plans as one file: SetMagic, SetFormatVersion, then
// for each entry in order of Ref its Ref and its plan, each a uvarint
// length and the bytes. The same entries in any order give the same
// bytes. Two entries of one Ref are a programming error: EncodeSet panics.
func EncodeSet(entries []Entry) []byte {
	sorted := slices.SortedFunc(slices.Values(entries), func(a, b Entry) int { return cmp.Compare(a.Ref, b.Ref) })
	out := appendUvarint([]byte(SetMagic), SetFormatVersion)
	out = appendUvarint(out, uint64(len(sorted)))
	for i, e := range sorted {
		if i > 0 && sorted[i-1].Ref == e.Ref {
			panic("plan.EncodeSet: " + e.Ref + " twice")
		}
		out = appendUvarint(out, uint64(len(e.Ref)))
		out = append(out, e.Ref...)
		out = appendUvarint(out, uint64(len(e.Plan)))
		out = append(out, e.Plan...)
	}
	return out
}

// DecodeSet reads what EncodeSet wrote. The entries' Plan bytes alias
// data; Decode reads each. Bytes that are not a set are an *Error with
// CodeBadPlan.
func DecodeSet(data []byte) ([]Entry, error) {
	if !hasPrefix(string(data), SetMagic) {
		return nil, badPlan("a set of plans does not start with " + SetMagic)
	}
	r := &reader{b: data[len(SetMagic):]}
	if v := r.uint(); r.err == nil && v != SetFormatVersion {
		return nil, &Error{Code: CodeBadPlan, Message: "plan set format version " + itoa(int64(v)) + "; this evaluator reads version " + itoa(SetFormatVersion),
			Hint: "build the plans again from their rules with this version of dlroute"}
	}
	entries := make([]Entry, r.count())
	for i := range entries {
		n := r.count()
		if r.err != nil {
			break
		}
		entries[i].Ref, r.b = string(r.b[:n]), r.b[n:]
		n = r.count()
		if r.err != nil {
			break
		}
		entries[i].Plan, r.b = r.b[:n:n], r.b[n:]
	}
	if r.err == nil && len(r.b) != 0 {
		r.fail("bytes after the last plan of the set")
	}
	if r.err != nil {
		return nil, r.err
	}
	return entries, nil
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
