package bundle

import (
	"archive/tar"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"io/fs"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/note"

	"github.com/dlroute/dlroute/internal/fsutil/rootfs"
)

// BuildOptions configure Build. The zero value builds an unsigned bundle
// whose revision is its ContentRevision.
type BuildOptions struct {
	// Revision names the bundle, such as a git commit or a date; empty
	// means ContentRevision of the files. See CheckRevision.
	Revision string
	// Sequence is the manifest's Sequence; 0 leaves it unordered. Build
	// reads no clock, so that equal files and options give equal bytes:
	// `dlroute bundle build` gives it the time by default.
	Sequence uint64
	// SignerKeys sign the manifest, each a private key as GenerateKey
	// writes it ("PRIVATE+KEY+name+hash+key"). None leaves it unsigned.
	SignerKeys []string
	// Plans, when set, is the bundle's plans.bin (PlansPath): a set of
	// plans (plan.EncodeSet) with one for every version of fsys, which
	// the caller builds from the rules with the engine (`dlroute bundle
	// build`: live.BundlePlans). The manifest lists it with its size and
	// digest. A set of other versions is refused (CodePlansMismatch); that
	// each plan is its rules' is what a reader's gate checks. nil packs
	// no plans.
	Plans []byte
}

// Build packs a rules directory into a bundle written to w: a
// gzip-compressed tar archive whose first member is the manifest
// (ManifestPath), then the files <name>/<version>/<file> of fsys, sorted
// by path, then with opts.Plans the plans (PlansPath). fsys holds rule-set
// folders as a rules directory does (such as rules/); other files, and
// names that start with a dot, are left out. Links are followed. Equal
// files and options give equal bytes: no times, owners or modes but 0644
// are recorded.
//
// Build does not compile the rules: `dlroute bundle build` loads and tests
// them first, and every reader loads and tests them again before use.
func Build(w io.Writer, fsys fs.FS, opts BuildOptions) (*Manifest, error) {
	if opts.Revision != "" {
		if err := CheckRevision(opts.Revision); err != nil {
			return nil, err
		}
	}
	var signers []note.Signer
	for _, k := range opts.SignerKeys {
		s, err := note.NewSigner(strings.TrimSpace(k))
		if err != nil {
			return nil, &Error{Code: CodeBadKey, Message: "a signing key is not a private key in the signed-note format (PRIVATE+KEY+name+hash+key)", err: err}
		}
		signers = append(signers, s)
	}
	files, data, err := collect(fsys)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, errorf(CodeMissingFile, "", "no <name>/<version>/<file> files to pack")
	}
	m := &Manifest{Format: Format, Revision: opts.Revision, Sequence: opts.Sequence, RuleSets: ruleSetsOf(files), Files: files}
	if opts.Plans != nil {
		if len(opts.Plans) > MaxPlansSize {
			return nil, errorf(CodeTooLong, PlansPath, "the plans are %d bytes; the limit is %d", len(opts.Plans), MaxPlansSize)
		}
		if err := checkPlansSet(opts.Plans, m.RuleSets); err != nil {
			return nil, err
		}
		total := int64(len(opts.Plans))
		for _, f := range files {
			total += f.Size
		}
		if total > MaxUnpackedSize {
			return nil, errorf(CodeTooLong, PlansPath, "the rules and their plans exceed a bundle's limit of %d bytes", MaxUnpackedSize)
		}
		m.Plans = plansFile(opts.Plans)
	}
	if m.Revision == "" {
		m.Revision = ContentRevision(files)
	}
	manifest := m.text()
	if len(signers) > 0 {
		if manifest, err = note.Sign(&note.Note{Text: string(manifest)}, signers...); err != nil {
			return nil, err
		}
	}

	zw, _ := gzip.NewWriterLevel(w, gzip.BestCompression)
	tw := tar.NewWriter(zw)
	put := func(name string, body []byte) error {
		hdr := &tar.Header{Typeflag: tar.TypeReg, Name: name, Size: int64(len(body)), Mode: 0o644, ModTime: time.Unix(0, 0), Format: tar.FormatUSTAR}
		if !ustarHolds(name) {
			hdr.Format = tar.FormatPAX
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return err
		}
		_, err := tw.Write(body)
		return err
	}
	if err := put(ManifestPath, manifest); err != nil {
		return nil, err
	}
	for i, f := range files {
		if err := put(f.Path, data[i]); err != nil {
			return nil, err
		}
	}
	if opts.Plans != nil {
		if err := put(PlansPath, opts.Plans); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return m, nil
}

// ustarHolds reports whether a ustar header holds name: at most 100
// bytes of ASCII. A longer name, or one with any other character (a
// folder named with é or U+202E), is written with a PAX header, so that
// Build packs any folder and engine.Load judges its names (bad_name) as
// it does a folder's.
func ustarHolds(name string) bool {
	for i := 0; i < len(name); i++ {
		if name[i] >= utf8.RuneSelf {
			return false
		}
	}
	return len(name) <= 100
}

// collect reads every <name>/<version>/<file> of fsys, with its digest,
// sorted by path, within the limits a reader applies.
func collect(fsys fs.FS) ([]File, [][]byte, error) {
	var files []File
	var data [][]byte
	var total int64
	visible := func(dir string) ([]string, error) {
		entries, err := fs.ReadDir(fsys, dir)
		if err != nil {
			return nil, err
		}
		var out []string
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				out = append(out, path.Join(dir, e.Name()))
			}
		}
		return out, nil
	}
	// isDir follows links, as os.DirFS does; a link out of a folder that
	// keeps its reads inside (rootfs.Open) is an error, not a file to
	// leave out.
	var outside error
	isDir := func(p string) bool {
		st, err := fs.Stat(fsys, p)
		if rootfs.IsOutside(err) && outside == nil {
			outside = &Error{Code: CodeOutsideRoot, Path: p, Message: outsideMessage, err: err}
		}
		return err == nil && st.IsDir()
	}
	sets, err := visible(".")
	if err != nil {
		return nil, nil, &Error{Code: CodeMissingFile, Message: err.Error(), err: err}
	}
	for _, set := range sets {
		if !isDir(set) {
			if outside != nil {
				return nil, nil, outside
			}
			continue // rules/README.md, rules/rules.go
		}
		versions, err := visible(set)
		if err != nil {
			return nil, nil, &Error{Code: CodeMissingFile, Path: set, Message: err.Error(), err: err}
		}
		for _, version := range versions {
			if !isDir(version) {
				if outside != nil {
					return nil, nil, outside
				}
				continue
			}
			names, err := visible(version)
			if err != nil {
				return nil, nil, &Error{Code: CodeMissingFile, Path: version, Message: err.Error(), err: err}
			}
			for _, name := range names {
				if isDir(name) {
					continue
				}
				if e := checkPath(name); e != nil {
					return nil, nil, e
				}
				b, err := readFile(fsys, name)
				if err != nil {
					return nil, nil, err
				}
				if total += int64(len(b)); total > MaxUnpackedSize || len(files) == MaxFiles {
					return nil, nil, errorf(CodeTooLong, name, "the rules exceed a bundle's limits (%d files, %d bytes)", MaxFiles, MaxUnpackedSize)
				}
				sum := sha256.Sum256(b)
				files = append(files, File{Path: name, Size: int64(len(b)), SHA256: hex.EncodeToString(sum[:])})
				data = append(data, b)
			}
		}
	}
	// Sorted by the whole path: "a-b/v1/x" goes before "a/v1/x", which a
	// walk that sorts each folder would not give.
	order := make([]int, len(files))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(files[a].Path, files[b].Path) })
	sortedFiles, sortedData := make([]File, len(files)), make([][]byte, len(files))
	for i, j := range order {
		sortedFiles[i], sortedData[i] = files[j], data[j]
	}
	return sortedFiles, sortedData, nil
}

const outsideMessage = "it leads outside the rules folder, and is not followed: copy the file in, or make the link point inside it"

func readFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := fsys.Open(name)
	if rootfs.IsOutside(err) {
		return nil, &Error{Code: CodeOutsideRoot, Path: name, Message: outsideMessage, err: err}
	}
	if err != nil {
		return nil, &Error{Code: CodeMissingFile, Path: name, Message: err.Error(), err: err}
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxFileSize+1))
	if err != nil {
		return nil, &Error{Code: CodeMissingFile, Path: name, Message: err.Error(), err: err}
	}
	if len(b) > MaxFileSize {
		return nil, errorf(CodeTooLong, name, "the file is larger than %d bytes", MaxFileSize)
	}
	return b, nil
}
