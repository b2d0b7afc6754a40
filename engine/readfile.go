package engine

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"reflect"
)

// Reading a rule file. A rules folder is often one that others can write
// to (a mounted ConfigMap, a folder that `serve --rules` watches), so
// nothing in it may cost more than its limit or stop a load: only a
// regular file (or a link to one) is read; its size is checked before a
// byte of it is; and on disk it is opened without blocking and checked
// again once open, so a named pipe, a device or a socket, even one
// swapped in between, is refused instead of waited on or read forever.

// DirFS returns the folder dir as an fs.FS, as os.DirFS does, except that
// Open opens only folders and regular files, following links as os.DirFS
// does. Anything else (a named pipe, a device, a socket, or a link to one)
// is refused with an *fs.PathError whose Err is an *Error with
// CodeNotRegular, without blocking: the file is opened with O_NONBLOCK,
// where the system has it, and its kind is checked again once it is open.
// Load reads an os.DirFS as it reads a DirFS; DirFS is for code that
// reads a rules folder through an fs.FS of its own, such as bundle.Build.
func DirFS(dir string) fs.FS { return dirFS{dir: dir, os: os.DirFS(dir)} }

// dirFS is what DirFS returns. It does not implement fs.ReadFileFS, so
// that fs.ReadFile goes through Open too.
type dirFS struct {
	dir string
	os  fs.FS // os.DirFS(dir): names are checked, and folders listed, as it does
}

func (d dirFS) Open(name string) (fs.File, error) {
	st, err := fs.Stat(d.os, name)
	if err != nil {
		return nil, err
	}
	if err := RegularOrDir(name, st); err != nil {
		return nil, err
	}
	return d.openChecked(name)
}

// openChecked opens name without blocking and checks the kind of what it
// opened: the file Open's Stat saw may have been swapped since.
func (d dirFS) openChecked(name string) (fs.File, error) {
	f, err := os.OpenFile(filepath.Join(d.dir, filepath.FromSlash(name)), os.O_RDONLY|openNonblock, 0)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: pe.Err}
		}
		return nil, err
	}
	st, err := f.Stat()
	if err == nil {
		err = RegularOrDir(name, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (d dirFS) Stat(name string) (fs.FileInfo, error) { return fs.Stat(d.os, name) }

func (d dirFS) ReadDir(name string) ([]fs.DirEntry, error) { return fs.ReadDir(d.os, name) }

// RegularOrDir is the refusal every reader of a rules folder gives a
// name that is neither a folder nor a regular file (st is what a Stat or
// an open file says of it): an *fs.PathError whose Err is an *Error with
// CodeNotRegular and a hint; nil for a folder or a regular file.
func RegularOrDir(name string, st fs.FileInfo) error {
	if st.IsDir() || st.Mode().IsRegular() {
		return nil
	}
	return &fs.PathError{Op: "open", Path: name, Err: &Error{Code: CodeNotRegular, Message: FileKind(st.Mode()) + ", not a regular file", Hint: notRegularHint}}
}

const notRegularHint = "rule files are read only from regular files (or links to them); remove it from the rules folder"

// FileKind names the kind of a file that is not regular, with its
// article: "a named pipe", "a folder", "a character device". Every
// refusal of a file that is not regular (rule files, bundles, a watched
// folder's files) says it in these words.
func FileKind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a device"
	case m&fs.ModeSymlink != 0:
		return "a link"
	}
	return fmt.Sprintf("a file of mode %v", m)
}

// osDirFSType is the type os.DirFS returns, so that Load can read one as
// a DirFS: the callers of Load pass os.DirFS, and its Open would wait on
// a named pipe for a writer that never comes.
var osDirFSType = reflect.TypeOf(os.DirFS("."))

func safeFS(fsys fs.FS) fs.FS {
	if reflect.TypeOf(fsys) == osDirFSType {
		if v := reflect.ValueOf(fsys); v.Kind() == reflect.String {
			return DirFS(v.String())
		}
	}
	return fsys
}

// readSource reads one file of a version: a regular file of at most
// MaxRuleFileSize bytes, its size checked before it is read, and then
// again by reading at most one byte more.
func readSource(fsys fs.FS, dir, name string, opts Options) (*sourceFile, *Error) {
	if p, ok := fsys.(*readFiles); ok && p.dir == dir {
		r := p.files[name]
		return r.f, r.err
	}
	display := path.Join(opts.root(), dir, name)
	at := &Position{File: display}
	fail := func(code Code, err error) *Error {
		e := &Error{Code: code, Message: err.Error(), Pos: at, err: err}
		var inner *Error
		if errors.As(err, &inner) {
			e.Code, e.Message, e.Hint = inner.Code, inner.Message, inner.Hint
		}
		if code == CodeMissingFile {
			e.Message = "the file is missing"
			e.Hint = fmt.Sprintf("every version directory holds %s, %s, %s and %s", ManifestFile, DeviceTypesFile, RulesFile, TestsFile)
		}
		return e
	}
	checked := func(st fs.FileInfo) *Error {
		if !st.Mode().IsRegular() {
			return &Error{Code: CodeNotRegular, Message: FileKind(st.Mode()) + ", not a regular file", Pos: at, Hint: notRegularHint}
		}
		if st.Size() > MaxRuleFileSize {
			return tooLarge(at, st.Size())
		}
		return nil
	}
	fsys = safeFS(fsys)
	name = path.Join(dir, name)
	st, err := fs.Stat(fsys, name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fail(CodeMissingFile, err)
	case err != nil:
		return nil, fail(CodeRead, err)
	}
	if e := checked(st); e != nil {
		return nil, e
	}
	f, err := fsys.Open(name)
	if err != nil {
		return nil, fail(CodeRead, err)
	}
	defer f.Close()
	if st, err = f.Stat(); err != nil {
		return nil, fail(CodeRead, err)
	}
	if e := checked(st); e != nil {
		return nil, e
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxRuleFileSize+1))
	if err != nil {
		return nil, fail(CodeRead, err)
	}
	if len(data) > MaxRuleFileSize {
		return nil, tooLarge(at, 0)
	}
	return newSourceFile(display, data), nil
}

// tooLarge refuses a file of size bytes (0: more than the limit, as read).
func tooLarge(at *Position, size int64) *Error {
	what := fmt.Sprintf("%d bytes", size)
	if size == 0 {
		what = "larger than that"
	}
	return &Error{Code: CodeTooLong, Message: fmt.Sprintf("the limit on a rule file is %d bytes (MaxRuleFileSize); this one is %s", MaxRuleFileSize, what), Pos: at}
}

// readFiles is the four files of one version as readSource read them,
// for loadVersion to compile: the bytes a version's sourceKey hashes are
// the bytes it is compiled from, each file read once.
type readFiles struct {
	fs.FS // the rules directory, for anything else
	dir   string
	files map[string]readFile
}

type readFile struct {
	f   *sourceFile
	err *Error
}

// readVersion reads the four files of dir.
func readVersion(fsys fs.FS, dir string, opts Options) *readFiles {
	p := &readFiles{FS: fsys, dir: dir, files: map[string]readFile{}}
	for _, name := range []string{ManifestFile, DeviceTypesFile, RulesFile, TestsFile} {
		f, err := readSource(fsys, dir, name, opts)
		p.files[name] = readFile{f, err}
	}
	return p
}

// ReadFile reads the file name of fsys as Load reads a rule file: only a
// regular file, checked before a byte is read and again once open, of at
// most MaxRuleFileSize bytes, and never by an open that can block (an
// os.DirFS is read as DirFS). Hosts that hand a rules directory on (the
// module's archive, the playground's rules.json, bundle build) read it so.
// Errors are an *Error with the file as its position: not_regular,
// too_long, missing_file or read_error.
func ReadFile(fsys fs.FS, name string) ([]byte, error) {
	f, err := readSource(fsys, path.Dir(name), path.Base(name), Options{Root: "."})
	if err != nil {
		if err.Code == CodeMissingFile {
			err.Hint = "" // the hint is about a version's four files
		}
		return nil, err
	}
	return []byte(f.text), nil
}
