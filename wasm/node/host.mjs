// The host functions the module imports from "dlroute_host" (wasm/ABI.md,
// Imports): platform_version and copy_to_host. Like Go's wasmhost they
// never throw into the module: a JavaScript exception unwinding through
// the Go runtime inside it would leave the instance unusable. Every
// failure is a status, and every guest pointer is checked first.

import { HOST_FAILED, HOST_FAULT, HOST_OK, HOST_TOO_SMALL, HOST_UNAVAILABLE } from "./client.js";

const encoder = new TextEncoder();

/**
 * Buffers is the host's table of buffers the module names by handle: the
 * source of an exchange, and the copies copy_to_host makes. Handles start
 * at 1 and are never reused while the table lives.
 */
export class Buffers {
  #next = 1;
  #byHandle = new Map();
  /** Why the copy of a source failed, by the source's handle. */
  copyErrors = new Map();

  add(buffer) {
    const h = this.#next++;
    this.#byHandle.set(h, buffer);
    return h;
  }

  get(h) {
    return this.#byHandle.get(h);
  }

  /** The next handle add will give: a call's copies are the handles from here on. */
  get next() {
    return this.#next;
  }

  /** release drops every handle from first on, and returns them by handle. */
  release(first) {
    const out = new Map();
    for (const [h, b] of this.#byHandle) {
      if (h >= first) {
        out.set(h, b);
        this.#byHandle.delete(h);
        this.copyErrors.delete(h);
      }
    }
    return out;
  }
}

/**
 * hostImports returns the "dlroute_host" import object for an instance
 * whose memory memory() returns once it exists. host holds
 * platformVersion (a string, or a function of the device number that
 * returns one, or undefined for "unavailable"), copyToHost (ArrayBuffer ->
 * ArrayBuffer; null for a host with no copier) and buffers (a Buffers).
 */
export function hostImports(host, memory) {
  // inBounds reports whether [ptr, ptr+len) is inside the guest's memory.
  const inBounds = (ptr, len) => ptr + len <= memory().buffer.byteLength;

  function platformVersion(device, buf, bufCap, lenOut) {
    [buf, bufCap, lenOut] = [buf >>> 0, bufCap >>> 0, lenOut >>> 0];
    const pv = host.platformVersion;
    if (pv === undefined || pv === null) return HOST_UNAVAILABLE;
    if (device < 0) return HOST_FAILED;
    let version;
    try {
      version = typeof pv === "function" ? pv(device) : pv;
    } catch {
      return HOST_FAILED;
    }
    if (version === undefined || version === null) return HOST_UNAVAILABLE;
    if (typeof version !== "string") return HOST_FAILED;
    const bytes = encoder.encode(version);
    if (!inBounds(lenOut, 4)) return HOST_FAULT;
    new DataView(memory().buffer).setUint32(lenOut, bytes.length, true);
    if (bytes.length > bufCap) return HOST_TOO_SMALL;
    if (!inBounds(buf, bytes.length)) return HOST_FAULT;
    new Uint8Array(memory().buffer, buf, bytes.length).set(bytes);
    return HOST_OK;
  }

  function copyToHost(buffer, handleOut) {
    handleOut = handleOut >>> 0;
    if (typeof host.copyToHost !== "function") return HOST_UNAVAILABLE;
    if (!inBounds(handleOut, 4)) return HOST_FAULT; // first: a copy nobody can receive is not made
    const src = host.buffers.get(buffer >>> 0);
    if (src === undefined) return HOST_UNAVAILABLE;
    let copy;
    try {
      copy = host.copyToHost(src);
      if (!(copy instanceof ArrayBuffer)) throw new TypeError(`copyToHost returned ${Object.prototype.toString.call(copy)}; want an ArrayBuffer`);
    } catch (err) {
      host.buffers.copyErrors.set(buffer >>> 0, err);
      return HOST_FAILED;
    }
    new DataView(memory().buffer).setUint32(handleOut, host.buffers.add(copy), true);
    return HOST_OK;
  }

  return { platform_version: platformVersion, copy_to_host: copyToHost };
}

/** copyArrayBuffer is the default copyToHost: a new ArrayBuffer with the same bytes. */
export function copyArrayBuffer(src) {
  return src.slice(0);
}
