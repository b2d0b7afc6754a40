package engine

import "fmt"

// CodeUncheckedRelease is the code of a ReleaseWarning, and of the error
// that Catalog.RuleSet (and a strict mode) returns in its place.
const CodeUncheckedRelease Code = "unchecked_release"

// ReleaseWarning says that a release ref ("numpy==2.6.0") was answered
// by a version that was not checked against that release: the release is
// newer than every version's range, so the newest range's version stands
// in for it, or it is a pre-release or development build
// ("1.13.0a0+gitunknown"), read as the release it is a build of. It says
// what was checked. It is a value, as Catalog.Lookup returns it, never a
// message to parse: the command line shows Message as a note, the JSON
// answers carry it whole.
type ReleaseWarning struct {
	Code    Code   `json:"code"`    // CodeUncheckedRelease
	Ref     string `json:"ref"`     // as named: "torch==1.13.0a0+gitunknown"
	Release string `json:"release"` // the release part: "1.13.0a0+gitunknown"
	// Build is "pre-release" or "development build" for a build between
	// releases, read as ReadAs ("1.13.0"); "" for a release.
	Build  string `json:"build,omitempty"`
	ReadAs string `json:"read_as,omitempty"`
	// Newer is set when the release (or ReadAs) is newer than every
	// version's range.
	Newer bool `json:"newer"`
	// RuleSet is the version that answers: "numpy@v2"; Releases is its
	// range, with what was checked.
	RuleSet  string       `json:"ruleset"`
	Releases ReleaseRange `json:"releases"`
	Message  string       `json:"message"`
	Hint     string       `json:"hint"`
}

// String is the warning's message.
func (w *ReleaseWarning) String() string { return w.Message }

func newReleaseWarning(name, release string, in installed, newer bool, rs *RuleSet) *ReleaseWarning {
	r := *rs.manifest.Mirrors.Releases
	w := &ReleaseWarning{Code: CodeUncheckedRelease, Ref: name + ReleaseRef + release, Release: release, Newer: newer, RuleSet: rs.Ref(), Releases: r}
	what := name + " " + release
	if in.build != "" {
		w.Build, w.ReadAs = in.build, in.base
		what = fmt.Sprintf("%s is a %s, read as %s", what, in.build, in.base)
		if newer {
			what += ", which"
		}
	}
	switch {
	case newer:
		w.Message = fmt.Sprintf("%s is newer than every release dlroute checked; using %s, checked against %s", what, rs.Ref(), r.CheckedString())
	default:
		w.Message = fmt.Sprintf("%s; using %s (%s), checked against %s", what, rs.Ref(), r, r.CheckedString())
	}
	w.Hint = "`python -m dlroute check` runs the installed releases' own functions on the rules' cases; a strict mode (--strict-release, strict=True) refuses instead"
	return w
}

// Refusal is the error a strict lookup returns instead of w: code
// CodeUncheckedRelease, its message w's.
func (w *ReleaseWarning) Refusal() *Error {
	return &Error{Code: CodeUncheckedRelease, Message: "refused (strict): " + w.Message,
		Hint: fmt.Sprintf("name the version to use it anyway (%s), or check the release first: `python -m dlroute check`", w.RuleSet)}
}
