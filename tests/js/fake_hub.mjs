// A stand-in for the Hugging Face hub on loopback, for tests/cli/test_cli_pull and the app's
// download tests (there is no internet in CI). It serves the routes and headers the real hub
// serves (docs/model-downloads.md), from files:
//   ROOT/<org>/<name>/<path>           the repositories' files
//   ROOT/hub.json                      {"gated": {"org/name": "granted-token"}, "corrupt": ["org/name/path"],
//                                        "interrupt": ["org/name/path"], "downloads": {"org/name": 123}}
// Routes (the "hub" port):
//   GET /api/models?search=Q&filter=gguf&limit=N    repositories whose id contains Q and hold a .gguf
//   GET /api/models/<org>/<name>/revision/<rev>?blobs=true   id, sha, gated, siblings (size, lfs.sha256)
//   GET|HEAD /<org>/<name>/resolve/<rev>/<path>      302 to the "cdn" port (another host:
//       localhost vs 127.0.0.1) with X-Repo-Commit, X-Linked-Etag ("<sha256>") and X-Linked-Size
// The "cdn" port serves GET /blob/<org>/<name>/<path> with Range (206), and for the files named in
// "interrupt" sends half the bytes of the first full request and drops the connection; for
// "corrupt" it serves bytes that differ from the announced SHA-256. Gated repositories answer
// 401 (X-Error-Code GatedRepo) without a token and 403 with another token than the granted one;
// a missing repository 401 RepoNotFound without a token, 404 with one; a missing file 404
// EntryNotFound. Every request is logged as a JSON line to ROOT/requests.log (method, port, url,
// range, authorization present). Prints {"hub": PORT, "cdn": PORT} on stdout once listening.
//   node fake_hub.mjs ROOT
import { createHash } from 'node:crypto';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as path from 'node:path';

const root = path.resolve(process.argv[2] || '.');
const settings = fs.existsSync(path.join(root, 'hub.json')) ? JSON.parse(fs.readFileSync(path.join(root, 'hub.json'), 'utf8')) : {};
const gated = settings.gated || {};
const corrupt = new Set(settings.corrupt || []);
const interrupt = new Set(settings.interrupt || []);
const interrupted = new Set();
const logFile = path.join(root, 'requests.log');
let cdnPort = 0;

function log(port, req) {
  fs.appendFileSync(logFile, JSON.stringify({
    port, method: req.method, url: req.url, range: req.headers.range || null,
    authorization: req.headers.authorization ? req.headers.authorization : null,
  }) + '\n');
}

function walk(dir, prefix = '') {
  const out = [];
  for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${e.name}` : e.name;
    if (e.isDirectory()) out.push(...walk(path.join(dir, e.name), rel));
    else if (!e.name.endsWith('.part')) out.push(rel);
  }
  return out.sort();
}

function repos() {
  const out = [];
  for (const org of fs.readdirSync(root, { withFileTypes: true })) {
    if (!org.isDirectory()) continue;
    for (const name of fs.readdirSync(path.join(root, org.name), { withFileTypes: true }))
      if (name.isDirectory()) out.push(`${org.name}/${name.name}`);
  }
  return out.sort();
}

const sha256 = (file) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');
const commitOf = (repo) => createHash('sha1').update(repo).digest('hex');

function error(res, status, code, message) {
  res.writeHead(status, { 'Content-Type': 'application/json', 'X-Error-Code': code, 'X-Error-Message': message });
  res.end(JSON.stringify({ error: message }));
}

// Checks the repository and the token; false (an answer sent) when the request may not go on.
function admit(req, res, repo) {
  const token = (req.headers.authorization || '').replace(/^Bearer /, '');
  if (!fs.existsSync(path.join(root, repo)) || !fs.statSync(path.join(root, repo)).isDirectory()) {
    if (!token) error(res, 401, 'RepoNotFound', 'Repository not found');
    else error(res, 404, 'RepoNotFound', 'Repository not found');
    return false;
  }
  if (repo in gated) {
    if (!token) {
      error(res, 401, 'GatedRepo', `Access to model ${repo} is restricted. You must have access to it and be authenticated to access it. Please log in.`);
      return false;
    }
    if (token !== gated[repo]) {
      error(res, 403, 'GatedRepo', `Access to model ${repo} is restricted and you are not in the authorized list.`);
      return false;
    }
  }
  return true;
}

const hub = http.createServer((req, res) => {
  log('hub', req);
  const url = new URL(req.url, 'http://x');
  let m;
  if (url.pathname === '/api/models') {
    const q = (url.searchParams.get('search') || '').toLowerCase();
    const limit = Number(url.searchParams.get('limit') || 20);
    const list = repos()
      .filter((r) => r.toLowerCase().includes(q) && walk(path.join(root, r)).some((f) => f.endsWith('.gguf')))
      .map((r) => ({ id: r, modelId: r, downloads: (settings.downloads || {})[r] || 0, likes: 0, gated: r in gated ? 'manual' : false }))
      .sort((a, b) => b.downloads - a.downloads)
      .slice(0, limit);
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify(list));
  }
  if ((m = url.pathname.match(/^\/api\/models\/([^/]+\/[^/]+)\/revision\/([^/]+)$/))) {
    const repo = decodeURIComponent(m[1]);
    if (!admit(req, res, repo)) return;
    if (m[2] !== 'main') return error(res, 404, 'RevisionNotFound', `Invalid rev id: ${m[2]}`);
    const siblings = walk(path.join(root, repo)).map((f) => {
      const full = path.join(root, repo, f);
      const size = fs.statSync(full).size;
      const s = { rfilename: f, size, blobId: createHash('sha1').update(f).digest('hex') };
      if (f.endsWith('.gguf') || f.endsWith('.safetensors')) s.lfs = { sha256: sha256(full), size, pointerSize: 134 };
      return s;
    });
    res.writeHead(200, { 'Content-Type': 'application/json' });
    return res.end(JSON.stringify({ id: repo, modelId: repo, sha: commitOf(repo), gated: repo in gated ? 'manual' : false, private: false, siblings }));
  }
  if ((m = url.pathname.match(/^\/([^/]+\/[^/]+)\/resolve\/([^/]+)\/(.+)$/))) {
    const repo = decodeURIComponent(m[1]);
    const file = decodeURIComponent(m[3]);
    if (!admit(req, res, repo)) return;
    const full = path.join(root, repo, file);
    if (!full.startsWith(path.join(root, repo) + path.sep) || !fs.existsSync(full))
      return error(res, 404, 'EntryNotFound', `${file} does not exist on "main"`);
    const size = fs.statSync(full).size;
    res.writeHead(302, {
      Location: `http://localhost:${cdnPort}/blob/${repo}/${encodeURIComponent(file)}?signature=x`,
      'X-Repo-Commit': commitOf(repo), 'X-Linked-Etag': `"${sha256(full)}"`, 'X-Linked-Size': String(size), 'Content-Length': '0',
    });
    return res.end();
  }
  error(res, 404, 'NotFound', 'no such route');
});

const cdn = http.createServer((req, res) => {
  log('cdn', req);
  const url = new URL(req.url, 'http://x');
  const m = url.pathname.match(/^\/blob\/([^/]+\/[^/]+)\/(.+)$/);
  if (!m) return error(res, 404, 'NotFound', 'no such blob');
  const key = `${decodeURIComponent(m[1])}/${decodeURIComponent(m[2])}`;
  const full = path.join(root, key);
  if (!fs.existsSync(full)) return error(res, 404, 'NotFound', 'no such blob');
  let data = fs.readFileSync(full);
  if (corrupt.has(key)) {
    data = Buffer.from(data);
    data[data.length >> 1] ^= 0xff;
  }
  let start = 0;
  const range = req.headers.range && req.headers.range.match(/^bytes=(\d+)-$/);
  if (range) start = Number(range[1]);
  if (start >= data.length && data.length > 0) {
    res.writeHead(416, { 'Content-Range': `bytes */${data.length}` });
    return res.end();
  }
  const body = data.subarray(start);
  const headers = { 'Content-Type': 'application/octet-stream', 'Content-Length': String(body.length), 'Accept-Ranges': 'bytes' };
  if (range) headers['Content-Range'] = `bytes ${start}-${data.length - 1}/${data.length}`;
  res.writeHead(range ? 206 : 200, headers);
  if (req.method === 'HEAD') return res.end();
  if (interrupt.has(key) && !interrupted.has(key) && !range) {
    interrupted.add(key);
    res.write(body.subarray(0, body.length >> 1), () => setTimeout(() => req.socket.destroy(), 50));
    return;
  }
  res.end(body);
});

hub.listen(0, '127.0.0.1', () => {
  cdn.listen(0, 'localhost', () => {
    cdnPort = cdn.address().port;
    process.stdout.write(JSON.stringify({ hub: hub.address().port, cdn: cdnPort }) + '\n');
  });
});
