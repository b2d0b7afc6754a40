package main

import (
	"flag"
	"fmt"
	"io"

	"github.com/dlroute/dlroute/engine"
)

// strictReleaseFlag adds --strict-release to a command that takes a ref.
func strictReleaseFlag(fs *flag.FlagSet) *bool {
	return fs.Bool("strict-release", false, "refuse a NAME==RELEASE that no version was checked against (a release newer than every range, or a pre-release or development build), rather than answer with a note")
}

// lookupRuleSet is the rule set of ref in cat. A release that no version
// was checked against is answered with a note on stderr saying what was
// checked, or refused when strict; the warning is returned for the JSON
// answers that carry it.
func lookupRuleSet(cat *engine.Catalog, ref string, strict bool, stderr io.Writer) (*engine.RuleSet, *engine.ReleaseWarning, error) {
	rs, w, err := cat.Lookup(ref)
	if err != nil {
		return nil, nil, err
	}
	if w != nil {
		if strict {
			return nil, nil, w.Refusal()
		}
		printNote(stderr, w)
	}
	return rs, w, nil
}

// printNote shows a warning as a note: the answer stands, but the user
// should know what it rests on.
func printNote(w io.Writer, rw *engine.ReleaseWarning) {
	fmt.Fprintf(w, "note: %s\n", rw.Message)
}
