// "Publish as prompt": a cell's name as a prompt, checked by the server's naming rules, written into
// `metadata.mcp.prompt` (the canonical form of docs/notebook-format.md). Saving the notebook serves it.
import { InputDialog, showErrorMessage } from '@jupyterlab/apputils';
import { ICellModel } from '@jupyterlab/cells';
import { checkName } from './api';

function currentName(model: ICellModel): string {
  const mcp = model.getMetadata('mcp');
  return mcp && typeof mcp === 'object' && typeof (mcp as any).prompt === 'string' ? (mcp as any).prompt : '';
}

/** A first guess at a name: the cell's first heading, as the naming rules would have it. */
function guess(model: ICellModel): string {
  const heading = /^#+\s+(.+)$/m.exec(model.sharedModel.getSource());
  return heading ? heading[1].trim() : '';
}

/** Ask for a name until the server accepts one (or the user cancels); tag the cell with it. */
export async function publishCell(model: ICellModel): Promise<string | null> {
  let text = currentName(model) || guess(model);
  let label = 'Prompt name (letters, digits, _ . -)';
  for (;;) {
    const answer = await InputDialog.getText({
      title: 'Publish this cell as a prompt',
      label,
      text,
      okLabel: 'Publish'
    });
    if (!answer.button.accept || answer.value === null) {
      return null;
    }
    const name = answer.value.trim();
    let check;
    try {
      check = await checkName(name);
    } catch (error) {
      await showErrorMessage('Cannot check the name', String((error as Error).message ?? error));
      return null;
    }
    if (check.ok) {
      const mcp = model.getMetadata('mcp');
      const fields = mcp && typeof mcp === 'object' ? { ...(mcp as object) } : {};
      model.setMetadata('mcp', { ...fields, prompt: name });
      return name;
    }
    const why = check.message ? check.message[0].toUpperCase() + check.message.slice(1) : 'Not a valid prompt name';
    label = `"${name}" cannot be published: ${why.replace(/\.$/, '')}. Try this name:`;
    text = check.suggestion || name;
  }
}
