;;; mcp-notebook.el --- mcp-notebook-lsp in Emacs, through eglot  -*- lexical-binding: t -*-

;; Emacs 29 or later has eglot built in; on Emacs 28 install it (Debian: elpa-eglot; or M-x
;; package-install eglot). Tested in CI with Debian 12's Emacs 28.2 and eglot 1.9, in batch mode.
;; Load this file from your init.el: (load "/path/to/mcp-notebook.el")

(require 'eglot)

;; Eglot sends the major mode, less "-mode", as the language id: "markdown", "gfm", "text".
(add-to-list 'eglot-server-programs
             '((markdown-mode gfm-mode text-mode)
               . ("mcp-notebook-lsp"
                  :initializationOptions
                  (:mcpNotebook (:trigger "/" :fileTypes ["markdown" "gfm" "text"])))))

;; Start the bridge in every markdown and text buffer.
(dolist (hook '(markdown-mode-hook gfm-mode-hook text-mode-hook))
  (add-hook hook #'eglot-ensure))

(defun mcp-notebook-render-line ()
  "Replace the slash command on the current line with its rendered prompt."
  (interactive)
  ;; Send what was typed just now first: eglot sends changes after a pause, the command goes at once.
  (when (fboundp 'eglot--signal-textDocument/didChange)
    (eglot--signal-textDocument/didChange))
  (eglot-execute-command (eglot--current-server-or-lose)
                         "mcpNotebook.renderPrompt"
                         (vector (plist-get (eglot--TextDocumentIdentifier) :uri)
                                 (1- (line-number-at-pos)))))

(with-eval-after-load 'text-mode
  (define-key text-mode-map (kbd "C-c m r") #'mcp-notebook-render-line))

;;; mcp-notebook.el ends here
