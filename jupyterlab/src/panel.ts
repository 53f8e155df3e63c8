// The prompts panel (left sidebar): every prompt the user can reach, with search and the same form as
// `%mcp form`; and, for the open notebook, which cells are published and its format warnings.
import { Clipboard } from '@jupyterlab/apputils';
import { INotebookTracker, NotebookPanel } from '@jupyterlab/notebook';
import { Widget } from '@lumino/widgets';
import { IPrompt, IServer, PromptStore, complete, notebookReport, render } from './api';

function el<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className = '',
  text?: string
): HTMLElementTagNameMap[K] {
  const node = document.createElement(tag);
  if (className) {
    node.className = className;
  }
  if (text !== undefined) {
    node.textContent = text;
  }
  return node;
}

const STATE_TEXT: Record<string, string> = {
  connecting: 'connecting…',
  failed: 'failed',
  'not-trusted': 'not trusted'
};

export class PromptsPanel extends Widget {
  constructor(
    private store: PromptStore,
    private notebooks: INotebookTracker
  ) {
    super();
    this.id = 'mcp-notebook-prompts';
    this.addClass('jp-mcp-panel');
    this.title.caption = 'MCP prompts';

    const header = el('div', 'jp-mcp-panel-header');
    header.appendChild(el('h2', 'jp-mcp-panel-title', 'MCP prompts'));
    this._search = el('input', 'jp-mcp-search jp-mod-styled');
    this._search.type = 'search';
    this._search.placeholder = 'Search prompts';
    this._search.setAttribute('aria-label', 'Search prompts');
    this._search.addEventListener('input', () => this._renderList());
    const refresh = el('button', 'jp-mcp-refresh jp-Button jp-mod-minimal', '↻');
    refresh.title = 'Ask the servers again';
    refresh.addEventListener('click', () => void this.store.refresh());
    header.appendChild(this._search);
    header.appendChild(refresh);
    this.node.appendChild(header);

    this._notebookBox = el('section', 'jp-mcp-notebook');
    this.node.appendChild(this._notebookBox);
    this._list = el('section', 'jp-mcp-list');
    this.node.appendChild(this._list);

    store.changed.connect(() => this._renderList());
    notebooks.currentChanged.connect(() => this._watchNotebook());
    this._watchNotebook();
    this._renderList();
  }

  /** The notebook report, asked again now (after a save, or when another notebook becomes current). */
  async refreshNotebook(): Promise<void> {
    const panel = this.notebooks.currentWidget;
    const box = this._notebookBox;
    box.textContent = '';
    if (!panel) {
      return;
    }
    const path = panel.context.path;
    box.appendChild(el('h3', 'jp-mcp-section-title', `This notebook: ${panel.context.localPath}`));
    const body = el('div', 'jp-mcp-notebook-body', 'Reading…');
    box.appendChild(body);
    try {
      const report = await notebookReport(path);
      if (this.notebooks.currentWidget !== panel) {
        return;
      }
      body.textContent = '';
      if (!report.prompts.length) {
        body.appendChild(
          el('p', 'jp-mcp-muted', 'No cell is published. Use "Publish as prompt" on a cell, then save.')
        );
      } else {
        body.appendChild(el('p', 'jp-mcp-muted', `Served as /${report.served_as}:… after its last save:`));
        const list = el('ul', 'jp-mcp-published');
        for (const prompt of report.prompts) {
          const item = el('li', 'jp-mcp-published-item');
          item.dataset.prompt = prompt.name;
          item.appendChild(el('code', '', `/${report.served_as}:${prompt.name}`));
          const extra = [prompt.kind !== 'prompt' ? prompt.kind : '', prompt.title || ''].filter(Boolean);
          if (extra.length) {
            item.appendChild(document.createTextNode(' ' + extra.join(' · ')));
          }
          list.appendChild(item);
        }
        body.appendChild(list);
      }
      for (const warning of report.warnings) {
        body.appendChild(el('p', 'jp-mcp-warning', `⚠ ${warning.message}`));
      }
    } catch (error) {
      body.textContent = '';
      body.appendChild(el('p', 'jp-mcp-error', String((error as Error).message ?? error)));
    }
  }

  private _watchNotebook(): void {
    if (this._watched) {
      this._watched.context.saveState.disconnect(this._onSave, this);
    }
    this._watched = this.notebooks.currentWidget;
    if (this._watched) {
      this._watched.context.saveState.connect(this._onSave, this);
      void this._watched.context.ready.then(() => this.refreshNotebook());
    } else {
      void this.refreshNotebook();
    }
  }

  private _onSave(_: unknown, state: string): void {
    if (state === 'completed') {
      void this.refreshNotebook();
      void this.store.refresh();
    }
  }

  private _renderList(): void {
    const query = this._search.value.trim().toLowerCase();
    const list = this._list;
    list.textContent = '';
    if (this.store.error && !this.store.lists.servers.length) {
      list.appendChild(el('p', 'jp-mcp-error', `Prompts unavailable: ${this.store.error}`));
      return;
    }
    if (this.store.lists.version < 0) {
      list.appendChild(el('p', 'jp-mcp-muted', 'Reading the prompt lists…'));
      return;
    }
    for (const server of this.store.lists.servers) {
      const prompts = server.prompts.filter(p => matches(server, p, query));
      if (query && !prompts.length) {
        continue;
      }
      const section = el('div', 'jp-mcp-server');
      section.dataset.server = server.name;
      const title = el('h3', 'jp-mcp-section-title', server.name);
      const state = STATE_TEXT[server.state];
      if (state) {
        const note = el('span', 'jp-mcp-state', ` ${state}`);
        note.title = server.detail;
        title.appendChild(note);
      }
      section.appendChild(title);
      if (server.state !== 'ready' && server.detail) {
        section.appendChild(el('p', 'jp-mcp-muted', server.detail));
      }
      for (const prompt of prompts) {
        section.appendChild(this._promptRow(server, prompt));
      }
      list.appendChild(section);
    }
    if (!list.childElementCount) {
      list.appendChild(el('p', 'jp-mcp-muted', query ? 'No prompt matches.' : 'No prompts.'));
    }
  }

  private _promptRow(server: IServer, prompt: IPrompt): HTMLElement {
    const row = el('div', 'jp-mcp-prompt');
    row.dataset.prompt = `${server.name}:${prompt.name}`;
    const head = el('button', 'jp-mcp-prompt-head');
    head.appendChild(el('code', 'jp-mcp-prompt-name', `/${server.name}:${prompt.name}`));
    if (prompt.title && prompt.title !== prompt.name) {
      head.appendChild(el('span', 'jp-mcp-prompt-title', prompt.title));
    }
    head.title = prompt.description || '';
    row.appendChild(head);
    const key = `${server.name}:${prompt.name}`;
    head.addEventListener('click', () => {
      const open = row.querySelector('.jp-mcp-form');
      if (open) {
        open.remove();
        this._open.delete(key);
      } else {
        row.appendChild(this._form(server, prompt));
        this._open.add(key);
      }
    });
    if (this._open.has(key)) {
      row.appendChild(this._form(server, prompt));
    }
    return row;
  }

  /** The form of a prompt: its arguments (values completed by the server), render into a cell or copy. */
  private _form(server: IServer, prompt: IPrompt): HTMLElement {
    const form = el('form', 'jp-mcp-form');
    if (prompt.description) {
      form.appendChild(el('p', 'jp-mcp-description', prompt.description));
    }
    const inputs: Record<string, HTMLInputElement> = {};
    const values = (): Record<string, string> => {
      const out: Record<string, string> = {};
      for (const [name, input] of Object.entries(inputs)) {
        if (input.value !== '') {
          out[name] = input.value;
        }
      }
      return out;
    };
    for (const arg of prompt.arguments) {
      const field = el('label', 'jp-mcp-field');
      field.appendChild(el('span', 'jp-mcp-field-name', arg.name + (arg.required ? ' *' : '')));
      const input = el('input', 'jp-mcp-input jp-mod-styled');
      input.name = arg.name;
      input.required = !!arg.required;
      if (arg.default) {
        input.placeholder = arg.default;
      }
      const listId = `jp-mcp-values-${Private.nextId++}`;
      const datalist = el('datalist');
      datalist.id = listId;
      input.setAttribute('list', listId);
      let asked = '';
      const ask = async () => {
        if (asked === input.value) {
          return;
        }
        asked = input.value;
        const context = values();
        delete context[arg.name];
        try {
          const answer = await complete(server.name, prompt.name, arg.name, input.value, context);
          datalist.textContent = '';
          for (const value of answer.values) {
            const option = el('option');
            option.value = value;
            datalist.appendChild(option);
          }
        } catch {
          // No suggestions: the field stays free text.
        }
      };
      input.addEventListener('focus', () => void ask());
      input.addEventListener('input', () => void ask());
      inputs[arg.name] = input;
      field.appendChild(input);
      field.appendChild(datalist);
      if (arg.description) {
        field.appendChild(el('span', 'jp-mcp-field-description', arg.description));
      }
      form.appendChild(field);
    }
    const buttons = el('div', 'jp-mcp-buttons');
    const toCell = el('button', 'jp-mcp-to-cell jp-Button jp-mod-styled jp-mod-accept', 'Insert as new cell');
    toCell.type = 'submit';
    const copy = el('button', 'jp-mcp-copy jp-Button jp-mod-styled', 'Copy');
    copy.type = 'button';
    buttons.appendChild(toCell);
    buttons.appendChild(copy);
    form.appendChild(buttons);
    const status = el('p', 'jp-mcp-status');
    form.appendChild(status);

    const run = async (target: 'cell' | 'clipboard') => {
      status.className = 'jp-mcp-status';
      status.textContent = 'Rendering…';
      try {
        const rendered = await render(server.name, prompt.name, values());
        if (target === 'clipboard') {
          Clipboard.copyToSystem(rendered.markdown);
          status.textContent = 'Copied.';
        } else {
          const notebook = this.notebooks.currentWidget;
          if (!notebook) {
            status.textContent = 'Open a notebook to insert the prompt (or copy it).';
            return;
          }
          insertMarkdownCell(notebook, rendered.markdown);
          status.textContent = `Inserted into ${notebook.context.localPath}.`;
        }
      } catch (error) {
        status.className = 'jp-mcp-status jp-mcp-error';
        status.textContent = String((error as Error).message ?? error);
      }
    };
    form.addEventListener('submit', event => {
      event.preventDefault();
      void run('cell');
    });
    copy.addEventListener('click', () => void run('clipboard'));
    return form;
  }

  private _search: HTMLInputElement;
  private _notebookBox: HTMLElement;
  private _list: HTMLElement;
  private _open = new Set<string>();
  private _watched: NotebookPanel | null = null;
}

function matches(server: IServer, prompt: IPrompt, query: string): boolean {
  if (!query) {
    return true;
  }
  const text = `${server.name}:${prompt.name} ${prompt.title ?? ''} ${prompt.description ?? ''}`.toLowerCase();
  return query.split(/\s+/).every(word => text.includes(word));
}

/** A Markdown cell holding `markdown`, below the active cell of `panel`. */
export function insertMarkdownCell(panel: NotebookPanel, markdown: string): void {
  const notebook = panel.content;
  const model = notebook.model;
  if (!model) {
    return;
  }
  const index = Math.max(notebook.activeCellIndex, -1) + 1;
  model.sharedModel.insertCell(index, { cell_type: 'markdown', source: markdown });
  notebook.activeCellIndex = index;
}

namespace Private {
  export let nextId = 0;
}
