// lockdeps.js KIND DIR reads DIR's lockfile with its package manager's own
// parser and prints, as a JSON array of "name@version", the direct
// dependencies of the project and of each workspace member that the lock
// resolves from outside the workspace (links to members left out). KIND is
// "yarn1" (@yarnpkg/lockfile), "berry" (@yarnpkg/parsers) or "pnpm"
// (js-yaml on pnpm-lock.yaml). The differential tests compare list_deps with
// it; it is written for the projects those tests generate.
'use strict';
const fs = require('fs');
const path = require('path');

const [kind, dir] = process.argv.slice(2);
const read = (p) => fs.readFileSync(path.join(dir, p), 'utf8');
const out = new Set();

// nameFromTarball reads the package name from a registry tarball URL
// ("http://host/@scope/name/-/name-1.0.0.tgz"), or returns undefined.
function nameFromTarball(u) {
  try {
    const p = decodeURIComponent(new URL(u).pathname).replace(/^\//, '');
    const i = p.indexOf('/-/');
    return i > 0 ? p.slice(0, i) : undefined;
  } catch (e) {
    return undefined;
  }
}

// splitIdent splits "name@rest" where name may be scoped.
function splitIdent(s) {
  const i = s.indexOf('@', 1);
  return i < 0 ? [s, ''] : [s.slice(0, i), s.slice(i + 1)];
}

// projects returns the package.json of the root and of the members its
// "workspaces" field names (patterns of the form "dir/*" or plain paths).
function projects() {
  const root = JSON.parse(read('package.json'));
  let pats = root.workspaces || [];
  if (!Array.isArray(pats)) pats = pats.packages || [];
  const list = [root];
  for (const pat of pats) {
    const dirs = pat.endsWith('/*')
      ? fs.readdirSync(path.join(dir, pat.slice(0, -2))).map((d) => path.join(pat.slice(0, -2), d))
      : [pat];
    for (const d of dirs) {
      const f = path.join(dir, d, 'package.json');
      if (fs.existsSync(f)) list.push(JSON.parse(fs.readFileSync(f, 'utf8')));
    }
  }
  return list;
}

const fields = ['dependencies', 'devDependencies', 'optionalDependencies'];

function yarn1() {
  const parsed = require('@yarnpkg/lockfile').parse(read('yarn.lock'));
  if (parsed.type !== 'success') throw new Error('yarn.lock: ' + parsed.type);
  const lock = parsed.object;
  const projs = projects();
  const members = new Set(projs.slice(1).map((p) => p.name));
  for (const p of projs) {
    for (const f of fields) {
      for (const [name, range] of Object.entries(p[f] || {})) {
        const e = lock[name + '@' + range];
        if (!e) {
          if (members.has(name)) continue; // yarn links the member
          throw new Error(`yarn.lock has no entry for ${name}@${range}`);
        }
        let real = nameFromTarball(e.resolved || '');
        if (!real && range.startsWith('npm:')) real = splitIdent(range.slice(4))[0];
        out.add((real || name) + '@' + e.version);
      }
    }
  }
}

function berry() {
  const lock = require('@yarnpkg/parsers').parseSyml(read('yarn.lock'));
  const byDescriptor = new Map();
  for (const [key, e] of Object.entries(lock)) {
    if (key === '__metadata') continue;
    for (const d of key.split(',')) byDescriptor.set(d.trim(), e);
  }
  for (const [key, e] of Object.entries(lock)) {
    if (key === '__metadata' || !String(e.resolution).includes('@workspace:')) continue;
    // A workspace's entry lists its dependencies (dev ones included) and,
    // apart, its peers, which yarn does not install for it.
    for (const [name, range] of Object.entries(e.dependencies || {})) {
      const t = byDescriptor.get(name + '@' + range);
      if (!t) throw new Error(`yarn.lock: ${key} depends on ${name}@${range}, which has no entry`);
      if (String(t.resolution).includes('@workspace:')) continue;
      out.add(splitIdent(t.resolution)[0] + '@' + t.version);
    }
  }
}

function pnpm() {
  const lock = require('js-yaml').load(read('pnpm-lock.yaml'));
  const importers = lock.importers || { '.': lock };
  const packages = lock.packages || {};
  for (const imp of Object.values(importers)) {
    for (const f of fields) {
      for (const [name, v] of Object.entries(imp[f] || {})) {
        let ver = typeof v === 'string' ? v : v.version;
        if (ver.startsWith('link:') || ver.startsWith('workspace:')) continue;
        ver = ver.replace(/\(.*$/, ''); // peer suffix, 6.0 and 9.0
        if (/^\d/.test(ver)) {
          out.add(name + '@' + ver.replace(/_.*$/, '')); // peer suffix, 5.4
          continue;
        }
        if (ver.startsWith('/')) {
          // 5.4 and 6.0 alias: "/left/1.1.0" or "/left@1.1.0".
          const s = ver.slice(1).replace(/_.*$/, '');
          const [n, r] = lock.lockfileVersion >= 6 || /^'?6/.test(String(lock.lockfileVersion)) ? splitIdent(s) : [s.slice(0, s.lastIndexOf('/')), s.slice(s.lastIndexOf('/') + 1)];
          out.add(n + '@' + r);
          continue;
        }
        const [n, r] = splitIdent(ver);
        if (r && /^\d/.test(r)) {
          out.add(n + '@' + r); // 9.0 alias: "left@1.1.0"
          continue;
        }
        // A tarball, git or file dependency: its package entry has the
        // name and version.
        const pkg = packages[ver] || packages[name + '@' + ver];
        if (!pkg || !pkg.version) throw new Error(`pnpm-lock.yaml: no package entry with a version for ${name}: ${ver}`);
        const key = packages[ver] ? ver : name + '@' + ver;
        out.add((pkg.name || splitIdent(key)[0]) + '@' + pkg.version);
      }
    }
  }
}

({ yarn1, berry, pnpm })[kind]();
console.log(JSON.stringify([...out].sort()));
