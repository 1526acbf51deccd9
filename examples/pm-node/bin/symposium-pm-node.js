#!/usr/bin/env node
// symposium-pm-node: a Symposium package manager (PM) in plain Node.js.
//
// It serves a directory of plugins laid out as <dir>/<name>/<version>/, each
// version holding SYMPOSIUM.json (the plugin manifest as JSON, with the
// SYMPOSIUM.toml key spellings) or only a skills/ directory. It speaks the PM
// protocol v1: one JSON-RPC 2.0 message per line on stdin/stdout.
//
//   symposium-pm-node [--name NAME] [--dir DIR]
//
// The directory is --dir (relative to the workspace, the PM's working
// directory), else SYMPOSIUM_PM_NODE_DIR from initialize's env or from the
// process environment. Without one the registry is empty.
'use strict';

const fs = require('node:fs');
const path = require('node:path');

const PROTOCOL_VERSION = 1;
const SOFTWARE_VERSION = require('../package.json').version;

// Error codes of the protocol.
const E = {
  parse: -32700,
  invalidRequest: -32600,
  methodNotFound: -32601,
  invalidParams: -32602,
  internal: -32603,
  notInitialized: -32002,
  notFound: -32010,
  invalidContent: -32014,
  foreignId: -32015,
};

// stdout carries the protocol only: anything printed by mistake goes to stderr.
const out = process.stdout;
console.log = console.info = console.debug = console.error;
const log = (...args) => console.error('symposium-pm-node:', ...args);

// --- arguments -------------------------------------------------------------

function parseArgs(argv) {
  const opts = { name: 'node', dir: '' };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--version') {
      out.write(`symposium-pm-node ${SOFTWARE_VERSION}\n`);
      process.exit(0);
    } else if (a === '--help' || a === '-h') {
      out.write('usage: symposium-pm-node [--name NAME] [--dir DIR]\n');
      process.exit(0);
    } else if ((a === '--name' || a === '--dir') && i + 1 < argv.length) {
      opts[a.slice(2)] = argv[++i];
    } else {
      process.stderr.write(`symposium-pm-node: unknown argument ${JSON.stringify(a)}\n`);
      process.exit(2);
    }
  }
  return opts;
}

// --- versions (SemVer, with a few requirement operators) --------------------

const SEMVER = /^(0|[1-9]\d*)\.(0|[1-9]\d*)\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?$/;

function parseVersion(v) {
  const m = SEMVER.exec(v);
  return m && { nums: [+m[1], +m[2], +m[3]], pre: m[4] ? m[4].split('.') : [] };
}

function compare(a, b) {
  for (let i = 0; i < 3; i++) if (a.nums[i] !== b.nums[i]) return a.nums[i] < b.nums[i] ? -1 : 1;
  if (!a.pre.length || !b.pre.length) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    if (a.pre[i] === undefined) return -1;
    if (b.pre[i] === undefined) return 1;
    const x = /^\d+$/.test(a.pre[i]) ? +a.pre[i] : a.pre[i];
    const y = /^\d+$/.test(b.pre[i]) ? +b.pre[i] : b.pre[i];
    if (x === y) continue;
    if (typeof x !== typeof y) return typeof x === 'number' ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

// prefixCompare compares the first n numbers of v with those of r.
function prefixCompare(v, r, n) {
  for (let i = 0; i < n; i++) if (v.nums[i] !== r.nums[i]) return v.nums[i] < r.nums[i] ? -1 : 1;
  return 0;
}

const COMPARATOR = /^(\^|~|>=|<=|>|<|=)?v?(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(?:\.(0|[1-9]\d*)(?:-([0-9A-Za-z.-]+))?)?)?$/;

// matches reports whether version v meets requirement req, in npm's spirit:
// "*", or space-separated comparators that must all hold, each an operator
// (=, >, >=, <, <=, ^, ~; none means =) and a version that may be partial
// ("1", "1.2": the missing parts are free). Pre-releases only match a
// requirement naming one exactly. Returns null for a requirement it cannot
// read.
function matches(req, v) {
  if (req.trim() === '*' || req.trim() === '') return v.pre.length === 0;
  let exact = false;
  for (const part of req.trim().split(/\s+/)) {
    const m = COMPARATOR.exec(part);
    if (!m) return null;
    const op = m[1] || '=';
    const n = m[4] !== undefined ? 3 : m[3] !== undefined ? 2 : 1;
    const r = { nums: [+m[2], +(m[3] || 0), +(m[4] || 0)], pre: m[5] ? m[5].split('.') : [] };
    const c = n === 3 ? compare(v, r) : prefixCompare(v, r, n);
    const [maj, min] = r.nums;
    let ok;
    switch (op) {
      case '=': ok = c === 0; exact = exact || (ok && n === 3); break;
      case '>': ok = c > 0; break;
      case '>=': ok = c >= 0; break;
      case '<': ok = c < 0; break;
      case '<=': ok = c <= 0; break;
      case '~': ok = c >= 0 && prefixCompare(v, r, n === 1 ? 1 : 2) === 0; break;
      case '^': {
        // The leftmost non-zero part given must stay; the rest may grow.
        let keep = 1;
        if (maj === 0 && n >= 2) keep = min === 0 && n === 3 ? 3 : 2;
        ok = c >= 0 && prefixCompare(v, r, keep) === 0;
        break;
      }
    }
    if (!ok) return false;
  }
  return exact || v.pre.length === 0;
}

// --- the registry directory ------------------------------------------------

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

// entries lists the registry: [{name, versions: [{version, parsed, root}]}],
// versions sorted highest first. Read afresh on every call: it is small.
function entries(dir) {
  if (!dir) return [];
  let names;
  try {
    names = fs.readdirSync(dir, { withFileTypes: true });
  } catch (err) {
    log(`cannot read the registry ${dir}: ${err.message}`);
    return [];
  }
  const list = [];
  for (const d of names) {
    if (!d.isDirectory() || !NAME.test(d.name)) continue;
    const versions = [];
    let listing;
    try {
      listing = fs.readdirSync(path.join(dir, d.name), { withFileTypes: true });
    } catch (err) {
      log(`skipping ${d.name}: ${err.message}`);
      continue;
    }
    for (const v of listing) {
      const parsed = v.isDirectory() && parseVersion(v.name);
      if (!parsed) continue;
      versions.push({ version: v.name, parsed, root: fs.realpathSync(path.join(dir, d.name, v.name)) });
    }
    versions.sort((a, b) => compare(b.parsed, a.parsed));
    if (versions.length) list.push({ name: d.name, versions });
  }
  return list.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

// latest is an entry's highest release, else its highest pre-release.
function latest(e) {
  return e.versions.find((v) => v.parsed.pre.length === 0) || e.versions[0];
}

// manifest reads a version's manifest: SYMPOSIUM.json as it is (the host
// validates it), else a skills/ directory as a plugin named after the entry.
function manifest(name, root) {
  const file = path.join(root, 'SYMPOSIUM.json');
  if (fs.existsSync(file)) {
    const m = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (m && typeof m === 'object' && !Array.isArray(m) && m.name === undefined) m.name = name;
    return m;
  }
  if (fs.existsSync(path.join(root, 'skills'))) {
    return { name, skills: [{ source: { path: 'skills' } }] };
  }
  return null;
}

// --- the server ------------------------------------------------------------

class RpcError extends Error {
  constructor(code, message, data) {
    super(message);
    this.code = code;
    this.data = data;
  }
}

const isString = (x) => typeof x === 'string';
const isObject = (x) => x !== null && typeof x === 'object' && !Array.isArray(x);

function checkId(id, what) {
  if (!isObject(id) || !isString(id.pm) || !isString(id.name) || !isString(id.version)) {
    throw new RpcError(E.invalidParams, `${what} must be {pm, name, version}, all strings`);
  }
}

class Server {
  constructor(opts) {
    this.opts = opts;
    this.initialized = false;
    this.dir = '';
  }

  // offer describes one version, or null when it holds no plugin. A
  // SYMPOSIUM.json that is not JSON is invalid content (-32014).
  offer(e, v) {
    const id = { pm: this.opts.name, name: e.name, version: v.version };
    let m;
    try {
      m = manifest(e.name, v.root);
    } catch (err) {
      log(`${e.name}@${v.version}: ${err.message}`);
      const detail = `${path.join(v.root, 'SYMPOSIUM.json')} is not valid JSON`;
      throw new RpcError(E.invalidContent, `${e.name}@${v.version}: ${detail}`, { id, detail });
    }
    return m && { id, root: v.root, manifest: m };
  }

  // offerOrSkip is offer for listings: a broken entry is logged and left out,
  // so the others are still offered.
  offerOrSkip(e, v) {
    try {
      return this.offer(e, v);
    } catch (err) {
      log(`skipping ${err.message}`);
      return null;
    }
  }

  // resolve finds the highest version of id's entry meeting its requirement.
  resolve(id) {
    if (id.pm !== this.opts.name) {
      throw new RpcError(E.foreignId, `id ${id.pm}:${id.name} belongs to pm "${id.pm}", not "${this.opts.name}"`, { id });
    }
    if (!NAME.test(id.name)) {
      throw new RpcError(E.foreignId, `"${id.name}" is not a name in this registry`, { id });
    }
    const e = entries(this.dir).find((x) => x.name === id.name);
    if (!e) throw new RpcError(E.notFound, `no plugin named "${id.name}" in ${this.dir || 'the (empty) registry'}`, { id });
    for (const v of e.versions) {
      const ok = matches(id.version, v.parsed);
      if (ok === null) throw new RpcError(E.notFound, `"${id.version}" is not a version requirement this registry understands`, { id });
      if (ok) return { e, v };
    }
    throw new RpcError(E.notFound, `no version of "${id.name}" satisfies "${id.version}" (have ${e.versions.map((v) => v.version).join(', ')})`, { id });
  }

  initialize(p) {
    if (this.initialized) throw new RpcError(E.invalidRequest, 'already initialized');
    if (!isObject(p) || !Number.isInteger(p.protocol_version) || !isString(p.workspace) ||
        !isString(p.cache_dir) || (p.env !== undefined && !isObject(p.env))) {
      throw new RpcError(E.invalidParams, 'initialize needs {protocol_version: integer, workspace: string, cache_dir: string, env: object}');
    }
    const env = p.env || {};
    const dir = this.opts.dir || env.SYMPOSIUM_PM_NODE_DIR || process.env.SYMPOSIUM_PM_NODE_DIR || '';
    this.dir = dir && path.resolve(p.workspace || process.cwd(), dir);
    this.initialized = true;
    // A host asking for another version gets ours; it decides.
    return { protocol_version: PROTOCOL_VERSION, name: this.opts.name, capabilities: ['search'], version: SOFTWARE_VERSION };
  }

  active_plugins(p) {
    if (!isObject(p) || (p.deps !== undefined && !Array.isArray(p.deps))) {
      throw new RpcError(E.invalidParams, 'active_plugins needs {deps: [PackageId]}');
    }
    (p.deps || []).forEach((d, i) => checkId(d, `deps[${i}]`));
    // A registry offers every entry, at its highest version; deps do not matter.
    return entries(this.dir).map((e) => this.offerOrSkip(e, latest(e))).filter(Boolean);
  }

  load_plugin(p) {
    if (!isObject(p)) throw new RpcError(E.invalidParams, 'load_plugin needs {id}');
    checkId(p.id, 'id');
    const { e, v } = this.resolve(p.id);
    const o = this.offer(e, v);
    return o ? [o] : [];
  }

  fetch(p) {
    if (!isObject(p)) throw new RpcError(E.invalidParams, 'fetch needs {id, update}');
    checkId(p.id, 'id');
    if (!['none', 'check', 'fetch'].includes(p.update)) {
      throw new RpcError(E.invalidParams, 'update must be "none", "check" or "fetch"');
    }
    // Everything is local: every update level is served from the directory.
    const { e, v } = this.resolve(p.id);
    return { id: { pm: this.opts.name, name: e.name, version: v.version }, root: v.root };
  }

  search(p) {
    if (!isObject(p) || !isString(p.query)) throw new RpcError(E.invalidParams, 'search needs {query: string}');
    const q = p.query.toLowerCase();
    return entries(this.dir)
      .filter((e) => e.name.toLowerCase().includes(q))
      .map((e) => ({ id: { pm: this.opts.name, name: e.name, version: latest(e).version } }));
  }

  refresh(p) {
    if (!isObject(p) || !['none', 'check', 'fetch'].includes(p.update) ||
        (p.force !== undefined && typeof p.force !== 'boolean')) {
      throw new RpcError(E.invalidParams, 'refresh needs {update: "none"|"check"|"fetch", force: boolean}');
    }
    return { refreshed: false }; // no refresh capability: the directory is always current
  }

  list_deps() {
    return []; // no list_deps capability: a registry has no dependencies
  }

  workspace() {
    return { root: '', members: [] }; // no workspace capability
  }

  // invalid returns why msg is not a valid request, or ''. Valid: an object
  // with "jsonrpc":"2.0", a string method, an id that is a string or a
  // number (absent for a notification), params absent, null, an object or an
  // array.
  static invalid(msg) {
    if (!isObject(msg)) return 'a request is a JSON object';
    if (msg.id !== undefined && !isString(msg.id) && typeof msg.id !== 'number') return '"id" must be a string or a number';
    if (msg.jsonrpc !== '2.0') return '"jsonrpc" must be "2.0"';
    if (!isString(msg.method) || msg.method === '') return '"method" must be a non-empty string';
    if (msg.params !== undefined && msg.params !== null && typeof msg.params !== 'object') return '"params" must be an object or an array';
    return '';
  }

  // handle answers one parsed message; it returns the response, or null for
  // a notification (which the protocol does not define: it is ignored).
  handle(msg) {
    const validId = isObject(msg) && (isString(msg.id) || typeof msg.id === 'number');
    const fail = (code, message, data) => ({ jsonrpc: '2.0', id: validId ? msg.id : null,
      error: data === undefined ? { code, message } : { code, message, data } });
    const why = Server.invalid(msg);
    if (why) return fail(E.invalidRequest, `invalid request: ${why}`);
    if (msg.id === undefined) {
      log(`ignoring a notification for method ${JSON.stringify(msg.method)}`);
      return null;
    }
    const methods = ['initialize', 'active_plugins', 'load_plugin', 'fetch', 'search', 'refresh', 'list_deps', 'workspace'];
    try {
      if (!methods.includes(msg.method)) throw new RpcError(E.methodNotFound, `no method "${msg.method}"`);
      if (msg.method !== 'initialize' && !this.initialized) throw new RpcError(E.notInitialized, 'not initialized: send initialize first');
      const result = this[msg.method](msg.params === undefined || msg.params === null ? {} : msg.params);
      return { jsonrpc: '2.0', id: msg.id, result };
    } catch (err) {
      if (err instanceof RpcError) return fail(err.code, err.message, err.data);
      log(`${msg.method}: ${err.stack || err}`);
      return fail(E.internal, `${msg.method} failed: ${err.message}`);
    }
  }

  // handleBatch refuses a batch without running any of it: one -32600 per
  // element that expects an answer, in one array; nothing for a batch of
  // notifications; a single error for an empty batch.
  handleBatch(batch) {
    if (batch.length === 0) return { jsonrpc: '2.0', id: null, error: { code: E.invalidRequest, message: 'invalid request: an empty batch holds no request' } };
    const answers = [];
    batch.forEach((msg, i) => {
      const why = Server.invalid(msg);
      const validId = isObject(msg) && (isString(msg.id) || typeof msg.id === 'number');
      if (!why && !validId) return; // a notification
      const message = why ? `invalid request: batch element ${i + 1}: ${why}` :
        `invalid request: batches are not supported; send each request on its own line`;
      answers.push({ jsonrpc: '2.0', id: validId ? msg.id : null, error: { code: E.invalidRequest, message } });
    });
    return answers.length ? answers : null;
  }
}

// MAX_LINE is the longest request line read (64 MiB, the protocol's
// default); a longer one is skipped to its end, never held whole.
const MAX_LINE = 64 * 1024 * 1024;

// lines calls onLine with each line of stream as raw bytes (without the
// newline), or onLong for a line over MAX_LINE, then onEnd. Bytes, not text:
// a line that is not valid UTF-8 must be refused, not silently repaired.
function lines(stream, onLine, onLong, onEnd) {
  let pending = [];
  let size = 0;
  let long = false;
  const finish = () => {
    if (long) onLong();
    else onLine(Buffer.concat(pending));
    pending = [];
    size = 0;
    long = false;
  };
  const keep = (part) => {
    size += part.length;
    if (size - (part.length && part[part.length - 1] === 13 ? 1 : 0) > MAX_LINE) {
      long = true;
      pending = [];
    } else if (!long) {
      pending.push(part);
    }
  };
  stream.on('data', (chunk) => {
    let start = 0;
    for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, start)) {
      keep(chunk.subarray(start, i));
      finish();
      start = i + 1;
    }
    if (start < chunk.length) keep(chunk.subarray(start));
  });
  stream.on('end', () => {
    if (size > 0 || long) finish();
    onEnd();
  });
}

function main() {
  const server = new Server(parseArgs(process.argv.slice(2)));
  const utf8 = new TextDecoder('utf-8', { fatal: true });
  const parseError = (message) => out.write(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code: E.parse, message } }) + '\n');
  lines(process.stdin, (raw) => {
    let line;
    try {
      line = utf8.decode(raw);
    } catch (err) {
      parseError('parse error: the line is not valid UTF-8, so it is not JSON');
      return;
    }
    if (line.trim() === '') return;
    let msg;
    try {
      msg = JSON.parse(line);
    } catch (err) {
      log(`parse error: ${err.message}`);
      parseError('parse error: the line is not valid JSON');
      return;
    }
    const res = Array.isArray(msg) ? server.handleBatch(msg) : server.handle(msg);
    if (res) out.write(JSON.stringify(res) + '\n');
  }, () => {
    out.write(JSON.stringify({ jsonrpc: '2.0', id: null,
      error: { code: E.invalidRequest, message: `invalid request: the line is over the limit of ${MAX_LINE} bytes` } }) + '\n');
  }, () => {
    // End of input: every request read has been answered (handlers are
    // synchronous), so let the event loop drain stdout and exit 0.
    process.exitCode = 0;
  });
}

main();
