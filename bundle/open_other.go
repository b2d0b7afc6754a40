//go:build !unix

package bundle

// openNonblock is 0 where there is no O_NONBLOCK; ReadArchive still
// refuses what is not a regular file before reading it.
const openNonblock = 0
