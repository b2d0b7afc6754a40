// A WASI (wasi_snapshot_preview1) shim for the dlroute module in a page:
// what the Go wasip1 runtime calls, and nothing else. The module reads no
// files, sockets, arguments or environment; it needs clocks, randomness,
// somewhere to print a panic, and a way to wait. Every other import answers
// EBADF (a file descriptor call) or ENOSYS, as a runtime without that
// capability would. playground/RATIONALE.md says why the page runs the wasip1 module
// rather than a GOOS=js build.

const ESUCCESS = 0;
const EBADF = 8;
const EINVAL = 28;
const ENOSYS = 52;

const CLOCK_REALTIME = 0;
const EVENTTYPE_CLOCK = 0;
const FILETYPE_CHARACTER_DEVICE = 2;

// ExitError is thrown out of the module when it calls proc_exit: Go does
// that after a panic (printed to stderr first). The instance cannot be
// used after it.
export class ExitError extends Error {
  constructor(code) {
    super(`the module exited with status ${code}`);
    this.code = code;
  }
}

// createWASI returns the import object's wasi_snapshot_preview1 and a
// function to give it the instance's memory once instantiated. Lines the
// module prints go to print(fd, line).
export function createWASI(print = defaultPrint) {
  let memory = null;
  const view = () => new DataView(memory.buffer);
  const bytes = (ptr, len) => new Uint8Array(memory.buffer, ptr, len);
  const decoder = new TextDecoder();
  const pending = { 1: "", 2: "" };

  const now = (id) => {
    const ms = id === CLOCK_REALTIME ? performance.timeOrigin + performance.now() : performance.now();
    return BigInt(Math.round(ms * 1e6));
  };

  const imports = {
    args_sizes_get(argcPtr, bufSizePtr) {
      view().setUint32(argcPtr, 0, true);
      view().setUint32(bufSizePtr, 0, true);
      return ESUCCESS;
    },
    args_get: () => ESUCCESS,
    environ_sizes_get(countPtr, bufSizePtr) {
      view().setUint32(countPtr, 0, true);
      view().setUint32(bufSizePtr, 0, true);
      return ESUCCESS;
    },
    environ_get: () => ESUCCESS,

    clock_time_get(id, _precision, timePtr) {
      if (id > 3) return EINVAL;
      view().setBigUint64(timePtr, now(id), true);
      return ESUCCESS;
    },

    random_get(ptr, len) {
      // getRandomValues fills at most 64 KiB a call.
      for (let off = 0; off < len; off += 65536) {
        crypto.getRandomValues(bytes(ptr + off, Math.min(65536, len - off)));
      }
      return ESUCCESS;
    },

    fd_write(fd, iovs, iovsLen, nwrittenPtr) {
      if (fd !== 1 && fd !== 2) return EBADF;
      const dv = view();
      let n = 0;
      for (let i = 0; i < iovsLen; i++) {
        const ptr = dv.getUint32(iovs + 8 * i, true);
        const len = dv.getUint32(iovs + 8 * i + 4, true);
        pending[fd] += decoder.decode(bytes(ptr, len), { stream: true });
        n += len;
      }
      const lines = pending[fd].split("\n");
      pending[fd] = lines.pop();
      for (const line of lines) print(fd, line);
      dv.setUint32(nwrittenPtr, n, true);
      return ESUCCESS;
    },

    fd_fdstat_get(fd, statPtr) {
      if (fd > 2) return EBADF;
      const dv = view();
      for (let i = 0; i < 24; i += 8) dv.setBigUint64(statPtr + i, 0n, true);
      dv.setUint8(statPtr, FILETYPE_CHARACTER_DEVICE);
      return ESUCCESS;
    },

    // Go waits here when it has nothing to run until a timer fires. A
    // page cannot block, so every clock subscription is reported as due
    // at once: the runtime reads the clock and asks again if it was early.
    // The module never sleeps in a call, so this does not spin in practice.
    poll_oneoff(inPtr, outPtr, nsubs, neventsPtr) {
      const dv = view();
      let n = 0;
      for (let i = 0; i < nsubs; i++) {
        const sub = inPtr + 48 * i;
        const ev = outPtr + 32 * n;
        const type = dv.getUint8(sub + 8);
        dv.setBigUint64(ev, dv.getBigUint64(sub, true), true); // userdata
        dv.setUint16(ev + 8, type === EVENTTYPE_CLOCK ? ESUCCESS : EBADF, true);
        dv.setUint8(ev + 10, type);
        dv.setBigUint64(ev + 16, 0n, true);
        dv.setUint16(ev + 24, 0, true);
        n++;
      }
      dv.setUint32(neventsPtr, n, true);
      return ESUCCESS;
    },

    sched_yield: () => ESUCCESS,

    proc_exit(code) {
      throw new ExitError(code);
    },
  };

  // Files and sockets: the module has none.
  for (const name of ["fd_close", "fd_filestat_get", "fd_filestat_set_size", "fd_fdstat_set_flags", "fd_pread",
    "fd_pwrite", "fd_read", "fd_readdir", "fd_seek", "fd_sync", "fd_prestat_get", "fd_prestat_dir_name",
    "sock_accept", "sock_shutdown", "sock_recv", "sock_send"]) {
    imports[name] = () => EBADF;
  }
  for (const name of ["path_open", "path_filestat_get", "path_create_directory", "path_readlink",
    "path_remove_directory", "path_rename", "path_unlink_file", "path_symlink", "path_link",
    "path_filestat_set_times", "fd_advise", "fd_allocate", "fd_datasync", "fd_filestat_set_times",
    "fd_renumber", "fd_tell", "fd_fdstat_set_rights", "proc_raise", "clock_res_get"]) {
    imports[name] = () => ENOSYS;
  }

  return {
    imports,
    setMemory(m) { memory = m; },
  };
}

function defaultPrint(fd, line) {
  (fd === 2 ? console.error : console.log)(`dlroute.wasm: ${line}`);
}
