//go:build !js && !wasip1

package rootfs

import "syscall"

// openNonblock opens a named pipe without waiting for a writer.
const openNonblock = syscall.O_NONBLOCK
