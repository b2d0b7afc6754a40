// Package rootfs reads a rules directory without leaving it. A rules
// folder is often one that others can write to (a mounted ConfigMap, a
// folder that `serve --rules` watches), and a link in it may point
// anywhere: at a key, at another service's secrets. Open confines every
// read to the folder with os.Root, so a link, or a link's "..", that
// leads out of it is refused with CodeOutsideRoot before a byte is read;
// links that stay inside (a ConfigMap's ..data) are followed. Like
// engine.DirFS, it opens only folders and regular files, without
// blocking.
package rootfs

import (
	"errors"
	"io/fs"
	"os"
	"sync"

	"github.com/dlroute/dlroute/engine"
)

// CodeOutsideRoot is the code of an *engine.Error for a name that leads
// outside the rules folder: a link to an absolute path, or one whose ".."
// climbs out.
const CodeOutsideRoot engine.Code = "outside_root"

// OutsideHint is the hint of a CodeOutsideRoot error.
const OutsideHint = "rules are read only from inside the rules folder: copy the file in, or make the link point inside it"

// Open returns the folder dir as an fs.FS confined to it. The folder
// stays open until the FS is garbage: hold it only while reading.
func Open(dir string) (fs.FS, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	escapes.once.Do(func() { escapes.err = escapeError(root) })
	return rootFS{dir: dir, root: root, fsys: root.FS()}, nil
}

// IsOutside reports whether err is a CodeOutsideRoot error.
func IsOutside(err error) bool {
	var e *engine.Error
	return errors.As(err, &e) && e.Code == CodeOutsideRoot
}

type rootFS struct {
	dir  string
	root *os.Root
	fsys fs.FS // root.FS(): folders listed as it lists them
}

func (r rootFS) Open(name string) (fs.File, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrInvalid}
	}
	st, err := r.root.Stat(name)
	if err != nil {
		return nil, r.error("open", name, err)
	}
	if err := engine.RegularOrDir(name, st); err != nil {
		return nil, err
	}
	f, err := r.root.OpenFile(name, os.O_RDONLY|openNonblock, 0)
	if err != nil {
		return nil, r.error("open", name, err)
	}
	// The kind again, of what was opened: the file the Stat saw may have
	// been swapped since.
	if st, err = f.Stat(); err == nil {
		err = engine.RegularOrDir(name, st)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

func (r rootFS) Stat(name string) (fs.FileInfo, error) {
	st, err := fs.Stat(r.fsys, name)
	if err != nil {
		return nil, r.error("stat", name, err)
	}
	return st, nil
}

func (r rootFS) ReadDir(name string) ([]fs.DirEntry, error) {
	entries, err := fs.ReadDir(r.fsys, name)
	if err != nil {
		return entries, r.error("readdir", name, err)
	}
	return entries, nil
}

// error turns os.Root's refusal of a name that escapes into a
// CodeOutsideRoot error naming it, and passes any other error on.
func (r rootFS) error(op, name string, err error) error {
	var pe *fs.PathError
	if escapes.err != nil && errors.As(err, &pe) && errors.Is(pe.Err, escapes.err) {
		return &fs.PathError{Op: op, Path: name, Err: &engine.Error{Code: CodeOutsideRoot,
			Message: "it leads outside the rules folder " + r.dir, Hint: OutsideHint}}
	}
	return err
}

// escapes is the error os.Root gives a name that leads out of it, which
// the os package does not export: os.Root's own answer for "/", a name
// that escapes any root before anything on disk is looked at.
var escapes struct {
	once sync.Once
	err  error
}

func escapeError(root *os.Root) error {
	_, err := root.Stat("/")
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return nil
}
