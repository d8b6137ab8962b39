// The dsh JavaScript prelude: web-standard pieces the host provides to every
// plugin instance before its top level runs. It closes over the intrinsics it
// needs, so a script that later replaces globals cannot change its behaviour.
(function (global, setTimeout, clearTimeout) {
  "use strict";
  const freeze = Object.freeze, defineProperty = Object.defineProperty, assign = Object.assign, keys = Object.keys;
  const SIG = Symbol("dsh.signal");

  class AbortSignal {
    constructor(key) {
      if (key !== SIG) throw new TypeError("Illegal constructor");
      defineProperty(this, "_s", { value: { aborted: false, reason: undefined, listeners: [] } });
      this.onabort = null;
    }
    get aborted() { return this._s.aborted; }
    get reason() { return this._s.reason; }
    throwIfAborted() { if (this._s.aborted) throw this._s.reason; }
    addEventListener(type, fn, opts) {
      if (type !== "abort" || typeof fn !== "function") return;
      const once = !!(opts && typeof opts === "object" && opts.once);
      this._s.listeners.push({ fn, once });
    }
    removeEventListener(type, fn) {
      if (type !== "abort") return;
      const l = this._s.listeners;
      for (let i = 0; i < l.length; i++) if (l[i].fn === fn) { l.splice(i, 1); return; }
    }
    static abort(reason) { const c = new AbortController(); c.abort(reason); return c.signal; }
    static timeout(ms) {
      const c = new AbortController();
      setTimeout(() => c.abort(makeError("TimeoutError", "The operation timed out.")), ms);
      return c.signal;
    }
  }

  function makeError(name, message) {
    const e = new Error(message);
    e.name = name;
    return e;
  }

  function abortSignal(signal, reason) {
    const s = signal._s;
    if (s.aborted) return;
    s.aborted = true;
    s.reason = reason === undefined ? makeError("AbortError", "This operation was aborted") : reason;
    const event = freeze({ type: "abort", target: signal });
    const listeners = s.listeners.slice();
    s.listeners.length = 0;
    if (typeof signal.onabort === "function") {
      try { signal.onabort(event); } catch (e) { reportError(e); }
    }
    for (const l of listeners) {
      try { l.fn.call(signal, event); } catch (e) { reportError(e); }
    }
  }

  let reportError = function () {};

  class AbortController {
    constructor() { defineProperty(this, "signal", { value: new AbortSignal(SIG), enumerable: true }); }
    abort(reason) { abortSignal(this.signal, reason); }
  }

  defineProperty(global, "AbortController", { value: AbortController, writable: true, configurable: true });
  defineProperty(global, "AbortSignal", { value: AbortSignal, writable: true, configurable: true });

  // The host's side: make a controlled signal, abort it, report listener errors.
  return freeze({
    newController() { return new AbortController(); },
    abort(controller, message) { controller.abort(makeError("AbortError", message)); },
    isSignal(v) { return v instanceof AbortSignal; },
    // A host function's options as the Go side gets them: a copy without
    // signal and without members set to undefined (absent, as in JSON).
    hostOptions(o) {
      const c = assign({}, o);
      delete c.signal;
      const ks = keys(c);
      for (let i = 0; i < ks.length; i++) if (c[ks[i]] === undefined) delete c[ks[i]];
      return c;
    },
    onAbort(signal, fn) { if (signal._s.aborted) { fn(); return; } signal._s.listeners.push({ fn, once: true }); },
    setReporter(fn) { reportError = fn; },
  });
})
