// Reads Arrow IPC files with arrow-js (an Arrow implementation independent of Arrow Java) and
// prints, per file, what a consumer of Spindle's output relies on: rows, column types, the image
// column's extension name and shape, and a checksum of the image bytes and indices.
import { readFileSync } from 'node:fs';
import { tableFromIPC } from 'apache-arrow';

const out = [];
for (const file of process.argv.slice(2)) {
  const table = tableFromIPC(readFileSync(file));
  const image = table.schema.fields.find((f) => f.name === 'image');
  const ext = image.metadata.get('ARROW:extension:name');
  const meta = JSON.parse(image.metadata.get('ARROW:extension:metadata') || '{}');
  const column = table.getChild('image');
  let byteSum = 0n;
  for (const chunk of column.data) {
    const values = chunk.children[0].values; // Uint8Array of all pixels in this batch
    const start = chunk.offset * image.type.listSize;
    for (let i = start; i < start + chunk.length * image.type.listSize; i++) byteSum += BigInt(values[i]);
  }
  const indices = Array.from(table.getChild('index').toArray(), (v) => Number(v));
  out.push({
    file,
    rows: table.numRows,
    fields: table.schema.fields.map((f) => `${f.name}:${f.type}`),
    extension: ext,
    shape: meta.shape,
    dim_names: meta.dim_names,
    list_size: image.type.listSize,
    image_byte_sum: byteSum.toString(),
    indices,
    labels: Array.from(table.getChild('label').toArray()),
    keys: Array.from({ length: table.numRows }, (_, i) => table.getChild('key').get(i)),
  });
}
console.log(JSON.stringify(out));
