package bundle

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"path"
	"slices"
	"strings"
)

// Format names this version of the bundle format. A reader refuses a
// manifest of any other format.
const Format = "dlroute-bundle/v1"

// ManifestPath is the archive member that holds the manifest, first in
// the archive: a signed note (golang.org/x/mod/sumdb/note) whose text is
// the manifest's JSON, or the JSON alone when the bundle is not signed.
const ManifestPath = ".manifest"

// Manifest says what a bundle holds: the rule-set versions, a revision, a
// sequence, and the size and SHA-256 digest of every file. It is what a
// signature covers, so a signed manifest vouches for every byte of the
// rules and for its place in the order of bundles.
type Manifest struct {
	Format   string `json:"format"`
	Revision string `json:"revision"`
	// Sequence orders the bundles of one signer: a host refuses a bundle
	// whose Sequence is lower than the one in force (package live). 0, and
	// a manifest without the field, means unordered: older than any
	// sequenced bundle. A manifest with Sequence 0 has no "sequence" field,
	// so that readers from before the field read it.
	Sequence uint64   `json:"sequence,omitempty"`
	RuleSets []string `json:"rulesets"` // "name@version", sorted
	Files    []File   `json:"files"`    // sorted by path
	// Plans is plans.bin (PlansPath): the plan of every version in
	// RuleSets, which hosts that decide with the decision module load.
	// nil, and a manifest without the field, means the bundle carries no
	// plans: a bundle from before it, which reads as it did.
	Plans *File `json:"plans,omitempty"`
}

// File is one file of a bundle, as the manifest lists it.
type File struct {
	Path   string `json:"path"` // "<name>/<version>/<file>"
	Size   int64  `json:"size"`
	SHA256 string `json:"sha256"` // lower-case hex
}

// MaxRevisionLen is the longest revision a manifest may carry.
const MaxRevisionLen = 128

// CheckRevision reports whether s can be a revision: 1 to MaxRevisionLen
// characters from [A-Za-z0-9._:+@/-], so that a git commit, a date or a
// semantic version fits, and a revision can be printed anywhere (a log
// line, a header, a metric label) without quoting.
func CheckRevision(s string) error {
	if s == "" || len(s) > MaxRevisionLen {
		return errorf(CodeBadRevision, "", "a revision is 1 to %d characters, not %d", MaxRevisionLen, len(s))
	}
	for _, c := range s {
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || strings.ContainsRune("._:+@/-", c)) {
			return errorf(CodeBadRevision, "", "revision %q has %q; a revision uses only [A-Za-z0-9._:+@/-]", s, c)
		}
	}
	return nil
}

// ContentRevision is the revision a bundle gets when none is given: the
// first 16 hex digits of the SHA-256 of its file list, one
// "<sha256>  <path>\n" line per file as sha256sum writes it. Equal rules
// give equal revisions, and any change to a file gives a new one.
func ContentRevision(files []File) string {
	h := sha256.New()
	for _, f := range files {
		fmt.Fprintf(h, "%s  %s\n", f.SHA256, f.Path)
	}
	return hex.EncodeToString(h.Sum(nil))[:16]
}

// text is the manifest as a note's text: indented JSON, no blank line,
// ending in a newline.
func (m *Manifest) text() []byte {
	b, _ := json.MarshalIndent(m, "", "  ")
	return append(b, '\n')
}

// parseManifest reads a manifest's JSON strictly and checks it is
// coherent: the format, the revision, paths that are sorted and unique,
// digests that are digests, and rule sets that are the files' folders.
func parseManifest(text []byte) (*Manifest, error) {
	var probe struct {
		Format string `json:"format"`
	}
	if err := json.Unmarshal(text, &probe); err != nil {
		return nil, &Error{Code: CodeManifest, Path: ManifestPath, Message: "the manifest is not JSON: " + err.Error(), err: err}
	}
	if probe.Format != Format {
		return nil, errorf(CodeManifest, ManifestPath, "the manifest's format is %q; this reader knows %q", probe.Format, Format)
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(text))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, &Error{Code: CodeManifest, Path: ManifestPath, Message: "the manifest does not decode: " + err.Error(), err: err}
	}
	if err := CheckRevision(m.Revision); err != nil {
		return nil, &Error{Code: CodeManifest, Path: ManifestPath, Message: err.Error(), err: err}
	}
	for i, f := range m.Files {
		if err := checkPath(f.Path); err != nil {
			return nil, errorf(CodeManifest, ManifestPath, "the manifest lists %q: %s", f.Path, err.Message)
		}
		if i > 0 && m.Files[i-1].Path >= f.Path {
			return nil, errorf(CodeManifest, ManifestPath, "the manifest's files are not sorted and unique at %s", f.Path)
		}
		if d, err := hex.DecodeString(f.SHA256); err != nil || len(d) != sha256.Size || strings.ToLower(f.SHA256) != f.SHA256 {
			return nil, errorf(CodeManifest, ManifestPath, "the manifest's sha256 of %s is not 64 lower-case hex digits", f.Path)
		}
		if f.Size < 0 || f.Size > MaxFileSize {
			return nil, errorf(CodeManifest, ManifestPath, "the manifest gives %s a size of %d", f.Path, f.Size)
		}
	}
	if p := m.Plans; p != nil {
		if p.Path != PlansPath {
			return nil, errorf(CodeManifest, ManifestPath, "the manifest lists plans at %q; a bundle's plans are %s", p.Path, PlansPath)
		}
		if d, err := hex.DecodeString(p.SHA256); err != nil || len(d) != sha256.Size || strings.ToLower(p.SHA256) != p.SHA256 {
			return nil, errorf(CodeManifest, ManifestPath, "the manifest's sha256 of %s is not 64 lower-case hex digits", p.Path)
		}
		if p.Size < 0 || p.Size > MaxPlansSize {
			return nil, errorf(CodeManifest, ManifestPath, "the manifest gives %s a size of %d", p.Path, p.Size)
		}
	}
	if want := ruleSetsOf(m.Files); !slices.Equal(m.RuleSets, want) {
		return nil, errorf(CodeManifest, ManifestPath, "the manifest lists rule sets %v; its files are %v", m.RuleSets, want)
	}
	return &m, nil
}

// ruleSetsOf returns "name@version" of every folder the files are in,
// sorted.
func ruleSetsOf(files []File) []string {
	out := []string{}
	for _, f := range files {
		dir := path.Dir(f.Path)
		ref := path.Dir(dir) + "@" + path.Base(dir)
		if !slices.Contains(out, ref) {
			out = append(out, ref)
		}
	}
	slices.Sort(out)
	return out
}

// checkPath reports whether p is a file of a rule-set version:
// "<name>/<version>/<file>", each part a plain name that does not start
// with a dot.
func checkPath(p string) *Error {
	parts := strings.Split(p, "/")
	if len(parts) != 3 {
		return errorf(CodeBadPath, p, "a bundle holds only <name>/<version>/<file> paths")
	}
	for _, part := range parts {
		if part == "" || part == "." || part == ".." || strings.HasPrefix(part, ".") || strings.ContainsAny(part, "\\:\x00") || len(part) > 255 {
			return errorf(CodeBadPath, p, "the path leaves its folder or has a part that is not a plain name")
		}
	}
	return nil
}
