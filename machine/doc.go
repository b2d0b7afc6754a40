// Package machine reads the machine dlroute runs on and moves its arrays'
// bytes: what JAX would report for each device (Probe, and
// PlatformVersion for a host that answers the module's
// platform_version question), and the copiers that carry an exchange's
// copy into host memory (HostCopier, and NewCUDACopier through the CUDA
// driver). It has no WebAssembly in it: package wasmhost hands what it
// reads to the module, and the command line's detect and exchange use it
// directly.
//
// # Probes
//
// Probe tries, in order, the ways a machine says what it has: the CUDA
// driver and NVML (loaded with purego, no cgo), /proc/driver/nvidia, the
// ROCm version file and amdgpu sysfs, Level Zero, and, when asked, an
// installed JAX. Each answers with devices or an Attempt that says why it
// did not, with a stable code (ProbeError). Everything a probe reads comes
// through an Env (a file system, a command runner, a library loader), so
// tests give fixed machines: testdata/machines holds files read from real
// ones.
//
// # Copiers
//
// A Copier copies a Buffer into host memory and returns a buffer the
// caller owns alone (DLPack's IS_COPIED). HostCopier copies memory the
// host can read already; the CUDA copier copies device memory with
// cuMemcpyDtoH and stands in for no real GPU in tests (cuda_gpu_test.go
// runs only where the driver is).
package machine
