# Copyright 2026 The contrib_mixed_precision Authors.
# SPDX-License-Identifier: Apache-2.0
"""Runs a Python program as a fresh interpreter would, without its start-up.

Most of the suite's time went to fresh interpreters importing TensorFlow (2.4
to 3.6 s each on a 2-core machine) to run one converted or TF1-mode program.
A fork server pays that import once per pytest worker: a server process
imports TensorFlow and nothing else, creates no graph, no eager context and
no thread of TensorFlow's (the tests check it), and forks one child per
program. The child then becomes the program, as `python PROG ARGS` would:

- `sys.argv`, `sys.orig_argv`, `sys.path[0]` (the script's directory, or ''
  for `-c`), the working directory, `os.environ` (replaced, also for C code:
  `os.environ` calls putenv), standard input, output and error (file
  descriptors 0-2, and new `sys.std*` objects over them);
- a new `__main__` module, with `__file__`, `__loader__`, `__spec__` as a
  fresh interpreter sets them, and tracebacks that start at the program;
- the exit: `sys.exit` codes, an uncaught exception's traceback and status
  1, atexit handlers and non-daemon threads, death by a signal (as a
  negative return code).
- `random` and NumPy's global generator are re-seeded from the OS, as a new
  process's are; `tempfile`'s directory is looked up again.

What a child cannot get fresh is TensorFlow's own import: it happened in the
server, with the server's environment. So:
- there is one server per *import-time environment*: the variables that
  Python, TensorFlow, Keras, oneDNN, OpenMP or BLAS read when they load
  (`_IMPORT_TIME_PREFIXES`, e.g. PYTHONPATH, TF_USE_LEGACY_KERAS,
  TF_CPP_MIN_LOG_LEVEL, TF_ENABLE_ONEDNN_OPTS, CUDA_VISIBLE_DEVICES), and
  what TensorFlow printed while it imported is written to the child's
  output first;
- a program that sets an environment variable itself (`os.environ[...] =`,
  `putenv`; looked for in the script and the modules beside it that it
  imports), or
  that sits beside a module named like one the server imported, runs in a
  fresh interpreter instead, as does `python -m MODULE` (the upgrade
  command imports no TensorFlow, and some tests check that), any
  interpreter option, and a caller that asks for `fresh=True` (tests of
  import-time behaviour, signals, process trees).

Set CMP_FORKSERVER=0 to run every program in a fresh interpreter. Linux only
(fork, /proc); elsewhere everything runs fresh. tests/forkserver_test.py
runs the same checks through both paths: a program's output is the same,
and `disable_v2_behavior()`, a graph collection, an environment variable or
a module one program adds never reaches the next.
"""

import atexit
import io
import json
import locale
import os
import re
import selectors
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import warnings

# Environment variables read when Python or a library TensorFlow brings
# loads (Keras 3 brings matplotlib: MPLCONFIGDIR); a server is started per
# distinct set of them.
_IMPORT_TIME_PREFIXES = (
    "PYTHON", "TF_", "TF2_", "KERAS", "CUDA", "NVIDIA", "XLA", "OMP_", "KMP_",
    "MKL", "OPENBLAS", "GOTO", "BLIS", "NPY_", "NUMPY", "ABSL", "LD_", "LC_",
    "LANG", "GRPC", "PROTOCOL_BUFFERS", "MPL")
# A program that writes the environment may do it before its
# `import tensorflow`, which in a child has happened already.
_WRITES_ENV = re.compile(
    r"environ\s*\[[^\]]*\]\s*=[^=]|environ\.(setdefault|update|pop|clear)\s*\(|"
    r"\b(putenv|unsetenv)\s*\(|\bdel\s+os\.environ")
# `import a.b`, `from a.b import c`: the modules a program may load from
# beside it.
_IMPORTS = re.compile(r"^[ \t]*(?:from|import)[ \t]+([A-Za-z_][\w.]*)",
                      re.MULTILINE)
# Servers kept per worker (each holds TensorFlow's memory); past that, the
# least recently used one stops.
_MAX_SERVERS = 3
_MAX_SCANNED = 300  # .py files beside a script looked at; more: fresh.
_HEADER = struct.Struct("!I")

# What this process ran, for tests and reports: {"forked": n, "fresh": n}.
stats = {"forked": 0, "fresh": 0}
# Why programs ran fresh: {reason: count}. With CMP_FORKSERVER_STATS=FILE,
# each process appends both as one JSON line to FILE when it exits.
fresh_reasons = {}


def enabled() -> bool:
  """Whether programs may be forked here at all."""
  return (sys.platform.startswith("linux") and hasattr(os, "fork") and
          os.environ.get("CMP_FORKSERVER", "1") != "0")


def _import_time_env(env):
  return tuple(sorted((k, v) for k, v in env.items()
                      if k.startswith(_IMPORT_TIME_PREFIXES)))


def _send(sock, obj, fds=()):
  payload = json.dumps(obj).encode()
  if fds:
    socket.send_fds(sock, [_HEADER.pack(len(payload))], list(fds))
  else:
    sock.sendall(_HEADER.pack(len(payload)))
  sock.sendall(payload)


def _recv_exactly(sock, n):
  data = b""
  while len(data) < n:
    chunk = sock.recv(n - len(data))
    if not chunk:
      raise EOFError("the fork server's socket closed")
    data += chunk
  return data


def _recv(sock, want_fds=0):
  """One message (and the file descriptors sent with it)."""
  fds = []
  if want_fds:
    header, fds, _, _ = socket.recv_fds(sock, _HEADER.size, want_fds)
    if not header:
      raise EOFError("the fork server's socket closed")
    header += _recv_exactly(sock, _HEADER.size - len(header))
  else:
    header = _recv_exactly(sock, _HEADER.size)
  (n,) = _HEADER.unpack(header)
  return json.loads(_recv_exactly(sock, n)), fds


def _plan(args, cwd, env, scan=True):  # pylint: disable=unused-argument
  """(argv, path0, filename, source) for a child, or (None, reason)."""
  if not args:
    return None, "no program"
  if args[0] == "-c" and len(args) >= 2:
    source = args[1].encode("utf-8", "surrogateescape")
    if scan and _WRITES_ENV.search(args[1]):
      return None, "the program sets environment variables"
    return (["-c"] + list(args[2:]), "", "<string>", source), None
  if args[0].startswith("-"):
    return None, "interpreter option or -m: " + args[0]
  path = os.path.join(cwd or os.getcwd(), args[0])
  try:
    with open(path, "rb") as f:
      source = f.read()
  except OSError as e:
    return None, "cannot read the script: {}".format(e)
  # As Python does: the directory of the script, links resolved.
  path0 = os.path.dirname(os.path.realpath(path))
  # The script and the modules beside it that it imports, transitively.
  todo, seen = [path], set()
  while todo and scan:
    current = todo.pop()
    if current in seen:
      continue
    seen.add(current)
    if len(seen) > _MAX_SCANNED:
      return None, "too many modules beside the script to check"
    try:
      with open(current, "rb") as f:
        text = f.read().decode("utf-8", "replace")
    except OSError:
      continue
    if _WRITES_ENV.search(text):
      return None, "{} sets environment variables".format(
          os.path.basename(current))
    for name in set(_IMPORTS.findall(text)):
      local = os.path.join(path0, *name.split("."))
      if os.path.isfile(local + ".py"):
        todo.append(local + ".py")
      elif os.path.isdir(local):
        for directory, dirs, names in os.walk(local):
          dirs[:] = [d for d in dirs if d != "__pycache__"]
          todo += [os.path.join(directory, n) for n in names
                   if n.endswith(".py")]
  return (list(args), path0, args[0], source), None


class _Server:
  """One server process: TensorFlow imported under one environment."""

  def __init__(self, env):
    parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    self._dir = tempfile.mkdtemp(prefix="cmp-forkserver-")
    self.proc = subprocess.Popen(
        [sys.executable, os.path.abspath(__file__), "--serve",
         str(child.fileno())],
        env=env, cwd=self._dir, stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, pass_fds=[child.fileno()])
    child.close()
    self.sock = parent
    try:
      hello, _ = _recv(self.sock)
    except (EOFError, OSError, ValueError) as e:
      hello = {"error": "the server died while starting: {}".format(e)}
    self.error = hello.get("error")
    self.modules = frozenset(hello.get("modules", ()))

  def shadowed(self, directory):
    """A module in `directory` named like one the server imported."""
    try:
      names = os.listdir(directory or ".")
    except OSError:
      return None
    for name in names:
      module = name[:-3] if name.endswith(".py") else name
      if module in self.modules:
        return name
    return None

  def run(self, request, fds, timeout, on_pid):
    _send(self.sock, request, fds)
    reply, _ = _recv(self.sock)
    if "error" in reply:
      raise OSError(reply["error"])
    on_pid(reply["pid"])
    return reply

  def close(self):
    try:
      self.sock.close()
      self.proc.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
      self.proc.kill()
    shutil.rmtree(self._dir, ignore_errors=True)


_SERVERS = {}


def _server_for(env):
  """The server for `env`'s import-time variables; None if it cannot start."""
  key = (sys.executable, _import_time_env(env))
  server = _SERVERS.pop(key, None)
  if server is None:
    if len(_SERVERS) >= _MAX_SERVERS:
      # The least recently used one (dicts keep insertion order).
      _SERVERS.pop(next(iter(_SERVERS))).close()
    server = _Server(env)
  _SERVERS[key] = server
  return None if server.error else server


def close_all():
  """Stops every server of this process (atexit does it too)."""
  while _SERVERS:
    _SERVERS.popitem()[1].close()


def _fd_for(spec, default_fd, to_close, pipes, name):
  """The descriptor a child gets for one stream, per subprocess's rules."""
  if spec is None:
    return default_fd
  if spec == subprocess.PIPE:
    r, w = os.pipe()
    pipes[name] = r
    to_close.append(w)
    return w
  if spec == subprocess.DEVNULL:
    fd = os.open(os.devnull, os.O_RDWR)
    to_close.append(fd)
    return fd
  if isinstance(spec, int):
    return spec
  return spec.fileno()


def _decode(data, text):
  if data is None or not text:
    return data
  # As subprocess's text mode: the locale's encoding, universal newlines.
  return data.decode(locale.getpreferredencoding(False)).replace(
      "\r\n", "\n").replace("\r", "\n")


def run_python(args, *, cwd=None, env=None, stdin=None, stdout=None,
               stderr=None, capture_output=False, text=False, timeout=None,
               check=False, mode="auto"):
  """`subprocess.run([sys.executable] + args, ...)`, forked where it may be.

  Args:
    args: the interpreter's arguments: a script and its arguments, or
      `-c CODE ...`; anything else runs in a fresh interpreter.
    cwd, env, stdin, stdout, stderr, capture_output, text, timeout, check:
      as for `subprocess.run` (stdin takes no `input`).
    mode: "auto" (fork where the rules above allow it), "fresh" (always a
      new interpreter: tests of import-time behaviour, signals, process
      trees) or "fork" (for tests of this module: fork even a program that
      sets environment variables).

  Returns:
    A `subprocess.CompletedProcess`.

  Raises:
    subprocess.TimeoutExpired, subprocess.CalledProcessError: as
      `subprocess.run` raises them.
  """
  args = list(args)
  env = dict(os.environ if env is None else env)
  if capture_output:
    stdout = stderr = subprocess.PIPE
  if mode not in ("auto", "fresh", "fork"):
    raise ValueError("`mode` must be 'auto', 'fresh' or 'fork'; got "
                     "{!r}.".format(mode))
  plan, server = None, None
  if enabled() and mode != "fresh":
    plan, why = _plan(args, cwd, env)
    if plan is None and mode == "fork" and why.endswith(
        "sets environment variables"):
      plan, _ = _plan(args, cwd, env, scan=False)
    if plan is not None:
      server = _server_for(env)
    if server is not None and server.shadowed(plan[1] or cwd):
      why = "a module beside it shadows a preloaded one"
      plan, server = None, None
  if server is None:
    if mode == "fork":
      raise AssertionError("could not fork {}: {}".format(
          args[:2], why if plan is None else "no server"))
    reason = ("asked for" if mode == "fresh" or not enabled() else
              why if plan is None else "no server for this environment")
    reason = reason.split(":")[0]
    if reason.endswith("sets environment variables"):
      reason = "the program sets environment variables"
    fresh_reasons[reason] = fresh_reasons.get(reason, 0) + 1
    stats["fresh"] += 1
    return subprocess.run([sys.executable] + args, cwd=cwd, env=env,
                          stdin=stdin, stdout=stdout, stderr=stderr,
                          text=text, timeout=timeout, check=check)
  stats["forked"] += 1
  argv, path0, filename, source = plan
  to_close, pipes = [], {}
  fds = [_fd_for(stdin, 0, to_close, {}, "stdin"),
         _fd_for(stdout, 1, to_close, pipes, "stdout")]
  if stderr == subprocess.STDOUT:
    fds.append(fds[1])
  else:
    fds.append(_fd_for(stderr, 2, to_close, pipes, "stderr"))
  request = {"argv": argv, "path0": path0, "filename": filename,
             "source": source.decode("latin-1"), "env": env,
             "cwd": os.path.abspath(cwd or os.getcwd()),
             "orig_argv": [sys.executable] + args}
  pid = []
  try:
    server.run(request, fds, timeout, pid.append)
  finally:
    for fd in to_close:
      os.close(fd)
  out = {name: b"" for name in pipes}
  deadline = None if timeout is None else time.monotonic() + timeout
  timed_out = False
  with selectors.DefaultSelector() as sel:
    for name, fd in pipes.items():
      sel.register(fd, selectors.EVENT_READ, name)
    while sel.get_map():
      wait = None if deadline is None else max(0, deadline - time.monotonic())
      ready = sel.select(wait)
      if not ready and deadline is not None and time.monotonic() >= deadline:
        timed_out = True
        os.kill(pid[0], signal.SIGKILL)
        deadline = None
        continue
      for key, _ in ready:
        chunk = os.read(key.fd, 65536)
        if chunk:
          out[key.data] += chunk
        else:
          sel.unregister(key.fd)
          os.close(key.fd)
  if not pipes and deadline is not None:
    server.sock.settimeout(max(0, deadline - time.monotonic()))
  try:
    reply, _ = _recv(server.sock)
  except socket.timeout:
    timed_out = True
    os.kill(pid[0], signal.SIGKILL)
    server.sock.settimeout(None)
    reply, _ = _recv(server.sock)
  server.sock.settimeout(None)
  returncode = os.waitstatus_to_exitcode(reply["status"])
  cmd = [sys.executable] + args
  output = _decode(out.get("stdout"), text)
  errors = _decode(out.get("stderr"), text)
  if timed_out:
    raise subprocess.TimeoutExpired(cmd, timeout, output, errors)
  if check and returncode:
    raise subprocess.CalledProcessError(returncode, cmd, output, errors)
  return subprocess.CompletedProcess(cmd, returncode, output, errors)


# ---------------------------------------------------------------------------
# The server side: `python forkserver.py --serve FD`.


def _threads():
  return len(os.listdir("/proc/self/task"))


def _capture_import():
  """Imports TensorFlow; returns what it wrote to fds 1 and 2."""
  saved = [os.dup(1), os.dup(2)]
  captured = [tempfile.TemporaryFile(), tempfile.TemporaryFile()]
  sys.stdout.flush()
  sys.stderr.flush()
  os.dup2(captured[0].fileno(), 1)
  os.dup2(captured[1].fileno(), 2)
  try:
    import tensorflow  # pylint: disable=g-import-not-at-top,unused-import  # noqa: F401
  finally:
    sys.stdout.flush()
    sys.stderr.flush()
    os.dup2(saved[0], 1)
    os.dup2(saved[1], 2)
    for fd in saved:
      os.close(fd)
  written = []
  for f in captured:
    f.seek(0)
    written.append(f.read().decode("latin-1"))
    f.close()
  return written


def _serve(sock):
  """Imports TensorFlow, then forks per request; returns only in a child."""
  # The server's own directory must not shadow anything a program imports.
  base_path = [p for p in sys.path[1:]]
  sys.path[:] = base_path
  threads_before = _threads()
  try:
    import numpy  # pylint: disable=g-import-not-at-top,unused-import  # noqa: F401
    threads_numpy = _threads()  # OpenBLAS's pool: fork-safe (atfork).
    written = _capture_import()
  except BaseException as e:  # pylint: disable=broad-except
    _send(sock, {"error": "importing TensorFlow failed: {!r}".format(e)})
    sys.exit(1)
  # TensorFlow's runtime (its thread pools, the eager context) starts at the
  # first op, never at import; a thread now would be copied half-alive.
  if _threads() > threads_numpy or threads_numpy > threads_before + 64:
    _send(sock, {"error": "threads were running after the import ({}); "
                          "forking is not safe".format(_threads())})
    sys.exit(1)
  keep = set(int(f) for f in os.listdir("/proc/self/fd"))
  _send(sock, {"ok": True, "modules": sorted(
      {m.split(".")[0] for m in sys.modules})})
  while True:
    try:
      request, fds = _recv(sock, want_fds=3)
    except (EOFError, ConnectionError):
      sys.exit(0)
    sys.stdout.flush()
    sys.stderr.flush()
    # Python 3.12+ warns about fork() with any OS thread alive, and
    # OpenBLAS's pool is one (it re-creates itself in the child). Filters
    # restored on leaving the block, in the child too.
    with warnings.catch_warnings():
      warnings.simplefilter("ignore", DeprecationWarning)
      pid = os.fork()
    if pid == 0:
      sock.close()
      request.update(fds=fds, keep=keep, base_path=base_path,
                     import_output=written)
      return request
    for fd in fds:
      os.close(fd)
    _send(sock, {"pid": pid})
    _, status = os.waitpid(pid, 0)
    _send(sock, {"status": status})


def _stdio(fd, write, old):
  """A new sys.std* over `fd`, made as Python makes them at start-up."""
  unbuffered = bool(os.environ.get("PYTHONUNBUFFERED"))
  raw = io.FileIO(fd, "wb" if write else "rb", closefd=False)
  if write and unbuffered:
    buffered = raw
  else:
    buffered = (io.BufferedWriter if write else io.BufferedReader)(raw)
  line = write and (fd == 2 or os.isatty(fd) or unbuffered)
  return io.TextIOWrapper(buffered, encoding=old.encoding, errors=old.errors,
                          line_buffering=line, write_through=unbuffered)


def _become(request):
  """In a forked child: turns this process into the requested program."""
  import builtins  # pylint: disable=g-import-not-at-top
  import importlib.machinery  # pylint: disable=g-import-not-at-top
  import random  # pylint: disable=g-import-not-at-top
  import types  # pylint: disable=g-import-not-at-top
  fds = request["fds"]
  for target, fd in enumerate(fds):
    os.dup2(fd, target, inheritable=True)
  for fd in set(fds) | (set(int(f) for f in os.listdir("/proc/self/fd"))
                        - request["keep"] - {0, 1, 2}):
    if fd > 2:
      try:
        os.close(fd)
      except OSError:
        pass
  os.chdir(request["cwd"])
  os.environ.clear()
  os.environ.update(request["env"])
  sys.stdin = sys.__stdin__ = _stdio(0, False, sys.stdin)
  sys.stdout = sys.__stdout__ = _stdio(1, True, sys.stdout)
  sys.stderr = sys.__stderr__ = _stdio(2, True, sys.stderr)
  filename = request["filename"]
  path = filename
  if filename != "<string>":
    # Python 3.9+ prefixes a script's path with the working directory
    # (`__file__`, tracebacks), without normalizing it;
    # sys.argv[0] keeps it as given.
    path = os.path.join(os.getcwd(), filename)
  source = request["source"].encode("latin-1")
  try:
    code = compile(source, path, "exec", dont_inherit=True)
  except (SyntaxError, ValueError):
    # A program that does not compile: its message is the interpreter's
    # own (Python 3.9's file tokenizer reports an unclosed bracket on the
    # line after the one `compile` names), so a fresh one gives it.
    argv = list(request["orig_argv"]) or [sys.executable] + sys.argv
    os.execve(sys.executable, [sys.executable] + argv[1:],
              dict(os.environ))
  out, err = request["import_output"]
  if out:
    sys.stdout.buffer.write(out.encode("latin-1"))
  if err:
    sys.stderr.buffer.write(err.encode("latin-1"))
  sys.argv = list(request["argv"])
  sys.orig_argv = list(request["orig_argv"])
  sys.path[:] = [request["path0"]] + request["base_path"]
  tempfile.tempdir = None
  random.seed()
  if "numpy" in sys.modules:
    sys.modules["numpy"].random.seed()
  sys.modules.pop("forkserver", None)
  # What the import registered to remove at exit (matplotlib's temporary
  # config directory, through Keras 3) is the server's, shared by every
  # child: the server removes it when it exits, no child does. A fresh
  # interpreter would have made and removed its own.
  atexit.unregister(shutil.rmtree)
  main = types.ModuleType("__main__")
  main.__dict__.update(__builtins__=builtins, __spec__=None,
                       __package__=None)
  if filename == "<string>":
    main.__loader__ = importlib.machinery.BuiltinImporter
  else:
    main.__file__ = path
    main.__cached__ = None
    main.__loader__ = importlib.machinery.SourceFileLoader("__main__", path)
  sys.modules["__main__"] = main
  try:
    exec(code, main.__dict__)  # pylint: disable=exec-used
  except SystemExit:
    raise
  except BaseException as e:  # pylint: disable=broad-except
    # As the interpreter prints it: from the program's first frame on.
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_globals is not main.__dict__:
      tb = tb.tb_next
    # The interpreter prints the exception's own __traceback__.
    sys.excepthook(type(e), e.with_traceback(tb), tb)
    if isinstance(e, KeyboardInterrupt):
      sys.stdout.flush()
      sys.stderr.flush()
      signal.signal(signal.SIGINT, signal.SIG_DFL)
      os.kill(os.getpid(), signal.SIGINT)
    raise SystemExit(1) from None


def _main():
  sock = socket.socket(fileno=int(sys.argv[2]))
  request = _serve(sock)
  _become(request)


if __name__ == "__main__" and sys.argv[1:2] == ["--serve"]:
  _main()
else:

  def _at_exit():
    close_all()
    path = os.environ.get("CMP_FORKSERVER_STATS")
    if path and (stats["forked"] or stats["fresh"]):
      with open(path, "a") as f:
        f.write(json.dumps(dict(stats, pid=os.getpid(),
                                fresh_reasons=fresh_reasons)) + "\n")

  atexit.register(_at_exit)
