package live

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/fsnotify/fsnotify"

	"github.com/dlroute/dlroute/bundle"
	"github.com/dlroute/dlroute/engine"
	"github.com/dlroute/dlroute/internal/fsutil/rootfs"
)

// Dir is a rules directory on disk, <name>/<version>/<file>, watched with
// fsnotify. Each check reads it whole into an unsigned bundle, so the
// rules in force never change under a request, whatever happens to the
// files next.
func Dir(path string) *DirSource { return &DirSource{path: filepath.Clean(path)} }

// DirSource is the Source that Dir returns; it is a Watcher.
type DirSource struct{ path string }

// String returns the directory's path.
func (d *DirSource) String() string { return d.path }

// Fetch offers the directory as it is now. Nothing outside it is read:
// a file or folder that leads outside (a link to an absolute path, or
// one whose ".." climbs out) is refused here with CodeOutsideRoot,
// before any file is opened (rootfs.Open). A file in a version folder
// that is not a regular file (or a link to one) is refused with
// CodeNotRegular: a named pipe would block the read of it, and with it
// every later check, and a device would never end. The candidate's Dir
// opens nothing else, without blocking and inside the directory, should
// one be swapped in after this look.
func (d *DirSource) Fetch(context.Context) (*Candidate, error) {
	st, err := os.Stat(d.path)
	if err == nil && !st.IsDir() {
		err = fmt.Errorf("%s is not a directory", d.path)
	}
	var fsys fs.FS
	if err == nil {
		fsys, err = rootfs.Open(d.path)
	}
	if err != nil {
		return nil, &SourceError{Code: CodeRead, Message: err.Error(), err: err}
	}
	if err := d.regularFiles(fsys); err != nil {
		return nil, err
	}
	return &Candidate{Origin: d.path, Dir: fsys}, nil
}

// regularFiles checks, without opening any, that every file of every
// version folder, <name>/<version>/<file>, is a regular file, following
// links as bundle.Build does, and that none of them, nor a folder above
// them, leads outside the directory. Hidden names are skipped, as Build
// skips them.
func (d *DirSource) regularFiles(fsys fs.FS) error {
	visible := func(dir string) []string {
		entries, _ := fs.ReadDir(fsys, dir)
		var out []string
		for _, e := range entries {
			if !strings.HasPrefix(e.Name(), ".") {
				out = append(out, path.Join(dir, e.Name()))
			}
		}
		return out
	}
	var outside error
	stat := func(name string) fs.FileInfo {
		st, err := fs.Stat(fsys, name)
		if rootfs.IsOutside(err) && outside == nil {
			outside = &SourceError{Code: CodeOutsideRoot, Message: fmt.Sprintf("%s leads outside %s; %s", filepath.Join(d.path, filepath.FromSlash(name)), d.path, rootfs.OutsideHint), err: err}
		}
		return st
	}
	isDir := func(name string) bool {
		st := stat(name)
		return st != nil && st.IsDir()
	}
	for _, set := range visible(".") {
		if !isDir(set) {
			continue
		}
		for _, version := range visible(set) {
			if !isDir(version) {
				continue
			}
			for _, file := range visible(version) {
				st := stat(file)
				if st == nil || st.IsDir() || st.Mode().IsRegular() {
					continue // gone, or a folder: what Build does with it
				}
				return &SourceError{Code: CodeNotRegular, Message: fmt.Sprintf("%s is %s, not a regular file; rule files are read only from regular files", filepath.Join(d.path, filepath.FromSlash(file)), engine.FileKind(st.Mode()))}
			}
		}
	}
	return outside
}

// Changes watches the directory, its rule-set folders and their version
// folders (fsnotify is not recursive), adding folders as they appear.
func (d *DirSource) Changes(ctx context.Context) (<-chan struct{}, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := d.watchTree(w); err != nil {
		w.Close()
		return nil, err
	}
	return forward(ctx, w, func(ev fsnotify.Event) bool {
		rel, err := filepath.Rel(d.path, ev.Name)
		if err != nil {
			return true
		}
		if depth := strings.Count(rel, string(filepath.Separator)) + 1; depth <= 2 && !ev.Has(fsnotify.Write) {
			d.watchTree(w) // a folder came or went, or a link was swapped
		}
		return true
	}), nil
}

// watchTree adds the directory and its folders two levels down, following
// links, as Kubernetes swaps a mounted ConfigMap's.
func (d *DirSource) watchTree(w *fsnotify.Watcher) error {
	if err := w.Add(d.path); err != nil {
		return err
	}
	sets, _ := os.ReadDir(d.path)
	for _, set := range sets {
		setPath := filepath.Join(d.path, set.Name())
		if !isDir(setPath) {
			continue
		}
		w.Add(setPath)
		versions, _ := os.ReadDir(setPath)
		for _, v := range versions {
			if vPath := filepath.Join(setPath, v.Name()); isDir(vPath) {
				w.Add(vPath)
			}
		}
	}
	return nil
}

func isDir(path string) bool {
	st, err := os.Stat(path)
	return err == nil && st.IsDir()
}

// File is a bundle file on disk, watched with fsnotify through its folder,
// so that a new bundle renamed over it is seen.
func File(path string) *FileSource { return &FileSource{path: filepath.Clean(path)} }

// FileSource is the Source that File returns; it is a Watcher.
type FileSource struct{ path string }

// String returns the file's path.
func (f *FileSource) String() string { return f.path }

// Fetch reads the bundle, within bundle.MaxArchiveSize.
func (f *FileSource) Fetch(context.Context) (*Candidate, error) {
	data, err := readLimited(f.path, bundle.MaxArchiveSize)
	if err != nil {
		return nil, err
	}
	return &Candidate{Origin: f.path, Archive: data}, nil
}

// Changes watches the file's folder for events on the file.
func (f *FileSource) Changes(ctx context.Context) (<-chan struct{}, error) {
	w, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	if err := w.Add(filepath.Dir(f.path)); err != nil {
		w.Close()
		return nil, err
	}
	return forward(ctx, w, func(ev fsnotify.Event) bool { return filepath.Clean(ev.Name) == f.path }), nil
}

// forward turns a watcher's events that pass keep into signals on a
// channel of one, closed with the watcher when ctx ends. A watcher error
// (such as an overflowed queue) is a signal too: a check costs little,
// and a missed change costs a stale rule set.
func forward(ctx context.Context, w *fsnotify.Watcher, keep func(fsnotify.Event) bool) <-chan struct{} {
	out := make(chan struct{}, 1)
	signal := func() {
		select {
		case out <- struct{}{}:
		default:
		}
	}
	go func() {
		defer close(out)
		defer w.Close()
		for {
			select {
			case <-ctx.Done():
				return
			case ev, ok := <-w.Events:
				if !ok {
					return
				}
				if ev.Op != fsnotify.Chmod && keep(ev) {
					signal()
				}
			case _, ok := <-w.Errors:
				if !ok {
					return
				}
				signal()
			}
		}
	}()
	return out
}
