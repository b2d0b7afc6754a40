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
// Last are inclusive; an empty Last is "and every later release".
type ReleaseRange struct {
	First string `json:"first"`
	Last  string `json:"last,omitempty"`
}

// CommitRange is the upstream commits a rule-set version reproduces:
// manifest.yaml's mirrors.commits, from From up to To, exclusive. An empty
// To is "still the behaviour at the newest commit read".
type CommitRange struct {
	From string `json:"from"`
	To   string `json:"to,omitempty"`
}

// String is the range as `dlroute rules` shows it: "0.4.26 to 0.10.1",
// "0.10.2 only" or "0.11.0 and later".
func (r ReleaseRange) String() string {
	switch r.Last {
	case "":
		return r.First + " and later"
	case r.First:
		return r.First + " only"
	}
	return r.First + " to " + r.Last
}

// String is the range as `dlroute rules` shows it: "d448f6670b..83f8f76495"
// (the second exclusive) or "53fb5cf94f.." for a range still open.
func (r CommitRange) String() string { return r.From + ".." + r.To }

// covers reports whether release rel is inside r, whose ends parse (the
// manifest's checks made sure of it).
func (r ReleaseRange) covers(rel []int) bool {
	first, _ := parseRelease(r.First)
	if compareReleases(rel, first) < 0 {
		return false
	}
	if r.Last == "" {
		return true
	}
	last, _ := parseRelease(r.Last)
	return compareReleases(rel, last) <= 0
}

// releasePattern is a final release as Python packages number them (PEP
// 440): numbers and dots, then optionally a post-release (".post1", the
// same code) and a local label ("+cpu", the same code). Pre-releases and
// development builds are caught by prereleasePattern, to say why.
var (
	releasePattern    = regexp.MustCompile(`^v?([0-9]+(?:\.[0-9]+)*)(?:\.?post[0-9]*)?(?:\+[A-Za-z0-9.]+)?$`)
	prereleasePattern = regexp.MustCompile(`^v?[0-9]+(?:\.[0-9]+)*(?:[-_.]?(?:a|b|c|rc|alpha|beta|pre|preview|dev)[0-9]*)+`)
)

// parseRelease reads a release number such as "0.4.26" or "2.5.1+cpu". The
// error says what is wrong, and why a pre-release or a development build
// has no release range: between two releases its behaviour is its commit's.
func parseRelease(s string) ([]int, error) {
	m := releasePattern.FindStringSubmatch(s)
	if m == nil {
		if prereleasePattern.MatchString(s) {
			return nil, fmt.Errorf("%q is a pre-release or a development build, whose behaviour is that of the commit it was built from", s)
		}
		return nil, fmt.Errorf("%q is not a release number such as 0.4.26", s)
	}
	var out []int
	for _, part := range strings.Split(m[1], ".") {
		n, err := strconv.Atoi(part)
		if err != nil {
			return nil, fmt.Errorf("%q is not a release number such as 0.4.26", s)
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

// byRelease returns the version of list (oldest first) whose release range
// covers release, or the error a user reads: the release does not parse,
// or no version covers it (naming the versions nearest to it), or two do.
func byRelease(name, release string, list []*RuleSet) (*RuleSet, *Error) {
	rel, err := parseRelease(release)
	if err != nil {
		return nil, &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s: %v", name, err),
			Hint: "choose a version by its commit range instead: `dlroute rules` lists them; --ruleset " + name + "@<version>"}
	}
	var covering, ranged []*RuleSet
	for _, rs := range list {
		r := rs.manifest.Mirrors.Releases
		if r == nil {
			continue
		}
		ranged = append(ranged, rs)
		if r.covers(rel) {
			covering = append(covering, rs)
		}
	}
	switch {
	case len(covering) == 1:
		return covering[0], nil
	case len(covering) > 1:
		return nil, &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s: release %s is in the range of %s", name, release, refsOf(covering)),
			Hint: "two versions must not claim the same release: fix their manifests' mirrors.releases"}
	case len(ranged) == 0:
		return nil, &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s names no releases of what it mirrors", name),
			Hint: "choose a version instead: --ruleset " + name + "@<version>; `dlroute rules` lists them"}
	}
	return nil, &Error{Code: CodeNoRuleSet, Message: fmt.Sprintf("rule set %s has no version for release %s", name, release),
		Hint: nearestReleases(rel, ranged)}
}

// nearestReleases names the versions on either side of rel, with their
// ranges, for the error of a release that no version covers.
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
	switch {
	case before == nil:
		return "it is older than every version: the oldest, " + describe(after)
	case after == nil:
		return "it is newer than every version: the newest, " + describe(before)
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
