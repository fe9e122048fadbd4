/**
 * CSV records as Go's encoding/csv reads them (the static token file's format): comma-separated,
 * fields optionally in double quotes with `""` for a quote, empty lines skipped, CRLF read as LF,
 * no comments. A quote inside an unquoted field, or an unterminated quoted field, is an error.
 */

export class CsvError extends Error {}

export function parseCsv(text: string): string[][] {
  const records: string[][] = [];
  const input = text.replace(/\r\n/g, '\n');
  let line = 1;
  let i = 0;
  while (i < input.length) {
    if (input[i] === '\n') { i++; line++; continue; } // empty line
    const record: string[] = [];
    const recordLine = line;
    for (;;) {
      let field = '';
      const column = i - input.lastIndexOf('\n', i - 1);
      if (input[i] === '"') {
        i++;
        for (;;) {
          if (i >= input.length) throw new CsvError(`record on line ${recordLine}; parse error on line ${line}, column ${column}: extraneous or missing " in quoted-field`);
          const c = input[i];
          if (c === '"') {
            if (input[i + 1] === '"') { field += '"'; i += 2; continue; }
            i++;
            break;
          }
          if (c === '\n') line++;
          field += c;
          i++;
        }
        if (i < input.length && input[i] !== ',' && input[i] !== '\n') {
          throw new CsvError(`parse error on line ${line}, column ${i - input.lastIndexOf('\n', i - 1)}: extraneous or missing " in quoted-field`);
        }
      } else {
        while (i < input.length && input[i] !== ',' && input[i] !== '\n') {
          if (input[i] === '"') throw new CsvError(`parse error on line ${line}, column ${i - input.lastIndexOf('\n', i - 1)}: bare " in non-quoted-field`);
          field += input[i];
          i++;
        }
      }
      record.push(field);
      if (i < input.length && input[i] === ',') { i++; continue; }
      if (i < input.length && input[i] === '\n') { i++; line++; }
      break;
    }
    records.push(record);
  }
  return records;
}
