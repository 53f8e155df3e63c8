;;; emacs_drive.el --- drive examples/editors/emacs/mcp-notebook.el in batch Emacs  -*- lexical-binding: t -*-

;; Environment: MCPNB_CONFIG (the example configuration), DRIVE_FILE (a .txt document), DRIVE_OUT
;; (where the JSON of what was seen goes). Completes "/" until the notebook's prompts are there,
;; renders a line with `mcp-notebook-render-line', shuts the server down, and writes the result.

(require 'json)
(load (getenv "MCPNB_CONFIG"))
;; Batch Emacs cannot answer eglot's "apply this edit?" question.
(setq eglot-confirm-server-initiated-edits nil)

(defvar drive-result nil)

(defun drive-put (key value)
  (setq drive-result (cons (cons key value) drive-result)))

(defun drive-candidates ()
  "The completion candidates at point, as `completion-at-point' would offer them."
  (let ((capf (eglot-completion-at-point)))
    (when capf
      (all-completions (buffer-substring-no-properties (nth 0 capf) (point)) (nth 2 capf)))))

(condition-case problem
    (progn
      (find-file (getenv "DRIVE_FILE"))
      (drive-put "mode" (symbol-name major-mode))
      ;; eglot-ensure connects from the command loop, which batch Emacs has not: run it once.
      (run-hooks 'post-command-hook)
      (let ((deadline (+ (float-time) 60)))
        (while (and (not (eglot-current-server)) (< (float-time) deadline))
          (accept-process-output nil 0.1)))
      (unless (eglot-current-server) (error "eglot never connected"))
      (drive-put "bridge" (process-id (jsonrpc--process (eglot-current-server))))
      (erase-buffer)
      (insert "/")
      (let ((deadline (+ (float-time) 60)) (found nil))
        (while (and (not (member "/nb:greet" found)) (< (float-time) deadline))
          (setq found (drive-candidates))
          (unless (member "/nb:greet" found) (accept-process-output nil 0.2)))
        (drive-put "commands" (vconcat found)))
      (erase-buffer)
      (insert "/nb:greet ")
      (drive-put "arguments" (vconcat (drive-candidates)))
      (erase-buffer)
      (insert "# Notes\n/nb:greet name=Ada and more\nthe end\n")
      (goto-char (point-min))
      (forward-line 1)
      (mcp-notebook-render-line)
      (let ((deadline (+ (float-time) 30)))
        (while (and (string-match-p "/nb:greet" (buffer-string)) (< (float-time) deadline))
          (accept-process-output nil 0.1)))
      (drive-put "rendered" (buffer-substring-no-properties (point-min) (point-max)))
      (set-buffer-modified-p nil)
      (eglot-shutdown (eglot-current-server)))
  (error (drive-put "error" (format "%S" problem))))

(with-temp-file (getenv "DRIVE_OUT")
  (insert (json-encode drive-result)))
(kill-emacs 0)
