//go:build js || wasip1

package engine

// openNonblock is 0 where the system has no O_NONBLOCK; there the kind of
// a file is still checked before and after it is opened.
const openNonblock = 0
