//go:build js || wasip1

package rootfs

// openNonblock is 0 where the system has no O_NONBLOCK; there the kind of
// the file is checked before it is opened, and again once it is open.
const openNonblock = 0
