// `/` at the start of a line in Markdown cells and Markdown files: the prompt menu, tab stops for the
// required arguments, argument values from the server, render here / render below with a preview.
// A CodeMirror extension of the extension's own (its own trigger), offered to Markdown editors only.
import {
  Completion,
  CompletionContext,
  CompletionResult,
  acceptCompletion,
  autocompletion,
  clearSnippet,
  closeCompletion,
  completionStatus,
  nextSnippetField,
  prevSnippetField,
  snippet,
  snippetKeymap,
  startCompletion
} from '@codemirror/autocomplete';
import { Extension, Prec } from '@codemirror/state';
import { EditorView, ViewPlugin, keymap } from '@codemirror/view';
import { IPrompt, IRendered, IServer, PromptStore, complete, render } from './api';
import { el } from './form';
import { ISlashLine, argumentValues, parseSlashLine, quoteValue } from './slashline';

const TYPING_COMMAND = /^(\s*)(\/\S*)$/;
const TYPING_VALUE = /(?:^|\s)([A-Za-z_][\w.-]*)=("[^"]*|'[^']*|[^\s"']*)$/;
const PREVIEW_LIMIT = 6000;

function isMarkdownMime(mime: string): boolean {
  return /markdown|gfm/i.test(mime);
}

/** Cached renderings by server, prompt and arguments (the preview and the insertion share one). */
class Renderings {
  get(line: ISlashLine): Promise<IRendered> {
    const args = argumentValues(line);
    const key = JSON.stringify([line.server, line.prompt, args]);
    let found = this._cache.get(key);
    if (!found) {
      found = render(line.server, line.prompt, args);
      this._cache.set(key, found);
      found.catch(() => this._cache.delete(key));
      if (this._cache.size > 50) {
        const first = this._cache.keys().next().value;
        if (first !== undefined) {
          this._cache.delete(first);
        }
      }
    }
    return found;
  }
  private _cache = new Map<string, Promise<IRendered>>();
}

/** What the info panel shows for a prompt: its title, description and arguments. */
function promptInfo(server: IServer, prompt: IPrompt): Node {
  const box = el('div', 'jp-mcp-info');
  box.appendChild(el('div', 'jp-mcp-info-title', prompt.title || prompt.name));
  if (prompt.description) {
    box.appendChild(el('div', 'jp-mcp-info-description', prompt.description));
  }
  if (prompt.arguments.length) {
    const list = el('ul', 'jp-mcp-info-arguments');
    for (const arg of prompt.arguments) {
      const item = el('li', '');
      item.appendChild(el('code', '', arg.name + (arg.required ? '' : '?')));
      if (arg.description) {
        item.appendChild(document.createTextNode(' — ' + arg.description));
      }
      list.appendChild(item);
    }
    box.appendChild(list);
  }
  box.appendChild(el('div', 'jp-mcp-info-server', `from ${server.name}`));
  return box;
}

function previewNode(rendered: Promise<IRendered>, what: string): Promise<Node> {
  return rendered.then(
    result => {
      const box = el('div', 'jp-mcp-preview');
      box.appendChild(el('div', 'jp-mcp-preview-what', what));
      let text = result.markdown;
      if (text.length > PREVIEW_LIMIT) {
        text = text.slice(0, PREVIEW_LIMIT) + '\n…';
      }
      box.appendChild(el('pre', 'jp-mcp-preview-text', text));
      return box;
    },
    error => el('div', 'jp-mcp-preview jp-mcp-error', String(error.message ?? error))
  );
}

/** The snippet a prompt is written as: a tab stop for each required argument, then the end of the line. */
export function promptSnippet(server: string, prompt: IPrompt): string {
  const escape = (text: string) => text.replace(/[$#{}\\]/g, ch => '\\' + ch);
  let template = `/${escape(server)}:${escape(prompt.name)}`;
  let field = 1;
  for (const arg of prompt.arguments) {
    if (!arg.required) {
      continue;
    }
    const value = arg.default ? escape(quoteValue(arg.default)) : '';
    template += ` ${escape(arg.name)}=\${${field}:${value}}`;
    field++;
  }
  return template + ` \${${field}}`;
}

/** A server without prompts in the menu: its state in a word, what to do in the info panel beside it. */
function stateNote(server: IServer): [string, string] {
  switch (server.state) {
    case 'connecting':
      return ['connecting…', server.detail || 'Its prompts are listed as soon as it answers.'];
    case 'failed':
      return ['failed', server.detail || 'See the Jupyter server log.'];
    case 'not-trusted':
      return ['not trusted', server.detail || 'Trust its project file to start it.'];
    default:
      return [server.detail, server.detail];
  }
}

function stateInfo(server: IServer, text: string): Node {
  const box = el('div', 'jp-mcp-info');
  box.appendChild(el('div', 'jp-mcp-info-title', `${server.name}: ${stateNote(server)[0]}`));
  box.appendChild(el('div', 'jp-mcp-info-description', text));
  return box;
}

export class SlashCommands {
  constructor(private store: PromptStore) {
    store.changed.connect(() => this._refreshOpenMenu());
  }

  /** The extension for an editor whose model has `mimeType` (asked again on every `/`). */
  extension(mimeType: () => string): Extension {
    const source = (context: CompletionContext) =>
      isMarkdownMime(mimeType()) ? this._complete(context) : Promise.resolve(null);
    const track = this._views;
    return [
      autocompletion({
        override: [source],
        activateOnTyping: true,
        activateOnTypingDelay: 0,
        icons: false,
        tooltipClass: () => 'jp-mcp-menu',
        maxRenderedOptions: 200,
        // The menu opens only where it was asked for (a `/` starting a line, the end of a slash line, a tab
        // stop): keys go to it at once. (CodeMirror's default lets the first 75 ms of keys pass to the text,
        // so an ArrowDown pressed as the menu appears moved the cursor, or left the cell, instead.)
        interactionDelay: 0
      }),
      // JupyterLab lets the editor's keymap go before its own key bindings: while a tab stop is active Tab
      // goes to the next one and opens its menu; otherwise Tab accepts the selected item, or opens the menu
      // at the end of a slash line.
      snippetKeymap.of([
        { key: 'Tab', run: nextStop },
        { key: 'Shift-Tab', run: prevSnippetField },
        { key: 'Escape', run: clearSnippet }
      ]),
      Prec.highest(keymap.of([{ key: 'Tab', run: view => isMarkdownMime(mimeType()) && tab(view) }])),
      // Says which editors offer prompts (Markdown ones), for the curious and for the tests.
      EditorView.contentAttributes.of(() => (isMarkdownMime(mimeType()) ? { 'data-mcp-prompts': 'on' } : null)),
      ViewPlugin.fromClass(
        class {
          constructor(readonly view: EditorView) {
            track.add(view);
          }
          destroy() {
            track.delete(this.view);
          }
        }
      )
    ];
  }

  private _refreshOpenMenu(): void {
    for (const view of this._views) {
      if (completionStatus(view.state) === 'active' && view.hasFocus) {
        startCompletion(view);
      }
    }
  }

  private async _complete(context: CompletionContext): Promise<CompletionResult | null> {
    const line = context.state.doc.lineAt(context.pos);
    const before = line.text.slice(0, context.pos - line.from);
    const typing = TYPING_COMMAND.exec(before);
    if (typing && !typing[2].includes('=')) {
      return this._commands(context, line.from + typing[1].length);
    }
    const parsed = parseSlashLine(line.text);
    if (!parsed || before.length < parsed.commandEnd) {
      return null;
    }
    const prompt = this.store.find(parsed.server, parsed.prompt);
    if (!prompt) {
      return null;
    }
    const value = TYPING_VALUE.exec(before);
    if (value) {
      return this._values(context, parsed, prompt, value[1], value[2], line.from);
    }
    const atEnd = context.pos === line.to;
    if (atEnd && (context.explicit || /\s$/.test(before))) {
      return this._argumentsAndRender(context, parsed, prompt, line.text);
    }
    return null;
  }

  private async _commands(context: CompletionContext, from: number): Promise<CompletionResult> {
    if (this.store.lists.version < 0) {
      await this.store.ready;
    } else {
      // What is known now, at once; newer lists (a kernel that started serving) update the open menu.
      this.store.refreshSoon();
    }
    const options: Completion[] = [];
    for (const server of this.store.lists.servers) {
      if (server.state !== 'ready' && !server.prompts.length) {
        options.push({
          label: `/${server.name}:`,
          detail: stateNote(server)[0],
          info: () => stateInfo(server, stateNote(server)[1]),
          type: 'mcp-state',
          boost: -99,
          apply: () => undefined
        });
        continue;
      }
      for (const prompt of server.prompts) {
        if (prompt.magic && !this.store.magics) {
          continue; // a kernel's magics only when the `magics` setting asks for them
        }
        const template = promptSnippet(server.name, prompt);
        const insert = snippet(template);
        options.push({
          label: `/${server.name}:${prompt.name}`,
          detail: prompt.title && prompt.title !== prompt.name ? prompt.title : undefined,
          info: () => promptInfo(server, prompt),
          type: 'mcp-prompt',
          apply: (view, completion, start, end) => {
            insert(view, completion, start, end);
            // The first argument's values (or, without arguments, render here / below) at once.
            startCompletion(view);
          }
        });
      }
    }
    if (this.store.error && !options.length) {
      options.push({
        label: '/',
        detail: `prompts unavailable: ${this.store.error}`,
        type: 'mcp-state',
        apply: () => undefined
      });
    }
    return { from, options, validFor: /^\/[^\s]*$/ };
  }

  private async _values(
    context: CompletionContext,
    line: ISlashLine,
    prompt: IPrompt,
    argName: string,
    typed: string,
    lineFrom: number
  ): Promise<CompletionResult | null> {
    if (!prompt.arguments.some(a => a.name === argName)) {
      return null;
    }
    const partial = typed.replace(/^["']/, '');
    const others = argumentValues(line);
    delete others[argName];
    const from = context.pos - typed.length;
    const arg = line.arguments.find(a => lineFrom + a.valueStart === from);
    const to = arg ? Math.max(context.pos, lineFrom + arg.end) : context.pos;
    // No values (none offered, the server late or failing): an empty result, not null. Typed while the server
    // was asked, a key then asks again (the next value, or the menu after a space); a null here would leave the
    // menu waiting for a query that CodeMirror never starts, and a space after the value would open nothing.
    const none: CompletionResult = { from, to, options: [] };
    // Any key typed while the server is asked drops this query at once and asks for what the line is now:
    // a slow server's answer holds up nothing.
    context.addEventListener('abort', () => undefined, { onDocChange: true });
    let answer;
    try {
      answer = await complete(line.server, line.prompt, argName, partial, others);
    } catch {
      return none;
    }
    if (context.aborted || !answer.values.length) {
      return none;
    }
    return {
      from,
      to,
      options: answer.values.map((v, i) => ({ label: quoteValue(v), type: 'mcp-value', boost: -i })),
      validFor: answer.hasMore ? undefined : /^("[^"]*|'[^']*|[^\s"']*)$/,
      filter: true
    };
  }

  private _argumentsAndRender(
    context: CompletionContext,
    line: ISlashLine,
    prompt: IPrompt,
    text: string
  ): CompletionResult | null {
    const given = new Set(line.arguments.filter(a => a.value !== '').map(a => a.name));
    const written = new Set(line.arguments.map(a => a.name));
    const options: Completion[] = [];
    const missing = prompt.arguments.filter(a => a.required && !given.has(a.name));
    if (!missing.length) {
      const rendering = this._renderings.get(line);
      const command = `/${line.server}:${line.prompt}`;
      options.push(
        {
          label: 'Render here',
          detail: `${command}: the line becomes the prompt`,
          type: 'mcp-render',
          boost: 99,
          info: () => previewNode(rendering, 'Replaces the line with:'),
          apply: view => this._insertRendering(view, text, rendering, 'here')
        },
        {
          label: 'Render below',
          detail: `${command}: keeps the line, the prompt after it`,
          type: 'mcp-render',
          boost: 98,
          info: () => previewNode(rendering, 'Adds below the line:'),
          apply: view => this._insertRendering(view, text, rendering, 'below')
        }
      );
    }
    for (const arg of prompt.arguments) {
      if (!written.has(arg.name)) {
        options.push({
          label: `${arg.name}=`,
          detail: (arg.required ? 'required' : 'optional') + (arg.description ? ': ' + arg.description : ''),
          type: 'mcp-argument',
          boost: arg.required ? 50 : 0,
          apply: (view, completion, from, to) => {
            view.dispatch({
              changes: { from, to, insert: completion.label },
              selection: { anchor: from + completion.label.length },
              userEvent: 'input.complete'
            });
            startCompletion(view);
          }
        });
      }
    }
    if (!options.length) {
      return null;
    }
    // Typing an argument's name filters the list (render here / below drop out then).
    return { from: context.pos, options, validFor: /^[\w.-]*$/ };
  }

  private _insertRendering(
    view: EditorView,
    lineText: string,
    rendering: Promise<IRendered>,
    where: 'here' | 'below'
  ): void {
    const head = view.state.selection.main.head;
    const lineAt = view.state.doc.lineAt(head).number;
    void rendering.then(
      result => {
        // The line may have moved while the server rendered: find it again by its text.
        const doc = view.state.doc;
        let line = lineAt <= doc.lines ? doc.line(lineAt) : null;
        if (!line || line.text !== lineText) {
          line = null;
          for (let n = 1; n <= doc.lines; n++) {
            if (doc.line(n).text === lineText) {
              line = doc.line(n);
              break;
            }
          }
        }
        if (!line) {
          return;
        }
        const markdown = result.markdown.replace(/\s+$/, '');
        const insert = where === 'here' ? markdown : `${line.text.trimEnd()}\n\n${markdown}`;
        view.dispatch({
          changes: { from: line.from, to: line.to, insert },
          selection: { anchor: line.from + insert.length },
          userEvent: 'input.complete',
          scrollIntoView: true
        });
      },
      error => {
        console.warn('mcp-notebook: render failed', error);
      }
    );
  }

  private _renderings = new Renderings();
  private _views = new Set<EditorView>();
}

/** Tab in a tab stop: the next one, with its values (at the last stop, render here / render below). */
function nextStop(view: EditorView): boolean {
  if (completionStatus(view.state) === 'active') {
    return acceptCompletion(view);
  }
  // A query still under way belongs to the field left: drop it, or its answer would close the next menu.
  closeCompletion(view);
  if (!nextSnippetField(view)) {
    return false;
  }
  startCompletion(view);
  return true;
}

/** Tab outside tab stops: accept the selected item, or open the menu at the end of a slash line. */
function tab(view: EditorView): boolean {
  if (completionStatus(view.state) === 'active') {
    return acceptCompletion(view);
  }
  const { main } = view.state.selection;
  const line = view.state.doc.lineAt(main.head);
  if (main.empty && main.head === line.to && parseSlashLine(line.text)) {
    return startCompletion(view);
  }
  return false;
}
