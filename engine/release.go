package engine

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// ReleaseRange is the releases of the mirrored library whose behaviour a
// rule-set version reproduces: manifest.yaml's mirrors.releases. First and
// Last are inclusive, and Last is the newest release checked against its
// real code: a range is never open-ended. Checked says, for each release
// checked, how.
type ReleaseRange struct {
	First   string           `json:"first"`
	Last    string           `json:"last"`
	Checked map[string]Check `json:"checked"`
}

// Check is how a release was checked against its real code.
type Check string

const (
	// CheckRun: run here by `python -m dlroute check`, every case a CPU
	// reaches, against the real release.
	CheckRun Check = "run"
	// CheckSource: read from the release's source only.
	CheckSource Check = "source"
)

// CommitRange is the upstream commits a rule-set version reproduces:
// manifest.yaml's mirrors.commits, from From up to To, exclusive. An empty
// To is "still the behaviour at the newest commit read".
type CommitRange struct {
	From string `json:"from"`
	To   string `json:"to,omitempty"`
}

// String is the range as `dlroute rules` shows it: "0.4.26 to 0.10.1" or
// "0.10.2 only".
func (r ReleaseRange) String() string {
	if r.Last == r.First {
		return r.First + " only"
	}
	return r.First + " to " + r.Last
}

// CheckedString says which releases were checked and how, newest first
// within each kind: "2.5.5 (run here), 2.5.0, 2.5.2 (source only)".
func (r ReleaseRange) CheckedString() string {
	var parts []string
	for _, how := range []Check{CheckRun, CheckSource} {
		var rels []string
		for rel, h := range r.Checked {
			if h == how {
				rels = append(rels, rel)
			}
		}
		if len(rels) == 0 {
			continue
		}
		slices.SortFunc(rels, func(a, b string) int {
			x, _ := parseRelease(a)
			y, _ := parseRelease(b)
			return compareReleases(y, x)
		})
		parts = append(parts, strings.Join(rels, ", ")+" ("+how.says()+")")
	}
	return strings.Join(parts, ", ")
}

func (c Check) says() string {
	if c == CheckRun {
		return "run here"
	}
	return "source only"
}

// String is the range as `dlroute rules` shows it: "d448f6670b..83f8f76495"
// (the second exclusive) or "53fb5cf94f.." for a range still open.
func (r CommitRange) String() string { return r.From + ".." + r.To }

// covers reports whether release rel is inside r, whose ends parse (the
// manifest's checks made sure of it).
func (r ReleaseRange) covers(rel []int) bool {
	first, _ := parseRelease(r.First)
	last, _ := parseRelease(r.Last)
	return compareReleases(rel, first) >= 0 && compareReleases(rel, last) <= 0
}

func (r ReleaseRange) last() []int {
	last, _ := parseRelease(r.Last)
	return last
}

// installedPattern is a version as Python packages number them (PEP 440):
// the release's numbers, then optionally a pre-release ("rc1", "a0"), a
// post-release (".post1"), a development build (".dev20261201") and a
// local label ("+cpu", "+gitunknown").
var installedPattern = regexp.MustCompile(`(?i)^v?([0-9]+(?:\.[0-9]+)*)` +
	`((?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview)[-_.]?[0-9]*)?)` +
	`(?:[-_.]?(?:post|rev|r)[-_.]?[0-9]*)?` +
	`((?:[-_.]?dev[-_.]?[0-9]*)?)` +
	`(?:\+[A-Za-z0-9.]+)?$`)

// installed is a version as a package reports it: the release it is of,
// and whether it is a build between releases rather than the release.
type installed struct {
	release []int
	base    string // the release's numbers, "1.13.0"
	build   string // "" for the release; "pre-release" or "development build"
}

// parseInstalled reads a version such as "0.4.26", "2.5.1+cpu",
// "1.13.0a0+gitunknown" or "2.16.0.dev20261201+cpu". A post-release and a
// local label alone are the release (the same code, built another way);
// a pre-release or development build is read as its base release, and
// build says which it is.
func parseInstalled(s string) (installed, error) {
	m := installedPattern.FindStringSubmatch(s)
	if m == nil {
		return installed{}, fmt.Errorf("%q is not a release number such as 0.4.26", s)
	}
	rel, err := releaseNumbers(m[1])
	if err != nil {
		return installed{}, fmt.Errorf("%q is not a release number such as 0.4.26", s)
	}
	in := installed{release: rel, base: m[1]}
	switch {
	case m[3] != "":
		in.build = "development build"
	case m[2] != "":
		in.build = "pre-release"
	}
	return in, nil
}

// parseRelease reads a release number as a manifest writes it: numbers
// and dots, such as "0.4.26".
func parseRelease(s string) ([]int, error) {
	rel, err := releaseNumbers(strings.TrimPrefix(s, "v"))
	if err != nil {
		if in, ierr := parseInstalled(s); ierr == nil {
			return nil, fmt.Errorf("%q is not a release: a manifest names releases by their numbers alone, such as %s", s, in.base)
		}
		return nil, fmt.Errorf("%q is not a release number such as 0.4.26", s)
	}
	return rel, nil
}

func releaseNumbers(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(s, ".") {
		n, err := strconv.Atoi(part)
		if err != nil || n < 0 || part == "" || part[0] == '+' {
			return nil, fmt.Errorf("%q is not a number", part)
		}
		out = append(out, n)
	}
	return out, nil
}

// compareReleases orders release numbers, with missing parts zero: 0.11
// and 0.11.0 are the same release.
func compareReleases(a, b []int) int {
	for i := range max(len(a), len(b)) {
		var x, y int
		if i < len(a) {
			x = a[i]
		}
		if i < len(b) {
			y = b[i]
		}
		if x != y {
			return x - y
		}
	}
	return 0
}

// ReleaseRef is the separator of a ref that selects by the mirrored
// library's release: "jax==0.10.2" is the version of rule set jax whose
// mirrors.releases covers jax 0.10.2.
const ReleaseRef = "=="

// MaxReleaseLen is the longest release a ref may name, in bytes: as long
// as a bundle's revision (bundle.MaxRevisionLen). The longest release
// that anything reports is a nightly with a local label,
// "2.16.0.dev20261201+cu126.git1a2b3c4d" (36 bytes); a release is quoted
// by every answer the ref's warning goes into, so an unbounded one lets a
// single request make a host build an answer of any size.
const MaxReleaseLen = 128

// byRelease returns the version of list (oldest first) for release, with
// a warning when no version was checked against it (it is newer than
// every range, or a build read as its base release), or the error a user
// reads: the release is longer than MaxReleaseLen (CodeTooLong), does not
// parse, or no version covers it (naming the versions nearest to it), or
// two do.
func byRelease(name, release string, list []*RuleSet) (*RuleSet, *ReleaseWarning, *Error) {
	if len(release) > MaxReleaseLen {
		return nil, nil, releaseTooLong(name, release)
	}
	in, err := parseInstalled(release)
	if err != nil {
		return nil, nil, &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s: %v", name, err),
			Hint: "choose a version by its commit range instead: `dlroute rules` lists them; --ruleset " + name + "@<version>"}
	}
	var covering, ranged []*RuleSet
	for _, rs := range list {
		r := rs.manifest.Mirrors.Releases
		if r == nil {
			continue
		}
		ranged = append(ranged, rs)
		if r.covers(in.release) {
			covering = append(covering, rs)
		}
	}
	switch {
	case len(covering) == 1:
		if in.build == "" {
			return covering[0], nil, nil
		}
		return covering[0], newReleaseWarning(name, release, in, false, covering[0]), nil
	case len(covering) > 1:
		return nil, nil, &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s: release %s is in the range of %s", name, release, refsOf(covering)),
			Hint: "two versions must not claim the same release: fix their manifests' mirrors.releases"}
	case len(ranged) == 0:
		return nil, nil, &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s names no releases of what it mirrors", name),
			Hint: "choose a version instead: --ruleset " + name + "@<version>; `dlroute rules` lists them"}
	}
	newest := slices.MaxFunc(ranged, func(a, b *RuleSet) int {
		return compareReleases(a.manifest.Mirrors.Releases.last(), b.manifest.Mirrors.Releases.last())
	})
	if compareReleases(in.release, newest.manifest.Mirrors.Releases.last()) > 0 {
		return newest, newReleaseWarning(name, release, in, true, newest), nil
	}
	what := "release " + release
	if in.build != "" {
		what = fmt.Sprintf("%s (a %s, read as %s)", release, in.build, in.base)
	}
	return nil, nil, &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s has no version for %s", name, what),
		Hint: nearestReleases(in.release, ranged)}
}

// nearestReleases names the versions on either side of rel, with their
// ranges, for the error of a release that no version covers and that is
// not newer than every range.
func nearestReleases(rel []int, ranged []*RuleSet) string {
	slices.SortFunc(ranged, func(a, b *RuleSet) int {
		x, _ := parseRelease(a.manifest.Mirrors.Releases.First)
		y, _ := parseRelease(b.manifest.Mirrors.Releases.First)
		return compareReleases(x, y)
	})
	var before, after *RuleSet
	for _, rs := range ranged {
		first, _ := parseRelease(rs.manifest.Mirrors.Releases.First)
		if compareReleases(first, rel) > 0 {
			after = rs
			break
		}
		before = rs
	}
	describe := func(rs *RuleSet) string {
		return fmt.Sprintf("%s covers %s", rs.Ref(), rs.manifest.Mirrors.Releases)
	}
	if before == nil {
		return "it is older than every version: the oldest, " + describe(after)
	}
	return "nearest: " + describe(before) + "; " + describe(after)
}

func refsOf(list []*RuleSet) string {
	var refs []string
	for _, rs := range list {
		refs = append(refs, rs.Ref())
	}
	return strings.Join(refs, " and ")
}

// releaseTooLong is the error of a release longer than MaxReleaseLen:
// CodeTooLong, as everything over a length limit is, quoting only the
// release's start, so that the error is as short as the release should be.
func releaseTooLong(name, release string) *Error {
	start := strings.ToValidUTF8(release[:32], "")
	return &Error{Code: CodeTooLong,
		Message: fmt.Sprintf("rule set %s: the release %q... is %d bytes long; a release is at most %d (engine.MaxReleaseLen)", name, start, len(release), MaxReleaseLen),
		Hint:    "name a release by its number, such as " + name + ReleaseRef + "0.4.26, or a version: " + name + "@<version>; `dlroute rules` lists them"}
}
