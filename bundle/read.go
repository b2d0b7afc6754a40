package bundle

import (
	"archive/tar"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"
	"testing/fstest"

	"github.com/dlroute/dlroute/engine"
)

// Limits on what Read accepts. A bundle over any of them is refused with
// CodeTooLong before it is read further.
const (
	MaxArchiveSize  = 32 << 20               // the compressed archive, in bytes
	MaxUnpackedSize = 64 << 20               // every file together, unpacked
	MaxFiles        = 10_000                 // files in one bundle
	MaxFileSize     = engine.MaxRuleFileSize // one rule file, as engine.Load reads it
	MaxManifestSize = 4 << 20                // the manifest with its signatures
)

// ReadOptions configure Read. The zero value checks every digest and
// accepts a bundle signed or not.
type ReadOptions struct {
	// Keys are the public keys a bundle must be signed by, at least one of
	// them, each as GenerateKey writes it ("name+hash+key"). With none,
	// signatures are not checked.
	Keys []string
}

// Bundle is a bundle that Read has checked: every file is the one its
// manifest lists, and when keys were given the manifest is signed by one.
// It is immutable.
type Bundle struct {
	// Manifest is the manifest that the checks held against.
	Manifest Manifest
	// Digest is "sha256:" and the hex SHA-256 of the manifest's text: it
	// identifies the files and the revision together.
	Digest string
	// SignedBy names the keys whose signatures were verified, as
	// "name+hash"; empty when Read was given no keys.
	SignedBy []string

	files fstest.MapFS
	plans []byte // plans.bin, nil when the bundle carries none
}

// ReadFile reads the bundle in a file, as ReadArchive does, and checks it
// as Read does.
func ReadFile(path string, opts ReadOptions) (*Bundle, error) {
	data, err := ReadArchive(path)
	if err != nil {
		return nil, err
	}
	return Read(data, opts)
}

// ReadArchive returns the bytes of the bundle file at path, unchecked. It
// reads only a regular file (a link to one is followed), opened so that
// nothing can block (a named pipe, a device), and of at most
// MaxArchiveSize bytes by its size before any byte is read: anything else
// is CodeNotRegular or CodeTooLong, with Path set to path. A file that
// cannot be opened or read is the *fs.PathError.
func ReadArchive(path string) ([]byte, error) {
	f, err := os.OpenFile(path, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	st, err := f.Stat() // of what was opened, not of the name again
	if err != nil {
		return nil, err
	}
	if !st.Mode().IsRegular() {
		return nil, errorf(CodeNotRegular, path, "a bundle is a regular file; this is %s", engine.FileKind(st.Mode()))
	}
	if st.Size() > MaxArchiveSize {
		return nil, errorf(CodeTooLong, path, "the archive is %d bytes; the limit is %d", st.Size(), MaxArchiveSize)
	}
	// The size can grow between the stat and the read: the limit holds.
	data, err := io.ReadAll(io.LimitReader(f, MaxArchiveSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > MaxArchiveSize {
		return nil, errorf(CodeTooLong, path, "the archive grew past the limit of %d bytes as it was read", MaxArchiveSize)
	}
	return data, nil
}

// FS returns the rules as a rules directory, <name>/<version>/<file>,
// for engine.Load.
func (b *Bundle) FS() fs.FS { return b.files }

// Read checks a bundle and returns its rules. It is strict: a member that
// is not a file or folder, a path that is not <name>/<version>/<file>
// (absolute, with "..", with a backslash), a path twice, a truncated or
// damaged stream, data after the archive, a limit exceeded, a file whose
// size or SHA-256 differs from the manifest, a file the manifest does not
// list or a listed file that is absent: each is an *Error with its Code,
// and no Bundle. With opts.Keys, a manifest not signed by one of them is
// refused too (CodeUnsigned, CodeUnknownSigner, CodeBadSignature).
// A plans.bin (PlansPath) is checked as a file is, and must hold a plan
// for exactly the manifest's versions (CodePlansMismatch).
func Read(data []byte, opts ReadOptions) (*Bundle, error) {
	verifiers, err := parseKeys(opts.Keys)
	if err != nil {
		return nil, err
	}
	if len(data) > MaxArchiveSize {
		return nil, errorf(CodeTooLong, "", "the archive is %d bytes; the limit is %d", len(data), MaxArchiveSize)
	}
	raw, err := unpack(data)
	if err != nil {
		return nil, err
	}
	text, signedBy, err := openManifest(raw.manifest, verifiers)
	if err != nil {
		return nil, err
	}
	m, err := parseManifest(text)
	if err != nil {
		return nil, err
	}
	for _, f := range m.Files {
		body, ok := raw.files[f.Path]
		if !ok {
			return nil, errorf(CodeMissingFile, f.Path, "the manifest lists the file; the archive does not hold it")
		}
		sum := sha256.Sum256(body.Data)
		if got := hex.EncodeToString(sum[:]); got != f.SHA256 || int64(len(body.Data)) != f.Size {
			return nil, errorf(CodeDigest, f.Path, "the file's sha256 is %s (%d bytes); the manifest says %s (%d bytes)", got, len(body.Data), f.SHA256, f.Size)
		}
	}
	switch {
	case m.Plans != nil && raw.plans == nil:
		return nil, errorf(CodeMissingFile, PlansPath, "the manifest lists the plans; the archive does not hold them")
	case m.Plans == nil && raw.plans != nil:
		return nil, errorf(CodeUnlisted, PlansPath, "the archive holds plans the manifest does not list")
	case m.Plans != nil:
		sum := sha256.Sum256(raw.plans)
		if got := hex.EncodeToString(sum[:]); got != m.Plans.SHA256 || int64(len(raw.plans)) != m.Plans.Size {
			return nil, errorf(CodeDigest, PlansPath, "the plans' sha256 is %s (%d bytes); the manifest says %s (%d bytes)", got, len(raw.plans), m.Plans.SHA256, m.Plans.Size)
		}
		if err := checkPlansSet(raw.plans, m.RuleSets); err != nil {
			return nil, err
		}
	}
	if len(raw.files) != len(m.Files) {
		for _, name := range raw.order {
			if !m.lists(name) {
				return nil, errorf(CodeUnlisted, name, "the archive holds a file the manifest does not list")
			}
		}
	}
	sum := sha256.Sum256(text)
	return &Bundle{Manifest: *m, Digest: "sha256:" + hex.EncodeToString(sum[:]), SignedBy: signedBy, files: raw.files, plans: raw.plans}, nil
}

func (m *Manifest) lists(p string) bool {
	for _, f := range m.Files {
		if f.Path == p {
			return true
		}
	}
	return false
}

// members is an archive's content, before the manifest is checked.
type members struct {
	manifest []byte
	plans    []byte // PlansPath's member, nil without one
	files    fstest.MapFS
	order    []string
}

// unpack reads the archive's members within the limits.
func unpack(data []byte) (*members, error) {
	src := bytes.NewReader(data)
	zr, err := gzip.NewReader(src)
	if err != nil {
		if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
			return nil, &Error{Code: CodeTruncated, Message: "the archive ends inside its gzip header", err: err}
		}
		return nil, &Error{Code: CodeNotBundle, Message: "not a bundle: a bundle is a gzip-compressed tar archive", err: err}
	}
	zr.Multistream(false)
	// Headers and padding come on top of the files' bytes: allow a block
	// and a half per file.
	stream := &capped{r: zr, left: MaxUnpackedSize + (MaxFiles+1)*768 + MaxManifestSize}
	tr := tar.NewReader(stream)
	out := &members{files: fstest.MapFS{}}
	seen := map[string]bool{}
	var total int64
	for n := 0; ; n++ {
		hdr, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, streamError(err, "")
		}
		name := hdr.Name
		if seen[strings.TrimSuffix(name, "/")] {
			return nil, errorf(CodeDuplicate, name, "the archive holds the path twice")
		}
		seen[strings.TrimSuffix(name, "/")] = true
		switch {
		case n == 0 && name != ManifestPath:
			return nil, errorf(CodeManifest, name, "the first member of a bundle is its manifest, %s", ManifestPath)
		case name == ManifestPath:
			if hdr.Typeflag != tar.TypeReg {
				return nil, errorf(CodeNotRegular, name, "the manifest is not a regular file")
			}
			if hdr.Size > MaxManifestSize {
				return nil, errorf(CodeTooLong, name, "the manifest is %d bytes; the limit is %d", hdr.Size, MaxManifestSize)
			}
			if out.manifest, err = readMember(tr, hdr); err != nil {
				return nil, err
			}
			continue
		case name == PlansPath:
			if hdr.Typeflag != tar.TypeReg {
				return nil, errorf(CodeNotRegular, name, "the plans are not a regular file")
			}
			if hdr.Size > MaxPlansSize {
				return nil, errorf(CodeTooLong, name, "the plans are %d bytes; the limit is %d", hdr.Size, MaxPlansSize)
			}
			if total += hdr.Size; total > MaxUnpackedSize {
				return nil, errorf(CodeTooLong, name, "the files exceed a bundle's limits (%d files, %d bytes)", MaxFiles, MaxUnpackedSize)
			}
			if out.plans, err = readMember(tr, hdr); err != nil {
				return nil, err
			}
			continue
		case hdr.Typeflag == tar.TypeDir:
			if err := checkDir(name); err != nil {
				return nil, err
			}
			continue
		}
		body, err := readRulesFile(tr, hdr, name, len(out.order), &total)
		if err != nil {
			return nil, err
		}
		out.files[name] = &fstest.MapFile{Data: body, Mode: 0o444}
		out.order = append(out.order, name)
	}
	// The gzip trailer holds the checksum of everything above: read it.
	if _, err := io.Copy(io.Discard, stream); err != nil {
		return nil, streamError(err, "")
	}
	if src.Len() > 0 {
		return nil, errorf(CodeCorrupt, "", "%d bytes follow the archive", src.Len())
	}
	if out.manifest == nil {
		return nil, errorf(CodeManifest, ManifestPath, "the archive has no manifest")
	}
	return out, nil
}

// readRulesFile reads the member hdr as the rules file name, after the files
// before it (how many, and their total size so far, which it adds to):
// a path of a rules directory, a regular file, within a bundle's limits.
// Bundles and plain tars of rules (ReadTar) hold the same files.
func readRulesFile(tr *tar.Reader, hdr *tar.Header, name string, before int, total *int64) ([]byte, error) {
	if err := checkPath(name); err != nil {
		return nil, err
	}
	if hdr.Typeflag != tar.TypeReg {
		return nil, errorf(CodeNotRegular, name, "the member is a %s; rules are only files and folders", typeName(hdr.Typeflag))
	}
	if hdr.Size > MaxFileSize {
		return nil, errorf(CodeTooLong, name, "the file is %d bytes; the limit is %d", hdr.Size, MaxFileSize)
	}
	if *total += hdr.Size; *total > MaxUnpackedSize || before == MaxFiles {
		return nil, errorf(CodeTooLong, name, "the files exceed a bundle's limits (%d files, %d bytes)", MaxFiles, MaxUnpackedSize)
	}
	return readMember(tr, hdr)
}

func readMember(tr *tar.Reader, hdr *tar.Header) ([]byte, error) {
	body, err := io.ReadAll(tr)
	if err != nil {
		return nil, streamError(err, hdr.Name)
	}
	if int64(len(body)) != hdr.Size {
		return nil, errorf(CodeTruncated, hdr.Name, "the archive ends inside the file")
	}
	return body, nil
}

// checkDir accepts a folder entry of a rules directory: "jax/" or
// "jax/v3/".
func checkDir(name string) error {
	trimmed := strings.TrimSuffix(name, "/")
	if depth := strings.Count(trimmed, "/") + 1; depth > 2 || checkPath(trimmed+strings.Repeat("/x", 3-depth)) != nil {
		return errorf(CodeBadPath, name, "a bundle's folders are <name>/ and <name>/<version>/")
	}
	return nil
}

// streamError classifies an error from the gzip or tar reader.
func streamError(err error, member string) error {
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, errCapped):
		return errorf(CodeTooLong, member, "the archive unpacks to more than a bundle's limits")
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &Error{Code: CodeTruncated, Path: member, Message: "the archive is truncated", err: err}
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.Is(err, tar.ErrHeader), errors.As(err, &corrupt):
		return &Error{Code: CodeCorrupt, Path: member, Message: "the archive is damaged: " + err.Error(), err: err}
	}
	return &Error{Code: CodeCorrupt, Path: member, Message: err.Error(), err: err}
}

func typeName(t byte) string {
	switch t {
	case tar.TypeSymlink:
		return "symbolic link"
	case tar.TypeLink:
		return "hard link"
	case tar.TypeChar, tar.TypeBlock:
		return "device"
	case tar.TypeFifo:
		return "named pipe"
	}
	return fmt.Sprintf("tar entry of type %q", t)
}

var errCapped = errors.New("read limit reached")

// capped reads at most left bytes, then fails with errCapped, so that a
// gzip bomb stops at the limit and says so.
type capped struct {
	r    io.Reader
	left int64
}

func (c *capped) Read(p []byte) (int, error) {
	if c.left <= 0 {
		return 0, errCapped
	}
	if int64(len(p)) > c.left {
		p = p[:c.left]
	}
	n, err := c.r.Read(p)
	c.left -= int64(n)
	return n, err
}
