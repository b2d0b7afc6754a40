//go:build unix

package bundle

import "syscall"

// openNonblock opens a named pipe without waiting for a writer, and a
// device without waiting for it, so that ReadArchive's fstat can refuse
// them. Reads of a regular file do not heed it.
const openNonblock = syscall.O_NONBLOCK
