package engine

import (
	"fmt"
	"path"
	"regexp"
)

// NamePattern is what a rule set's directory may be named, rules/<name>/:
// lower-case letters, digits, '.', '_' and '-', starting with a letter or
// a digit, such as jax and jax-export. A name is typed in refs
// (jax@v3, jax==0.10.2), query strings and imports, and printed in
// answers, logs and terminals; these characters need no quoting in any
// of them, and mean the same folder on a file system that ignores case.
// Load refuses a folder named otherwise with CodeBadName, rather than
// leave it out unseen. (A version's folder is v<N>[.<N>...], within the
// same characters, or CodeBadVersion.)
const NamePattern = `[a-z0-9][a-z0-9._-]*`

var namePattern = regexp.MustCompile(`^` + NamePattern + `$`)

// checkSetName returns the error of a rule-set folder, rules/<name>/, whose
// name is outside NamePattern, or nil. The message quotes the name, which
// may hold characters a terminal would act on.
func checkSetName(name string, opts Options) *Error {
	if namePattern.MatchString(name) {
		return nil
	}
	return &Error{Code: CodeBadName, Pos: &Position{File: path.Join(opts.root(), name)},
		Message: fmt.Sprintf("rule-set folder %q is not named with %s", name, NamePattern),
		Hint:    "name a rule set's folder with lower-case letters, digits, '.', '_' and '-', such as jax-export; folders whose names start with '.' are left out"}
}
