package bundle

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/dlroute/dlroute/engine"
)

// Code is the stable, machine-readable kind of an [Error]: an
// [engine.Code], since every error code of dlroute is of one namespace
// (ERRORS.md). Codes are part of the compatibility promise: they never
// change meaning, and status pages, logs and metrics name a refusal by
// its code.
type Code = engine.Code

// Codes for an archive that cannot be read.
const (
	CodeNotBundle  Code = "not_a_bundle"        // not a gzip-compressed tar archive
	CodeTruncated  Code = "truncated"           // the archive ends early
	CodeCorrupt    Code = "corrupt"             // the compressed stream or a header is damaged
	CodeTooLong    Code = engine.CodeTooLong    // the archive, a file or the unpacked total is longer than its limit
	CodeBadPath    Code = "bad_path"            // a member's path is absolute, leaves its folder, or is not <name>/<version>/<file>
	CodeDuplicate  Code = "duplicate_path"      // a path appears twice
	CodeNotRegular Code = engine.CodeNotRegular // a member, or the bundle file itself, is a link, device or anything but a regular file (or a member folder)
)

// CodeOutsideRoot is Build's code for a file or folder of the rules
// directory that leads outside it (a link), when the directory is read
// with rootfs.Open, as every host reads one.
const CodeOutsideRoot Code = "outside_root"

// Codes for a manifest that does not vouch for the files.
const (
	CodeManifest    Code = "bad_manifest"         // the manifest is missing, malformed or of another format
	CodeDigest      Code = "digest_mismatch"      // a file's SHA-256 or size differs from the manifest's
	CodeMissingFile Code = engine.CodeMissingFile // the manifest lists a file the archive lacks
	CodeUnlisted    Code = "unlisted_file"        // the archive holds a file the manifest does not list
)

// Codes for signatures and keys.
const (
	CodeUnsigned      Code = "unsigned"       // a key is configured and the bundle has no signature
	CodeUnknownSigner Code = "unknown_signer" // signed, but by no configured key
	CodeBadSignature  Code = "bad_signature"  // a configured key's signature does not verify: the manifest was changed
	CodeBadKey        Code = "bad_key"        // a key is not in the signed-note key format
	CodeBadRevision   Code = "bad_revision"   // a revision is empty, too long, or has characters outside [A-Za-z0-9._:+@/-]
)

// Error is every error this package returns: a stable Code, the archive
// member it concerns (when one does), and a message.
type Error struct {
	Code    Code   `json:"code"`
	Path    string `json:"path,omitempty"`
	Message string `json:"message"`

	err error
}

// Error formats the error as "path: message", or the message alone. A
// path that holds a character a terminal would act on rather than show (a
// control character such as ESC, a bidi override such as U+202E, invalid
// UTF-8) is quoted as Go quotes a string, as engine.Position is.
func (e *Error) Error() string {
	switch {
	case e.Path == "":
		return e.Message
	case !printable(e.Path):
		return fmt.Sprintf("%q: %s", e.Path, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Message)
}

// printable reports whether every character of s shows as itself.
func printable(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, func(r rune) bool { return !strconv.IsPrint(r) })
}

// Unwrap returns the cause, if any.
func (e *Error) Unwrap() error { return e.err }

func errorf(code Code, path, format string, args ...any) *Error {
	return &Error{Code: code, Path: path, Message: fmt.Sprintf(format, args...)}
}
