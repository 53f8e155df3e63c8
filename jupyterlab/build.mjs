// Builds the prebuilt extension (labextension/) with JupyterLab's own builder, in production mode and
// without source maps. The core it builds against is @jupyterlab/core-meta (pinned in package-lock.json),
// not whatever JupyterLab is installed here, so the same source gives the same files on every machine.
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const core = join(here, 'node_modules', '.mcp-notebook-core');
mkdirSync(core, { recursive: true });
copyFileSync(join(here, 'node_modules', '@jupyterlab', 'core-meta', 'core.package.json'), join(core, 'package.json'));
rmSync(join(here, 'labextension'), { recursive: true, force: true });
execFileSync(
  process.execPath,
  [join(here, 'node_modules', '@jupyterlab', 'builder', 'lib', 'build-labextension.js'), '--core-path', core, here],
  { stdio: 'inherit', cwd: here }
);
