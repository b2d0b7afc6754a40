"""Probe: the dlroute WebAssembly module under wasmtime-py, against libdlroute via ctypes.
The measurement behind python/RATIONALE.md's "Why does the Python package load a C
library, not the WebAssembly module?" (figures in BENCHMARKS.md). Setup, in
a scratch directory (it writes its caches beside the module):

  GOOS=wasip1 GOARCH=wasm go build -trimpath -buildmode=c-shared -o $DIR/dlroute.wasm ./wasm
  go build -buildmode=c-shared -o $DIR/libdlroute.so ./libdlroute
  python3 -m venv $DIR/venv && $DIR/venv/bin/pip install wasmtime==50.0.1
  DLROUTE_PROBE_DIR=$DIR $DIR/venv/bin/python python/bench/wasmtime_probe.py serialize

  python probe.py start {cold|cache|serialized|ctypes}   one fresh-process start (prints JSON)
  python probe.py bench-start MODE N                     N fresh processes; spawn -> first decision
  python probe.py serialize                              writes dlroute.cwasm (Module.serialize)
  python probe.py percall {wasm|wasm-fast|wasm-raw|ctypes} N      per-decision latency, repeated and unique inputs
  python probe.py fork                                   what a forked child can do with each
"""
import ctypes, json, os, pathlib, resource, statistics, struct, subprocess, sys, time, timeit

T0 = time.perf_counter()
HERE = pathlib.Path(os.environ.get("DLROUTE_PROBE_DIR", ".")).resolve()
WASM = HERE / "dlroute.wasm"
CWASM = HERE / "dlroute.cwasm"
RULES = pathlib.Path(__file__).resolve().parent.parent.parent / "rules"  # the checkout's rules/<name>/<version>/*.yaml
LIB = HERE / "libdlroute.so"
INPUT = b'{"platform":"gpu","platform_version":"cuda 12030","local_hardware_id":0}'
WANT = b'{"device_type":"kDLCUDA","device_type_code":2,"device_id":0,"rule":"gpu","ruleset":"jax@v3"}'
OK, TOO_SMALL = 0, 7


def rss_kib():
    d = {l.split(":")[0]: int(l.split()[1]) for l in open("/proc/self/status") if l.startswith(("VmRSS", "VmHWM", "VmSize"))}
    d["maxrss"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return d


def pack_rules(root=RULES):
    """The rules archive of wasm/ABI.md: u32 path len | path | u32 data len | data, sorted by path."""
    out = bytearray()
    for p in sorted(root.glob("*/*/*")):
        if p.is_file():
            name = p.relative_to(root).as_posix().encode()
            data = p.read_bytes()
            out += struct.pack("<I", len(name)) + name + struct.pack("<I", len(data)) + data
    return bytes(out)


class Wasm:
    """One instance of dlroute.wasm. fast=True moves bytes with ctypes.memmove at memory.data_ptr
    instead of Memory.write/read (same semantics, fewer Python-level calls)."""

    def __init__(self, mode="cold", fast=False):
        import wasmtime as wt
        t = {"import": time.perf_counter()}
        cfg = wt.Config()
        if mode == "cache":
            toml = HERE / "cache.toml"  # a cache under HERE, not ~/.cache
            toml.write_text(f'[cache]\ndirectory = "{HERE / "wt-cache"}"\n')
            cfg.cache = str(toml)
        self.engine = wt.Engine(cfg)
        if mode == "serialized":
            self.module = wt.Module.deserialize_file(self.engine, str(CWASM))
        else:
            self.module = wt.Module.from_file(self.engine, str(WASM))
        t["compile"] = time.perf_counter()
        self.store = wt.Store(self.engine)
        wasi = wt.WasiConfig()
        wasi.inherit_stderr()  # the Go runtime writes only a panic there
        self.store.set_wasi(wasi)
        linker = wt.Linker(self.engine)
        linker.define_wasi()
        i32 = wt.ValType.i32()
        # "no answer" statuses (ABI.md Imports): 2 = unavailable / no such buffer.
        linker.define_func("dlroute_host", "platform_version", wt.FuncType([i32] * 4, [i32]), lambda dev, buf, cap, len_out: 2)
        linker.define_func("dlroute_host", "copy_to_host", wt.FuncType([i32] * 2, [i32]), lambda buf, handle_out: 2)
        inst = linker.instantiate(self.store, self.module)
        ex = inst.exports(self.store)
        self.mem = ex["memory"]
        self.f = {n: ex[n] for n in ("_initialize", "dlroute_abi_version", "dlroute_alloc", "dlroute_free",
                                     "dlroute_load", "dlroute_ruleset", "dlroute_resolve_json")}
        t["instantiate"] = time.perf_counter()
        self.f["_initialize"](self.store)
        v = self.f["dlroute_abi_version"](self.store)
        assert v == 1, f"ABI version {v}"
        t["initialize"] = time.perf_counter()
        self.fast = fast
        self.in_cap = self.out_cap = 0
        self.inp = self.out = 0
        self._grow(1 << 16, 1 << 16)
        st, out = self.call("dlroute_load", pack_rules())
        assert st == OK and out == b"[]", (st, out)
        t["load"] = time.perf_counter()
        st, self.jax = self.call("dlroute_ruleset", b"jax")
        assert st == OK, st
        self.t = t

    def use_raw(self):
        """Calls dlroute_resolve_json through wasmtime_func_call_unchecked (the C API, reached through
        wasmtime-py's private ffi module) with one preallocated argument array: no per-call type checks."""
        from wasmtime import _ffi as ffi
        self.ffi = ffi
        self.raw_args = (ffi.wasmtime_val_raw_t * 5)()
        self.raw_func = ctypes.byref(self.f["dlroute_resolve_json"]._func)
        self.raw_ctx = self.store._context()
        self.fast = True

    def resolve_raw(self, line):
        ffi, a = self.ffi, self.raw_args
        n = len(line)
        if n > self.in_cap:
            self._grow(n, 0)
        while True:
            base = ctypes.addressof(self.mem.data_ptr(self.store).contents)
            ctypes.memmove(base + self.inp, line, n)
            a[0].i32, a[1].i32, a[2].i32, a[3].i32, a[4].i32 = self.jax, self.inp, n, self.out, self.out_cap
            trap = ctypes.POINTER(ffi.wasm_trap_t)()
            err = ffi.wasmtime_func_call_unchecked(self.raw_ctx, self.raw_func, a, 5, ctypes.byref(trap))
            if err or trap:
                raise RuntimeError("dlroute_resolve_json trapped or failed")
            r = a[0].i64 & 0xFFFFFFFFFFFFFFFF
            st, m = r >> 32, r & 0xFFFFFFFF
            if st == TOO_SMALL:
                self._grow(0, m)
                continue
            base = ctypes.addressof(self.mem.data_ptr(self.store).contents)
            return st, ctypes.string_at(base + self.out, m)

    def _grow(self, in_size, out_size):
        alloc, free = self.f["dlroute_alloc"], self.f["dlroute_free"]
        if in_size > self.in_cap:
            if self.inp:
                free(self.store, self.inp)
            self.inp, self.in_cap = alloc(self.store, in_size), in_size
            assert self.inp
        if out_size > self.out_cap:
            if self.out:
                free(self.store, self.out)
            self.out, self.out_cap = alloc(self.store, out_size), out_size
            assert self.out

    def _write(self, data):
        if self.fast:
            ctypes.memmove(ctypes.addressof(self.mem.data_ptr(self.store).contents) + self.inp, data, len(data))
        else:
            self.mem.write(self.store, data, self.inp)

    def _read(self, n):
        if self.fast:
            return ctypes.string_at(ctypes.addressof(self.mem.data_ptr(self.store).contents) + self.out, n)
        return bytes(self.mem.read(self.store, self.out, self.out + n))

    def call(self, name, data, *args):
        if len(data) > self.in_cap:
            self._grow(len(data), 0)
        self._write(data)
        f = self.f[name]
        while True:
            r = f(self.store, *args, self.inp, len(data), self.out, self.out_cap) & 0xFFFFFFFFFFFFFFFF
            st, n = r >> 32, r & 0xFFFFFFFF
            if st == TOO_SMALL:
                self._grow(0, n)
                continue
            if st == OK and name == "dlroute_ruleset":
                return st, n
            return st, self._read(n)

    def resolve_json(self, line):
        return self.call("dlroute_resolve_json", line, self.jax)


class Lib:
    """libdlroute through ctypes: the embedded rules (dlroute_open with path_len 0)."""

    def __init__(self, path=LIB):
        t = {"import": time.perf_counter()}
        self.lib = lib = ctypes.CDLL(str(path))
        sz, u64 = ctypes.c_size_t, ctypes.c_uint64
        P = ctypes.POINTER
        lib.dlroute_abi_version.restype = ctypes.c_uint32
        lib.dlroute_open.argtypes = [ctypes.c_char_p, sz, ctypes.c_char_p, sz, P(u64), ctypes.c_char_p, sz, P(sz)]
        lib.dlroute_ruleset.argtypes = [u64, ctypes.c_char_p, sz, P(u64), ctypes.c_char_p, sz, P(sz)]
        lib.dlroute_resolve_json.argtypes = [u64, ctypes.c_char_p, sz, ctypes.c_char_p, sz, P(sz)]
        t["compile"] = time.perf_counter()  # dlopen: the Go runtime starts here
        assert lib.dlroute_abi_version() == 1
        t["instantiate"] = t["initialize"] = time.perf_counter()
        self.cap = 1 << 16
        self.buf = ctypes.create_string_buffer(self.cap)
        self.n = sz()
        rules, rs = u64(), u64()
        st = lib.dlroute_open(None, 0, None, 0, ctypes.byref(rules), self.buf, self.cap, ctypes.byref(self.n))
        assert st == OK, (st, ctypes.string_at(self.buf, self.n.value))
        t["load"] = time.perf_counter()
        st = lib.dlroute_ruleset(rules.value, b"jax", 3, ctypes.byref(rs), self.buf, self.cap, ctypes.byref(self.n))
        assert st == OK, st
        self.jax = rs.value
        self.t = t

    def resolve_json(self, line):
        st = self.lib.dlroute_resolve_json(self.jax, line, len(line), self.buf, self.cap, ctypes.byref(self.n))
        return st, ctypes.string_at(self.buf, self.n.value)  # 64 KiB holds every output here (dlroute.h)


def make(mode, fast=False):
    return Lib() if mode == "ctypes" else Wasm(mode, fast)


def cmd_start(mode):
    e = make(mode)
    st, out = e.resolve_json(INPUT)
    assert st == OK and out == WANT, (st, out)
    t1 = time.perf_counter()
    print("FIRST", flush=True)  # bench-start stops its clock on this line
    t = e.t
    marks = ["import", "compile", "instantiate", "initialize", "load"]
    r = {"mode": mode, "in_process_ms": round((t1 - T0) * 1e3, 1)}
    prev = T0
    for m in marks:
        r[m + "_ms"] = round((t[m] - prev) * 1e3, 1)
        prev = t[m]
    r["ruleset+first_decision_ms"] = round((t1 - prev) * 1e3, 2)
    ru = resource.getrusage(resource.RUSAGE_SELF)
    r["cpu_user_s"], r["cpu_sys_s"] = round(ru.ru_utime, 2), round(ru.ru_stime, 2)
    r.update({k + "_kib": v for k, v in rss_kib().items()})
    print(json.dumps(r), flush=True)


def cmd_bench_start(mode, n):
    walls, rows = [], []
    for _ in range(n):
        load = os.getloadavg()[0]
        s = time.perf_counter()
        p = subprocess.Popen([sys.executable, __file__, "start", mode], stdout=subprocess.PIPE)
        assert p.stdout.readline() == b"FIRST\n"
        walls.append((time.perf_counter() - s) * 1e3)
        row = json.loads(p.stdout.readline())
        row["load1"] = load
        rows.append(row)
        p.wait()
    for r, w in zip(rows, walls):
        print(f"  wall {w:7.1f} ms  {json.dumps(r)}")
    print(f"{mode}: spawn->first decision ms median {statistics.median(walls):.1f} range {min(walls):.1f}-{max(walls):.1f} (n={n})")
    rss = [r["VmRSS_kib"] for r in rows]
    cpu = [r["cpu_user_s"] + r["cpu_sys_s"] for r in rows]
    print(f"{mode}: child CPU (user+sys) s median {statistics.median(cpu):.2f} range {min(cpu):.2f}-{max(cpu):.2f}")
    print(f"{mode}: VmRSS after first decision MiB median {statistics.median(rss)/1024:.1f} range {min(rss)/1024:.1f}-{max(rss)/1024:.1f}")


def cmd_serialize():
    import wasmtime as wt
    s = time.perf_counter()
    m = wt.Module.from_file(wt.Engine(wt.Config()), str(WASM))
    CWASM.write_bytes(m.serialize())
    print(f"serialized in {time.perf_counter()-s:.2f}s: {CWASM} {CWASM.stat().st_size} bytes")


def cmd_percall(mode, n):
    fast = mode == "wasm-fast"
    e = make("ctypes" if mode == "ctypes" else "serialized", fast)
    if mode == "wasm-raw":
        e.use_raw()
        e.resolve_json = e.resolve_raw
    st, out = e.resolve_json(INPUT)
    assert st == OK and out == WANT, (st, out)
    after_load = rss_kib()
    # unique inputs: a different local_hardware_id and version string in every line
    line = lambda i, k: b'{"platform":"gpu","platform_version":"cuda %d.%d","local_hardware_id":%d}' % (12030 + i, k, i)
    st, out = e.resolve_json(line(7, 99))
    assert st == OK and json.loads(out)["device_id"] == 7, (st, out)
    rep, uni, rep_cpu, uni_cpu = [], [], [], []
    for _ in range(5):
        c = time.process_time()  # CPU of every thread of the process: less sensitive to the load
        rep.append(timeit.timeit(lambda: e.resolve_json(INPUT), number=n) / n * 1e6)
        rep_cpu.append((time.process_time() - c) / n * 1e6)
    for k in range(5):
        lines = [line(i, k) for i in range(n)]  # built before the clock; no round repeats another's input
        c, s = time.process_time(), time.perf_counter()
        for l in lines:
            st, _ = e.resolve_json(l)
        uni.append((time.perf_counter() - s) / n * 1e6)
        uni_cpu.append((time.process_time() - c) / n * 1e6)
        assert st == OK
    fin = rss_kib()
    fmt = lambda xs: f"median {statistics.median(xs):.2f} us range {min(xs):.2f}-{max(xs):.2f}"
    print(f"{mode}: load1 {os.getloadavg()[0]:.2f}")
    print(f"{mode}: repeated input   per decision {fmt(rep)} (5 rounds x {n})")
    print(f"{mode}: unique inputs    per decision {fmt(uni)} (5 rounds x {n})")
    print(f"{mode}: repeated input   CPU per decision {fmt(rep_cpu)}")
    print(f"{mode}: unique inputs    CPU per decision {fmt(uni_cpu)}")
    print(f"{mode}: RSS after load+first decision {after_load}; after {10*n} decisions {fin}")


def cmd_fork():
    """Each engine loaded in the parent, then: a forked child decides with the parent's instance;
    for wasmtime also a child that compiles a fresh module (parallel compilation uses a thread pool)."""
    import signal

    def child(label, f):
        pid = os.fork()
        if pid == 0:
            try:
                r = f()
                print(f"  {label}: child got {r!r}", flush=True)
            except BaseException as ex:
                print(f"  {label}: child raised {type(ex).__name__}: {ex}", flush=True)
            os._exit(0)
        for _ in range(300):  # 30 s
            done, status = os.waitpid(pid, os.WNOHANG)
            if done:
                return
            time.sleep(0.1)
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        print(f"  {label}: child HUNG (killed after 30 s)", flush=True)

    lib = Lib()
    print("ctypes parent:", lib.resolve_json(INPUT)[0])
    child("ctypes, parent's handle", lambda: lib.resolve_json(INPUT))
    child("ctypes, dlroute_open again", lambda: Lib().jax)
    w = Wasm("cold")
    print("wasm parent:", w.resolve_json(INPUT)[0])
    child("wasm, parent's instance", lambda: w.resolve_json(INPUT))
    child("wasm, new instance of parent's Module", lambda: _fresh_instance(w))
    child("wasm, compile a fresh Module (parallel compilation)", lambda: Wasm("cold").resolve_json(INPUT))


def _fresh_instance(w):
    import wasmtime as wt
    x = Wasm.__new__(Wasm)
    # same steps as Wasm.__init__ but reusing the parent's compiled module
    x.engine, x.module = w.engine, w.module
    x.store = wt.Store(x.engine)
    x.store.set_wasi(wt.WasiConfig())
    linker = wt.Linker(x.engine)
    linker.define_wasi()
    i32 = wt.ValType.i32()
    linker.define_func("dlroute_host", "platform_version", wt.FuncType([i32] * 4, [i32]), lambda *a: 2)
    linker.define_func("dlroute_host", "copy_to_host", wt.FuncType([i32] * 2, [i32]), lambda *a: 2)
    ex = linker.instantiate(x.store, x.module).exports(x.store)
    x.mem = ex["memory"]
    x.f = {n: ex[n] for n in ("_initialize", "dlroute_alloc", "dlroute_free", "dlroute_load", "dlroute_ruleset", "dlroute_resolve_json")}
    x.f["_initialize"](x.store)
    x.fast, x.in_cap, x.out_cap, x.inp, x.out = False, 0, 0, 0, 0
    x._grow(1 << 16, 1 << 16)
    assert x.call("dlroute_load", pack_rules())[0] == OK
    x.jax = x.call("dlroute_ruleset", b"jax")[1]
    return x.resolve_json(INPUT)


if __name__ == "__main__":
    a = sys.argv[1:]
    {"start": lambda: cmd_start(a[1]),
     "bench-start": lambda: cmd_bench_start(a[1], int(a[2])),
     "serialize": cmd_serialize,
     "percall": lambda: cmd_percall(a[1], int(a[2])),
     "fork": cmd_fork}[a[0]]()
