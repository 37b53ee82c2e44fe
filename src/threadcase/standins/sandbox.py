"""A stand-in for n8n's sandbox service, backed by a local directory.

n8n 2.41's Instance AI builds workflows inside a *workspace*: with
``N8N_INSTANCE_AI_SANDBOX_PROVIDER=n8n-sandbox`` that is a remote REST service reached through
``@n8n/sandbox-client`` (header ``X-Api-Key``). This module answers that API well enough for n8n's
own build tools to run offline:

- ``POST /sandboxes {id?, ephemeral?}``, ``GET|DELETE /sandboxes/:id`` — one directory per sandbox;
- files: ``GET …/files/content?path``, ``PUT …/files?path&overwrite`` (raw body), ``POST …/files?path``
  (append), ``DELETE …/files?path&recursive&force``, ``POST …/files/copy|move``,
  ``POST …/mkdir?path&recursive``, ``GET …/files?path&recursive&extension``, ``GET …/stat?path``;
- command executions: ``POST …/executions {command, env, workdir, timeout_ms, exec_id}`` answered as
  NDJSON (``started``, ``stdout``/``stderr``, ``exit``), ``GET …/executions/:execId?after=N`` replays
  them, ``DELETE`` forgets them.

Every absolute path lives under the sandbox's directory (``/home/user/workspace/x`` is
``<root>/<sandbox id>/home/user/workspace/x``), so nothing outside it is ever touched. Commands are
**interpreted, never executed**: the few shell forms n8n sends (``echo $HOME``, ``cat``, ``mkdir -p``,
the base64 write fallback, ``npm install`` — answered "skipped", there is no network) are emulated;
anything else exits 127 with a one-line reason, so a model's arbitrary command never runs on the host.
TypeScript sources (``node --import tsx build.mjs``) exit 1: a ``.json`` workflow source needs none.

Standard library only: ``scripts/n8n-local`` runs this file directly (``python3 sandbox.py --root DIR
--port N --api-key KEY``), before any virtual environment exists.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import posixpath
import re
import secrets
import shutil
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit

__all__ = ["HOME", "SandboxService", "make_server", "run_command"]

HOME = "/home/user"
"""What ``echo $HOME`` answers; n8n puts its workspace at ``$HOME/workspace``."""

_ID = re.compile(r"^[A-Za-z0-9_.:-]{1,128}$")


class SandboxFailure(Exception):
    """A request the service refuses: its HTTP status and the ``{"error": ...}`` message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


# ------------------------------------------------------------------------------------ file system


@dataclass
class Sandbox:
    """One sandbox: its id and the directory that is its file system root."""

    id: str
    root: Path
    ephemeral: bool
    created_at: float = field(default_factory=time.time)
    last_active_at: float = field(default_factory=time.time)
    executions: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def record(self) -> dict[str, Any]:
        # Epoch seconds: the n8n sandbox wrapper multiplies created_at by 1000.
        return {
            "id": self.id,
            "status": "running",
            "created_at": int(self.created_at),
            "last_active_at": int(self.last_active_at),
            "ephemeral": self.ephemeral,
        }

    def real(self, path: str, cwd: str = HOME) -> Path:
        """The local file for a sandbox path (absolute, or relative to ``cwd``); never outside the root."""
        if not path:
            raise SandboxFailure(400, "path is required")
        joined = posixpath.normpath(posixpath.join(cwd, path))
        # normpath of an absolute path cannot climb above "/", so the result stays under the root.
        return self.root / joined.lstrip("/")

    def virtual(self, real: Path) -> str:
        return "/" + real.relative_to(self.root).as_posix() if real != self.root else "/"


def _stat_entry(sandbox: Sandbox, real: Path) -> dict[str, Any]:
    info = real.stat()
    stamp = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.st_mtime))
    return {
        "name": real.name,
        "path": sandbox.virtual(real),
        "type": "directory" if real.is_dir() else "file",
        "size": 0 if real.is_dir() else info.st_size,
        "created_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.st_ctime)),
        "modified_at": stamp,
    }


def _list_entry(real: Path, name: str) -> dict[str, Any]:
    info = real.stat()
    return {
        "name": name,
        "size": 0 if real.is_dir() else info.st_size,
        "is_dir": real.is_dir(),
        "type": "directory" if real.is_dir() else "file",
        "mod_time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(info.st_mtime)),
    }


def _remove(real: Path, recursive: bool, force: bool) -> None:
    if not real.exists():
        if force:
            return
        raise SandboxFailure(404, f"no such file or directory: {real.name}")
    if real.is_dir():
        if not recursive and any(real.iterdir()):
            raise SandboxFailure(400, "directory is not empty (recursive=false)")
        shutil.rmtree(real)
    else:
        real.unlink()


# ------------------------------------------------------------------------------ command interpreter

_OPERATORS = ("&&", "||", ">>", "2>&1", "2>", ">", ";", "|")


def _tokens(command: str, variables: dict[str, str]) -> list[tuple[str, bool]]:
    """Shell words and operators: (text, is_operator). Quotes, backslashes and ``$NAME``/``$?`` as sh does."""
    out: list[tuple[str, bool]] = []
    word: list[str] = []
    in_word = False
    i = 0

    def flush() -> None:
        nonlocal in_word
        if in_word:
            out.append(("".join(word), False))
            word.clear()
            in_word = False

    def expand(at: int) -> tuple[str, int]:
        match = re.match(r"\$(\?|[A-Za-z_][A-Za-z0-9_]*|\{[A-Za-z_][A-Za-z0-9_]*\})", command[at:])
        if not match:
            return "$", at + 1
        name = match.group(1).strip("{}")
        return variables.get(name, ""), at + match.end()

    while i < len(command):
        char = command[i]
        if char in " \t\n":
            flush()
            i += 1
            continue
        operator = next((op for op in _OPERATORS if command.startswith(op, i)), None)
        # "2>" is an operator only where a word starts; "a2>x" stays a word.
        if operator and not (operator.startswith("2") and in_word):
            flush()
            out.append((operator, True))
            i += len(operator)
            continue
        in_word = True
        if char == "'":
            end = command.find("'", i + 1)
            if end < 0:
                raise SandboxFailure(400, "unterminated single quote")
            word.append(command[i + 1 : end])
            i = end + 1
        elif char == '"':
            i += 1
            while i < len(command) and command[i] != '"':
                if command[i] == "\\" and i + 1 < len(command) and command[i + 1] in '"\\$`':
                    word.append(command[i + 1])
                    i += 2
                elif command[i] == "$":
                    text, i = expand(i)
                    word.append(text)
                else:
                    word.append(command[i])
                    i += 1
            if i >= len(command):
                raise SandboxFailure(400, "unterminated double quote")
            i += 1
        elif char == "\\" and i + 1 < len(command):
            word.append(command[i + 1])
            i += 2
        elif char == "$":
            text, i = expand(i)
            word.append(text)
        else:
            word.append(char)
            i += 1
    flush()
    return out


@dataclass
class _Outcome:
    code: int = 0
    stdout: str = ""
    stderr: str = ""


class _Shell:
    """Just the shell n8n's workspace code speaks; see the module docstring."""

    def __init__(self, sandbox: Sandbox, cwd: str, env: dict[str, str]) -> None:
        self.sandbox = sandbox
        self.cwd = cwd
        self.variables = {"HOME": HOME, "PWD": cwd, "?": "0", **env}
        self.exit_requested: int | None = None

    def run(self, command: str) -> _Outcome:
        total = _Outcome()
        pending: list[tuple[str, bool]] = []
        connector = ";"
        # Tokenize lazily per statement: `rc=$?` must see the status of the statement before it.
        rest = command
        while rest.strip() and self.exit_requested is None:
            statement, separator, rest = _split_statement(rest)
            run_it = connector == ";" or (connector == "&&") == (self.variables["?"] == "0")
            if run_it:
                pending = _tokens(statement, self.variables)
                outcome = self._statement(pending)
                total.stdout += outcome.stdout
                total.stderr += outcome.stderr
                self.variables["?"] = str(outcome.code)
            connector = separator or ";"
        total.code = self.exit_requested if self.exit_requested is not None else int(self.variables["?"])
        return total

    def _statement(self, tokens: list[tuple[str, bool]]) -> _Outcome:
        argv: list[str] = []
        stdout_to: tuple[str, bool] | None = None  # (path, append)
        drop_stderr = merge_stderr = False
        i = 0
        while i < len(tokens):
            text, is_operator = tokens[i]
            if not is_operator:
                argv.append(text)
                i += 1
                continue
            if text == "|":
                return _Outcome(127, "", "threadcase sandbox: pipes are not supported\n")
            if text in (">", ">>", "2>"):
                if i + 1 >= len(tokens) or tokens[i + 1][1]:
                    return _Outcome(2, "", f"threadcase sandbox: {text} needs a target\n")
                target = tokens[i + 1][0]
                if text == "2>":
                    drop_stderr = target == "/dev/null"
                else:
                    stdout_to = (target, text == ">>")
                i += 2
                continue
            if text == "2>&1":
                merge_stderr = True
            i += 1
        while argv and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[0]):
            name, _, value = argv.pop(0).partition("=")
            self.variables[name] = value
        outcome = self._builtin(argv) if argv else _Outcome(0)
        if merge_stderr:
            outcome.stdout, outcome.stderr = outcome.stdout + outcome.stderr, ""
        if drop_stderr:
            outcome.stderr = ""
        if stdout_to is not None:
            path, append = stdout_to
            if path != "/dev/null":
                real = self.sandbox.real(path, self.cwd)
                if not real.parent.is_dir():
                    return _Outcome(1, "", f"sh: {path}: No such file or directory\n")
                with open(real, "a" if append else "w", encoding="utf-8") as handle:
                    handle.write(outcome.stdout)
            outcome.stdout = ""
        return outcome

    def _builtin(self, argv: list[str]) -> _Outcome:
        name, args = argv[0], argv[1:]
        handler = getattr(self, f"_cmd_{name.replace('-', '_')}", None) if name.isidentifier() else None
        if name in (":", "true"):
            return _Outcome(0)
        if name == "false":
            return _Outcome(1)
        if handler is None:
            return _Outcome(127, "", f"threadcase sandbox: {name}: command not supported (commands are emulated)\n")
        result: _Outcome = handler(args)
        return result

    def _cmd_echo(self, args: list[str]) -> _Outcome:
        newline = True
        if args and args[0] == "-n":
            newline, args = False, args[1:]
        return _Outcome(0, " ".join(args) + ("\n" if newline else ""))

    def _cmd_printf(self, args: list[str]) -> _Outcome:
        if not args:
            return _Outcome(2, "", "printf: missing format\n")
        fmt, values = args[0], args[1:]
        if fmt == "%s":
            return _Outcome(0, "".join(values))
        if "%" not in fmt:
            return _Outcome(0, fmt.replace("\\n", "\n"))
        return _Outcome(1, "", f"threadcase sandbox: printf format {fmt!r} not supported\n")

    def _cmd_pwd(self, args: list[str]) -> _Outcome:
        return _Outcome(0, self.cwd + "\n")

    def _cmd_cd(self, args: list[str]) -> _Outcome:
        target = args[0] if args else HOME
        real = self.sandbox.real(target, self.cwd)
        if not real.is_dir():
            return _Outcome(1, "", f"sh: cd: {target}: No such file or directory\n")
        self.cwd = self.sandbox.virtual(real)
        self.variables["PWD"] = self.cwd
        return _Outcome(0)

    def _cmd_exit(self, args: list[str]) -> _Outcome:
        code = int(args[0]) if args and args[0].lstrip("-").isdigit() else int(self.variables["?"])
        self.exit_requested = code
        return _Outcome(code)

    def _cmd_cat(self, args: list[str]) -> _Outcome:
        out, err, code = [], [], 0
        for path in args:
            real = self.sandbox.real(path, self.cwd)
            if real.is_file():
                out.append(real.read_text(encoding="utf-8", errors="replace"))
            else:
                err.append(f"cat: {path}: No such file or directory\n")
                code = 1
        return _Outcome(code, "".join(out), "".join(err))

    def _cmd_mkdir(self, args: list[str]) -> _Outcome:
        parents = "-p" in args
        for path in (a for a in args if not a.startswith("-")):
            real = self.sandbox.real(path, self.cwd)
            try:
                real.mkdir(parents=parents, exist_ok=parents)
            except (FileExistsError, FileNotFoundError) as exc:
                return _Outcome(1, "", f"mkdir: cannot create directory '{path}': {exc.strerror}\n")
        return _Outcome(0)

    def _cmd_rm(self, args: list[str]) -> _Outcome:
        flags = "".join(a[1:] for a in args if a.startswith("-"))
        for path in (a for a in args if not a.startswith("-")):
            try:
                _remove(self.sandbox.real(path, self.cwd), recursive="r" in flags.lower(), force="f" in flags)
            except SandboxFailure as exc:
                return _Outcome(1, "", f"rm: {path}: {exc}\n")
        return _Outcome(0)

    def _cmd_base64(self, args: list[str]) -> _Outcome:
        import base64
        import binascii

        if "-d" not in args and "--decode" not in args:
            return _Outcome(1, "", "threadcase sandbox: only `base64 -d FILE` is supported\n")
        files = [a for a in args if not a.startswith("-")]
        if len(files) != 1:
            return _Outcome(1, "", "threadcase sandbox: `base64 -d` needs exactly one file\n")
        real = self.sandbox.real(files[0], self.cwd)
        if not real.is_file():
            return _Outcome(1, "", f"base64: {files[0]}: No such file or directory\n")
        try:
            decoded = base64.b64decode(real.read_bytes(), validate=False)
        except binascii.Error as exc:
            return _Outcome(1, "", f"base64: invalid input: {exc}\n")
        return _Outcome(0, decoded.decode("utf-8", errors="replace"))

    def _cmd_test(self, args: list[str]) -> _Outcome:
        if len(args) == 2 and args[0] in ("-f", "-d", "-e"):
            real = self.sandbox.real(args[1], self.cwd)
            ok = {"-f": real.is_file, "-d": real.is_dir, "-e": real.exists}[args[0]]()
            return _Outcome(0 if ok else 1)
        return _Outcome(2, "", "threadcase sandbox: only `test -f|-d|-e PATH` is supported\n")

    def _cmd_ls(self, args: list[str]) -> _Outcome:
        paths = [a for a in args if not a.startswith("-")] or [self.cwd]
        lines = []
        for path in paths:
            real = self.sandbox.real(path, self.cwd)
            if not real.exists():
                return _Outcome(2, "", f"ls: cannot access '{path}': No such file or directory\n")
            lines.extend(sorted(p.name for p in real.iterdir()) if real.is_dir() else [real.name])
        return _Outcome(0, "".join(f"{line}\n" for line in lines))

    def _cmd_npm(self, args: list[str]) -> _Outcome:
        if args and args[0] in ("install", "i", "ci"):
            # No network here: the workspace's dependencies only matter to TypeScript builds.
            return _Outcome(0, "threadcase sandbox: npm install skipped (no network; .json sources need no packages)\n")
        return _Outcome(127, "", f"threadcase sandbox: npm {' '.join(args[:1])}: not supported\n")

    def _cmd_node(self, args: list[str]) -> _Outcome:
        return _Outcome(
            1,
            "",
            "threadcase sandbox: node does not run here; TypeScript workflow sources cannot be compiled "
            "(write a .json source instead)\n",
        )


def _split_statement(command: str) -> tuple[str, str, str]:
    """The first statement, the separator after it (`;`, `&&`, `||` or ""), and the rest (quotes respected)."""
    i, quote = 0, ""
    while i < len(command):
        char = command[i]
        if quote:
            if char == quote:
                quote = ""
            elif char == "\\" and quote == '"':
                i += 1
        elif char in "'\"":
            quote = char
        elif char == "\\":
            i += 1
        else:
            for separator in ("&&", "||", ";", "\n"):
                if command.startswith(separator, i):
                    return command[:i], separator.strip() or ";", command[i + len(separator) :]
        i += 1
    return command, "", ""


def run_command(
    sandbox: Sandbox, command: str, workdir: str | None = None, env: dict[str, str] | None = None
) -> tuple[int, str, str]:
    """Interpret ``command`` in ``sandbox``: (exit code, stdout, stderr)."""
    shell = _Shell(sandbox, workdir or HOME, env or {})
    try:
        outcome = shell.run(command)
    except SandboxFailure as exc:
        return 2, "", f"threadcase sandbox: {exc}\n"
    except OSError as exc:
        return 1, "", f"threadcase sandbox: {exc.strerror or exc}\n"
    return outcome.code, outcome.stdout, outcome.stderr


# ---------------------------------------------------------------------------------------- service


class SandboxService:
    """Sandboxes under one local directory, an optional API key, and a log of what was asked."""

    def __init__(self, root: Path, api_key: str = "", log_path: Path | None = None) -> None:
        self.root = root
        self.api_key = api_key
        self.log_path = log_path
        self._sandboxes: dict[str, Sandbox] = {}
        self._lock = threading.Lock()
        self.commands: list[dict[str, Any]] = []
        """Every command executed: command, workdir, exit code (what the closing note reports)."""

    def log(self, entry: dict[str, Any]) -> None:
        if self.log_path is None:
            return
        with self._lock, open(self.log_path, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")

    def create(self, sandbox_id: str | None, ephemeral: bool) -> Sandbox:
        with self._lock:
            if sandbox_id and sandbox_id in self._sandboxes:
                return self._sandboxes[sandbox_id]
            new_id = sandbox_id or f"sbx-{secrets.token_hex(6)}"
            if not _ID.match(new_id):
                raise SandboxFailure(400, f"invalid sandbox id {new_id!r}")
            directory = self.root / new_id
            (directory / HOME.lstrip("/")).mkdir(parents=True, exist_ok=True)
            sandbox = Sandbox(new_id, directory, ephemeral)
            self._sandboxes[new_id] = sandbox
            return sandbox

    def get(self, sandbox_id: str) -> Sandbox:
        with self._lock:
            sandbox = self._sandboxes.get(sandbox_id)
        if sandbox is None:
            raise SandboxFailure(404, f"sandbox {sandbox_id!r} not found")
        sandbox.last_active_at = time.time()
        return sandbox

    def delete(self, sandbox_id: str) -> None:
        with self._lock:
            sandbox = self._sandboxes.pop(sandbox_id, None)
        if sandbox is None:
            raise SandboxFailure(404, f"sandbox {sandbox_id!r} not found")
        shutil.rmtree(sandbox.root, ignore_errors=True)

    def execute(self, sandbox: Sandbox, body: dict[str, Any]) -> list[dict[str, Any]]:
        command = body.get("command")
        if not isinstance(command, str) or not command.strip():
            raise SandboxFailure(400, "command is required")
        exec_id = str(body.get("exec_id") or secrets.token_hex(8))
        env = {k: v for k, v in (body.get("env") or {}).items() if isinstance(v, str)}
        started = time.monotonic()
        code, stdout, stderr = run_command(sandbox, command, body.get("workdir"), env)
        events: list[dict[str, Any]] = [{"type": "started", "seq": 0, "exec_id": exec_id}]
        if stdout:
            events.append({"type": "stdout", "seq": len(events), "data": stdout})
        if stderr:
            events.append({"type": "stderr", "seq": len(events), "data": stderr})
        events.append(
            {
                "type": "exit",
                "seq": len(events),
                "exit_code": code,
                "success": code == 0,
                "execution_time_ms": int((time.monotonic() - started) * 1000),
                "timed_out": False,
                "killed": False,
            }
        )
        sandbox.executions[exec_id] = events
        entry = {"command": command, "workdir": body.get("workdir"), "exitCode": code}
        with self._lock:
            self.commands.append(entry)
        self.log({"ts": time.time(), "sandbox": sandbox.id, "exec": entry, "stderr": stderr[:300]})
        return events


def _flag(query: dict[str, list[str]], name: str) -> bool:
    return (query.get(name) or ["false"])[0].lower() in ("1", "true", "yes")


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass  # the service's own JSON log says what happened

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    def do_PUT(self) -> None:
        self._dispatch("PUT")

    def do_DELETE(self) -> None:
        self._dispatch("DELETE")

    def _dispatch(self, method: str) -> None:
        service = self.server.service
        parts = urlsplit(self.path)
        segments = [unquote(s) for s in parts.path.strip("/").split("/") if s]
        query = parse_qs(parts.query)
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length) if length else b""
        status = 200
        try:
            if segments == ["healthz"]:
                self._json(200, {"status": "ok"})
                return
            if service.api_key and not secrets.compare_digest(self.headers.get("X-Api-Key") or "", service.api_key):
                raise SandboxFailure(401, "invalid or missing X-Api-Key")
            status = self._route(service, method, segments, query, body)
        except SandboxFailure as exc:
            status = exc.status
            self._json(exc.status, {"error": str(exc)})
        except (OSError, ValueError) as exc:
            status = 500
            self._json(500, {"error": f"{type(exc).__name__}: {exc}"})
        finally:
            service.log(
                {"ts": time.time(), "method": method, "path": parts.path, "query": parts.query, "status": status}
            )

    def _route(
        self, service: SandboxService, method: str, segments: list[str], query: dict[str, list[str]], body: bytes
    ) -> int:
        if segments == ["sandboxes"] and method == "POST":
            payload = json.loads(body or b"{}")
            sandbox = service.create(payload.get("id"), bool(payload.get("ephemeral")))
            return self._json(200, sandbox.record())
        if len(segments) < 2 or segments[0] != "sandboxes":
            raise SandboxFailure(404, f"no route {method} /{'/'.join(segments)}")
        if len(segments) == 2:
            if method == "GET":
                return self._json(200, service.get(segments[1]).record())
            if method == "DELETE":
                service.delete(segments[1])
                return self._empty(204)
            raise SandboxFailure(405, f"{method} not allowed")
        sandbox = service.get(segments[1])
        rest = segments[2:]
        path = (query.get("path") or [""])[0]
        if rest == ["executions"] and method == "POST":
            return self._ndjson(service.execute(sandbox, json.loads(body or b"{}")))
        if len(rest) == 2 and rest[0] == "executions":
            events = sandbox.executions.get(rest[1])
            if method == "DELETE":
                sandbox.executions.pop(rest[1], None)
                return self._empty(204)
            if events is None:
                raise SandboxFailure(404, f"execution {rest[1]!r} not found")
            after = int((query.get("after") or ["-1"])[0])
            return self._ndjson([e for e in events if e["seq"] > after])
        if rest == ["files", "content"] and method == "GET":
            real = sandbox.real(path)
            if not real.is_file():
                raise SandboxFailure(404, f"file not found: {path}")
            return self._bytes(200, real.read_bytes(), "application/octet-stream")
        if rest == ["files"]:
            return self._files(sandbox, method, path, query, body)
        if rest == ["files", "copy"] or rest == ["files", "move"]:
            payload = json.loads(body or b"{}")
            src, dest = sandbox.real(payload.get("src", "")), sandbox.real(payload.get("dest", ""))
            if not src.exists():
                raise SandboxFailure(404, f"source not found: {payload.get('src')}")
            if dest.exists() and not payload.get("overwrite"):
                raise SandboxFailure(409, f"destination exists: {payload.get('dest')}")
            dest.parent.mkdir(parents=True, exist_ok=True)
            if rest[1] == "move":
                shutil.move(src, dest)
            elif src.is_dir():
                shutil.copytree(src, dest, dirs_exist_ok=True)
            else:
                shutil.copyfile(src, dest)
            return self._empty(204)
        if rest == ["mkdir"] and method == "POST":
            real = sandbox.real(path)
            try:
                real.mkdir(parents=_flag(query, "recursive"), exist_ok=_flag(query, "recursive"))
            except FileExistsError as exc:
                raise SandboxFailure(409, f"already exists: {path}") from exc
            except FileNotFoundError as exc:
                raise SandboxFailure(404, f"parent directory missing: {path}") from exc
            return self._empty(204)
        if rest == ["stat"] and method == "GET":
            real = sandbox.real(path)
            if not real.exists():
                raise SandboxFailure(404, f"no such file or directory: {path}")
            return self._json(200, _stat_entry(sandbox, real))
        raise SandboxFailure(404, f"no route {method} /{'/'.join(segments)}")

    def _files(self, sandbox: Sandbox, method: str, path: str, query: dict[str, list[str]], body: bytes) -> int:
        real = sandbox.real(path or HOME)
        if method == "PUT":
            if real.exists() and not _flag(query, "overwrite") and "overwrite" in query:
                raise SandboxFailure(409, f"file exists: {path}")
            if not real.parent.is_dir():
                raise SandboxFailure(404, f"parent directory missing: {path}")
            real.write_bytes(body)
            return self._empty(204)
        if method == "POST":
            if not real.parent.is_dir():
                raise SandboxFailure(404, f"parent directory missing: {path}")
            with open(real, "ab") as handle:
                handle.write(body)
            return self._empty(204)
        if method == "DELETE":
            _remove(real, _flag(query, "recursive"), _flag(query, "force"))
            return self._empty(204)
        if method == "GET":
            if not real.is_dir():
                raise SandboxFailure(404, f"not a directory: {path}")
            extension = (query.get("extension") or [""])[0]
            walk: Iterator[Path] = real.rglob("*") if _flag(query, "recursive") else real.iterdir()
            entries = [
                _list_entry(p, p.relative_to(real).as_posix())
                for p in sorted(walk)
                if not extension
                or p.is_dir()
                or p.name.endswith(extension if extension.startswith(".") else f".{extension}")
            ]
            return self._json(200, entries)
        raise SandboxFailure(405, f"{method} not allowed")

    def _json(self, status: int, payload: Any) -> int:
        return self._bytes(status, json.dumps(payload).encode(), "application/json")

    def _ndjson(self, events: list[dict[str, Any]]) -> int:
        return self._bytes(200, "".join(json.dumps(e) + "\n" for e in events).encode(), "application/x-ndjson")

    def _empty(self, status: int) -> int:
        self.send_response(status)
        self.send_header("Content-Length", "0")
        self.end_headers()
        return status

    def _bytes(self, status: int, data: bytes, content_type: str) -> int:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)
        return status


class _Server(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, address: tuple[str, int], service: SandboxService) -> None:
        super().__init__(address, _Handler)
        self.service = service


def make_server(service: SandboxService, host: str = "127.0.0.1", port: int = 0) -> ThreadingHTTPServer:
    """A server for ``service`` bound to ``host:port`` (0 = any free port); call ``serve_forever()``."""
    return _Server((host, port), service)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="A local stand-in for n8n's sandbox service (see the docstring).")
    parser.add_argument("--root", type=Path, required=True, help="directory holding one sub-directory per sandbox")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 = any free port (printed on stdout)")
    parser.add_argument("--api-key", default=os.environ.get("N8N_SANDBOX_SERVICE_API_KEY", ""))
    parser.add_argument("--log", type=Path, help="append one JSON line per request and per command")
    args = parser.parse_args(argv)
    args.root.mkdir(parents=True, exist_ok=True)
    server = make_server(SandboxService(args.root.resolve(), args.api_key, args.log), args.host, args.port)
    print(f"http://{args.host}:{server.server_address[1]}", flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
    return 0


if __name__ == "__main__":
    sys.exit(main())
