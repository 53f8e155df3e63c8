import {
  ILabShell,
  ILayoutRestorer,
  JupyterFrontEnd,
  JupyterFrontEndPlugin
} from '@jupyterlab/application';
import { EditorExtensionRegistry, IEditorExtensionRegistry } from '@jupyterlab/codemirror';
import { INotebookTracker } from '@jupyterlab/notebook';
import { ISettingRegistry } from '@jupyterlab/settingregistry';
import { LabIcon } from '@jupyterlab/ui-components';
import { PromptStore } from './api';
import { addChatCommands } from './chat';
import { PromptsPanel } from './panel';
import { publishCell } from './publish';
import { SlashCommands } from './slash';

const ICON_SVG =
  '<svg xmlns="http://www.w3.org/2000/svg" width="16" height="16" viewBox="0 0 24 24">' +
  '<path class="jp-icon3" fill="#616161" d="M7 3h10a4 4 0 0 1 4 4v10a4 4 0 0 1-4 4H7a4 4 0 0 1-4-4V7a4 4 0 0 1 ' +
  '4-4zm0 2a2 2 0 0 0-2 2v10a2 2 0 0 0 2 2h10a2 2 0 0 0 2-2V7a2 2 0 0 0-2-2H7zm7.6 2.2 1.8.8-5 10-1.8-.8 5-10z"/>' +
  '</svg>';
export const promptIcon = new LabIcon({ name: 'mcp-notebook:prompt', svgstr: ICON_SVG });

const PUBLISH = 'mcp-notebook:publish-cell';

const plugin: JupyterFrontEndPlugin<void> = {
  id: 'mcp-notebook:plugin',
  description: 'MCP prompts: / in Markdown cells and files, the prompts panel, publish a cell as a prompt.',
  autoStart: true,
  requires: [IEditorExtensionRegistry, INotebookTracker],
  optional: [ILabShell, ILayoutRestorer, ISettingRegistry],
  activate: (
    app: JupyterFrontEnd,
    editors: IEditorExtensionRegistry,
    notebooks: INotebookTracker,
    shell: ILabShell | null,
    restorer: ILayoutRestorer | null,
    settings: ISettingRegistry | null
  ) => {
    // Asked at once: the first `/` after the page opens finds the lists already here.
    const store = new PromptStore();
    if (settings) {
      void settings.load(plugin.id).then(
        loaded => {
          const apply = () => (store.magics = loaded.get('magics').composite === true);
          apply();
          loaded.changed.connect(apply);
        },
        error => console.warn('mcp-notebook: settings not loaded', error)
      );
    }
    const slash = new SlashCommands(store);
    // The same prompts in the Jupyter chat's `/` menu, when jupyterlab-chat is there.
    void addChatCommands(app, store, promptIcon);
    editors.addExtension({
      name: 'mcp-notebook:slash-commands',
      factory: options => {
        const model = options.model;
        if (options.inline && !/markdown|gfm/i.test(model.mimeType)) {
          // Code cells (and other inline editors) are never offered prompts.
          return null;
        }
        return EditorExtensionRegistry.createImmutableExtension(slash.extension(() => model.mimeType));
      }
    });

    app.commands.addCommand(PUBLISH, {
      label: 'Publish as prompt',
      caption: 'Publish this cell as an MCP prompt (served after the next save)',
      icon: promptIcon,
      isEnabled: () => !!notebooks.activeCell,
      execute: async () => {
        const cell = notebooks.activeCell;
        if (!cell) {
          return;
        }
        if (await publishCell(cell.model)) {
          panel?.tagsChanged(); // the panel shows it as served once the notebook is saved
        }
      }
    });

    let panel: PromptsPanel | null = null;
    if (shell) {
      panel = new PromptsPanel(store, notebooks);
      panel.title.icon = promptIcon;
      shell.add(panel, 'left', { rank: 600 });
      restorer?.add(panel, panel.id);
      app.commands.addCommand('mcp-notebook:show-prompts', {
        label: 'Show MCP prompts',
        execute: () => shell.activateById('mcp-notebook-prompts')
      });
    }
  }
};

export default plugin;
