// Reads Arrow IPC files with arrow-js (an Arrow implementation independent of Arrow Java) and
// prints every column but `image` of every row, with the schema's field names and types: what a
// consumer of a preprocess output's extra fields (strings, numbers, lists) relies on.
import { readFileSync } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';

const plain = (v) =>
  typeof v === 'bigint' ? Number(v) : v && typeof v.toArray === 'function' ? Array.from(v.toArray(), plain)
    : v instanceof Uint8Array ? Array.from(v) : v;

const out = [];
for (const file of process.argv.slice(2)) {
  const table = tableFromIPC(readFileSync(file));
  const names = table.schema.fields.map((f) => f.name).filter((n) => n !== 'image');
  const rows = [];
  for (let i = 0; i < table.numRows; i++) {
    const row = {};
    for (const n of names) row[n] = plain(table.getChild(n).get(i));
    rows.push(row);
  }
  out.push({ file, fields: table.schema.fields.map((f) => `${f.name}:${f.type}`), rows });
}
console.log(JSON.stringify(out));
