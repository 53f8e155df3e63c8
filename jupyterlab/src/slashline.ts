// A slash line: `/server:prompt name=value other="two words"`, as the editor bridge reads it.
// A value may be quoted with " or '; inside quotes a backslash escapes the next character.

export interface ISlashArgument {
  name: string;
  value: string;
  /** column of the name's first character */
  start: number;
  /** column right after `=` */
  valueStart: number;
  /** column after the value (after the closing quote, if any) */
  end: number;
  closed: boolean;
}

export interface ISlashLine {
  indent: number;
  server: string;
  prompt: string;
  /** column after the command */
  commandEnd: number;
  arguments: ISlashArgument[];
}

const COMMAND = /^(\s*)\/([^\s:/]+):([^\s=]+)/;
const NEEDS_QUOTES = /[\s"'\\=]/;

/** The line read as a slash command, or null when it is not one. */
export function parseSlashLine(text: string): ISlashLine | null {
  const match = COMMAND.exec(text);
  if (!match) {
    return null;
  }
  const line: ISlashLine = {
    indent: match[1].length,
    server: match[2],
    prompt: match[3],
    commandEnd: match[0].length,
    arguments: []
  };
  let pos = line.commandEnd;
  while (pos < text.length) {
    while (pos < text.length && /\s/.test(text[pos])) {
      pos++;
    }
    if (pos >= text.length) {
      break;
    }
    const name = /^([A-Za-z_][\w.-]*)=/.exec(text.slice(pos));
    if (!name) {
      // Text after the command that is not an argument: skip the word.
      while (pos < text.length && !/\s/.test(text[pos])) {
        pos++;
      }
      continue;
    }
    const start = pos;
    const valueStart = pos + name[0].length;
    const [value, end, closed] = readValue(text, valueStart);
    line.arguments.push({ name: name[1], value, start, valueStart, end, closed });
    pos = end;
  }
  return line;
}

function readValue(text: string, pos: number): [string, number, boolean] {
  const quote = text[pos];
  if (quote === '"' || quote === "'") {
    let value = '';
    let i = pos + 1;
    while (i < text.length) {
      const ch = text[i];
      if (ch === '\\' && i + 1 < text.length) {
        value += text[i + 1];
        i += 2;
        continue;
      }
      if (ch === quote) {
        return [value, i + 1, true];
      }
      value += ch;
      i++;
    }
    return [value, i, false];
  }
  let end = pos;
  while (end < text.length && !/\s/.test(text[end])) {
    end++;
  }
  return [text.slice(pos, end), end, true];
}

/** A value as it must be written on a slash line (quoted when it needs to be). */
export function quoteValue(value: string): string {
  if (value && !NEEDS_QUOTES.test(value)) {
    return value;
  }
  return '"' + value.replace(/\\/g, '\\\\').replace(/"/g, '\\"') + '"';
}

/** The arguments of a line as a name → value map. */
export function argumentValues(line: ISlashLine): Record<string, string> {
  const values: Record<string, string> = {};
  for (const arg of line.arguments) {
    values[arg.name] = arg.value;
  }
  return values;
}
