#!/usr/bin/env node
// examples/node/example.js: dyng from Node.js, with the `sqlite3` package
// (Debian: apt-get install nodejs node-sqlite3; npm: npm install sqlite3).
//
//     node examples/node/example.js [path/to/dyng]
//
// The graph is the quickstart's five roads, as in examples/python/.
'use strict';
const sqlite3 = require('sqlite3');

const ext = process.argv[2] || './dyng';
const db = new sqlite3.Database(':memory:');

// node-sqlite3 answers through callbacks; these make them awaitable.
const run = (sql, ...args) => new Promise((ok, fail) => db.run(sql, args, (e) => (e ? fail(e) : ok())));
const exec = (sql) => new Promise((ok, fail) => db.exec(sql, (e) => (e ? fail(e) : ok())));
const all = (sql, ...args) => new Promise((ok, fail) => db.all(sql, args, (e, rows) => (e ? fail(e) : ok(rows))));
const load = (path) => new Promise((ok, fail) => db.loadExtension(path, (e) => (e ? fail(e) : ok())));

async function route(src, dst, weight = 'length') {
  const rows = await all("SELECT node, agg_cost FROM dyng_path('net', ?, ?, ?) ORDER BY seq", src, dst, weight);
  return { nodes: rows.map((r) => r.node), cost: rows.length ? rows[rows.length - 1].agg_cost : null };
}

const show = (what, r) => console.log(`${what}: ${r.nodes.join(' ')} cost ${r.cost.toFixed(1)}`);

async function main() {
  await load(ext);
  await exec(`
    CREATE TABLE roads(src INTEGER NOT NULL, dst INTEGER NOT NULL, length REAL, minutes REAL);
    INSERT INTO roads VALUES (1,2,4,5),(2,3,1,9),(1,3,7,3),(3,4,2,2),(2,4,6,1);
    CREATE VIRTUAL TABLE net USING dyng(edges=roads, weights='length,minutes');
  `);
  show('route 1 -> 4 by length', await route(1, 4));
  show('route 1 -> 4 by minutes', await route(1, 4, 'minutes'));

  // Close a road: the next query sees it, through the kept tree.
  await run('DELETE FROM roads WHERE src = 3 AND dst = 4');
  show('after closing 3 -> 4', await route(1, 4));

  // Reopen it, and apply the change now instead of at the next query.
  await run('INSERT INTO roads VALUES (3, 4, 2, 2)');
  const [{ r }] = await all("SELECT dyng_update('net') AS r");
  const report = JSON.parse(r);
  console.log(`dyng_update: batches applied ${report.batches}, edges inserted ${report.inserted}`);
  const [{ c }] = await all('SELECT dyng_config() AS c');
  const config = JSON.parse(c);
  console.log('backend:', config.backend.name, '-', config.graphs[0].edges, 'edges');
  db.close();
}

main().catch((e) => {
  console.error(e.message);
  process.exit(1);
});
