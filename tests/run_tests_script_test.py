# SPDX-License-Identifier: Apache-2.0
"""scripts/run_tests.sh as a contributor meets it: non-root, behind a proxy.

The test command must pass for anyone whose tests pass. These tests run the
real script on a tiny copy of the repository: a matrix of one host
environment and one Debian chroot environment, and a stand-in for nox
(pre-installed where the script caches nox) that records what it is asked
to run and writes the summary lines nox's sessions write. No suite runs.

- As a non-root user (`setpriv`, when the test runs as root, as CI does),
  the chroot environment and `bazel` are skipped with the reason and the
  command that enables them, and the run exits 0; named with `--env`, or
  under CI=true, they fail instead.
- Ctrl-C prints the summary so far, and leaves no temporary file.
- scripts/extra_setup_tf215.sh removes Horovod's build tree on Ctrl-C.
- uv, which ignores pip.conf, installs from a private index behind a
  custom CA when pip's configuration names them (scripts/uv_env.py).
"""

import hashlib
import http.server
import json
import os
import pathlib
import runpy
import shutil
import signal
import ssl
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
import zipfile

from absl.testing import absltest

_REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_NOBODY = 65534


def _ctrl_c_reaches_it():
  """In the child: SIGINT's default action, as in a terminal.

  A job started in the background of a non-interactive shell (`cmd &`, as
  a CI runner may start the suite, and as scripts/chroot_env.sh runs it)
  inherits SIGINT ignored, and a shell cannot trap a signal ignored on
  entry: without this, these tests would test the runner, not the script.
  """
  signal.signal(signal.SIGINT, signal.SIG_DFL)
  # Nor blocked: a test before this one in the same worker may have left
  # it in the thread's mask, which a child inherits across exec.
  signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])


def _as_unprivileged():
  """The command prefix that drops root; none for a non-root user."""
  if os.getuid() != 0:
    return []
  return ["setpriv", "--reuid={}".format(_NOBODY),
          "--regid={}".format(_NOBODY), "--clear-groups", "--inh-caps=-all",
          "--bounding-set=-all"]


def _unprivileged_python():
  """(path, "X.Y") of a Python the unprivileged user can run.

  A virtualenv under root's home is not one, nor is a base interpreter
  there (pyenv's); the system's is. scripts/ci_matrix.py needs tomllib
  (3.11+) or tomli (the Python 3.9 chroot's virtualenv, in /opt).
  """
  candidates = [sys.executable, os.path.realpath(sys.executable),
                "/usr/bin/python3", "/usr/local/bin/python3"]
  for python in candidates:
    # Through a shell: setpriv's own exec still passes a path check that
    # the user's later ones fail.
    proc = subprocess.run(
        _as_unprivileged() + ["/bin/sh", "-c", 'exec "$0" "$@"', python,
                              "-c", "import sys\n"
                              "try:\n import tomllib\n"
                              "except ImportError:\n import tomli\n"
                              "print('%d.%d' % sys.version_info[:2])"],
        capture_output=True, text=True, check=False, cwd="/")
    if proc.returncode == 0:
      return python, proc.stdout.strip()
  raise AssertionError("no Python that uid {} can run among {}".format(
      _NOBODY, candidates))


_PYTHON, _PY = _unprivileged_python()
_OTHER_PY = "3.9" if _PY != "3.9" else "3.13"

# Stands in for `python -m nox`: it runs each environment of CMP_ENVS,
# writing the line noxfile.py's sessions write; under Ctrl-C it writes the
# interrupted session's line and dies of the signal, as nox does.
_FAKE_NOX = textwrap.dedent("""\
    import json, os, sys, time
    with open(os.environ["FAKE_NOX_RECORD"], "a") as f:
      f.write(json.dumps({"argv": sys.argv[1:],
                          "CMP_ENVS": os.environ.get("CMP_ENVS"),
                          "CMP_QUICK": os.environ.get("CMP_QUICK")}) + "\\n")
    for name in os.environ.get("CMP_ENVS", "all").split(","):
      status = "PASS (1 passed)"
      try:
        if os.environ.get("FAKE_NOX_STARTED"):
          open(os.environ["FAKE_NOX_STARTED"], "w").close()
          time.sleep(120)
      except KeyboardInterrupt:
        status = "INTERRUPTED (pytest did not finish)"
        raise
      finally:
        with open(os.environ["CMP_SUMMARY_FILE"], "a") as f:
          f.write("{} (fake): {} [0s]\\n".format(name, status))
    """)


def _make_readable(path):
  """Opens `path` (a test's temporary directory) to the unprivileged user.

  Links are left alone: `chmod` follows them, and those under `bin/` lead
  to the machine's own tools, which are neither this test's to change nor,
  for a user without root, changeable.
  """
  for directory, _, files in os.walk(path):
    os.chmod(directory, 0o777)
    for name in files:
      p = os.path.join(directory, name)
      if not os.path.islink(p):
        os.chmod(p, os.stat(p).st_mode | 0o755)


def _path_without(tools, root):
  """A PATH of this machine's tools less `tools` (links under `root`)."""
  os.makedirs(root)
  for directory in ("/usr/local/bin", "/usr/bin", "/bin", "/usr/sbin",
                    "/sbin"):
    if not os.path.isdir(directory):
      continue
    for name in os.listdir(directory):
      link = os.path.join(root, name)
      if name not in tools and not os.path.lexists(link):
        os.symlink(os.path.join(directory, name), link)
  return root


def _wait_for(path, proc, timeout=60):
  """Waits until `proc` has made `path`; fails if it ends or times out."""
  deadline = time.monotonic() + timeout
  while not os.path.exists(path):
    if proc.poll() is not None:
      raise AssertionError("ended early (exit status {}): {}".format(
          proc.returncode, proc.communicate()))
    if time.monotonic() > deadline:
      proc.kill()
      raise AssertionError("{} not made in {} s: {}".format(
          path, timeout, proc.communicate()))
    time.sleep(0.05)


class RunTestsScriptTest(absltest.TestCase):
  """The real scripts/run_tests.sh on a two-environment matrix."""

  def setUp(self):
    super().setUp()
    self.tmp = tempfile.mkdtemp(prefix="run-tests-script-")
    self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
    repo = self.repo = os.path.join(self.tmp, "repo")
    for rel in ("scripts/run_tests.sh", "scripts/ci_matrix.py",
                "requirements/nox.txt", "noxfile.py"):
      os.makedirs(os.path.dirname(os.path.join(repo, rel)), exist_ok=True)
      shutil.copy(os.path.join(_REPO, rel), os.path.join(repo, rel))
    with open(os.path.join(repo, "requirements", "environments.toml"),
              "w") as f:
      f.write(textwrap.dedent("""\
          python = "{py}"
          bazel_env = "host"
          bazel_suite = "core"
          [suites.full]
          description = "every test file"
          [suites.core]
          description = "some"
          exclude = []
          [env.host]
          suite = "core"
          [env.other]
          suite = "full"
          python = "{other}"
          debian = "trixie"
          """).format(py=_PY, other=_OTHER_PY))
    for name in ("host", "other"):
      with open(os.path.join(repo, "requirements", name + ".txt"), "w") as f:
        f.write("tensorflow-cpu==2.21.0\n")
    # The stand-in nox, where run_tests.sh keeps nox's virtualenv.
    self.cache = os.path.join(self.tmp, "cache")
    version = subprocess.run(
        [_PYTHON, "-c", "import sys; print(sys.version)"],
        capture_output=True, check=True).stdout
    with open(os.path.join(repo, "requirements", "nox.txt"), "rb") as f:
      key = hashlib.sha256(f.read() + version).hexdigest()[:12]
    venv = os.path.join(self.cache, "venvs", "nox-" + key)
    os.makedirs(os.path.join(venv, "bin"))
    with open(os.path.join(venv, "fake_nox.py"), "w") as f:
      f.write(_FAKE_NOX)
    with open(os.path.join(venv, "bin", "python"), "w") as f:
      f.write('#!/bin/sh\nexec "{}" "{}" "$@"\n'.format(
          _PYTHON, os.path.join(venv, "fake_nox.py")))
    open(os.path.join(venv, ".complete"), "w").close()
    self.record = os.path.join(self.tmp, "record.jsonl")
    self.scratch = os.path.join(self.tmp, "scratch")
    os.makedirs(self.scratch)
    # A machine without bazel and debootstrap.
    self.path = _path_without({"bazel", "debootstrap"},
                              os.path.join(self.tmp, "bin"))
    _make_readable(self.tmp)

  def _env(self, **extra):
    env = {"PATH": self.path, "HOME": self.cache, "LANG": "C.UTF-8",
           "PYTHON": _PYTHON, "CMP_CACHE_DIR": self.cache,
           "TMPDIR": self.scratch, "FAKE_NOX_RECORD": self.record}
    env.update(extra)
    return env

  def _start(self, args, **extra):
    return subprocess.Popen(
        _as_unprivileged() + [os.path.join(self.repo, "scripts",
                                           "run_tests.sh")] + args,
        env=self._env(**extra), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        start_new_session=True,
        preexec_fn=_ctrl_c_reaches_it)

  def _run(self, args, **extra):
    proc = self._start(args, **extra)
    out, err = proc.communicate(timeout=120)
    return proc.returncode, out, err

  def _nox_calls(self):
    if not os.path.exists(self.record):
      return []
    with open(self.record) as f:
      return [json.loads(line)["CMP_ENVS"] for line in f]

  def _skip_line(self, word):
    return (
        "other (TF 2.21.0, Python {}, full suite): {} (needs root: it builds "
        "and enters a Debian trixie chroot for Python {} (debootstrap, mount "
        "and chroot need root); this is uid {}; to run it: sudo "
        "scripts/run_tests.sh --env other)".format(
            _OTHER_PY, word, _OTHER_PY,
            _NOBODY if os.getuid() == 0 else os.getuid()))

  def _bazel_line(self, word):
    return ("bazel (TF 2.21.0 from requirements/host.txt): {} (`bazel` is "
            "not installed; to run it: ".format(word))

  def test_non_root_run_passes_and_names_what_it_skipped(self):
    rc, out, err = self._run([])
    self.assertEqual(rc, 0, msg=out + err)
    # nox ran only what this machine can run.
    self.assertEqual(self._nox_calls(), ["host"])
    summary = out.split("==== contrib_mixed_precision test summary ====\n",
                        1)[1].splitlines()
    self.assertEqual(summary[0], "host (fake): PASS (1 passed) [0s]")
    self.assertEqual(summary[1], self._skip_line("SKIP"))
    self.assertStartsWith(summary[2], self._bazel_line("SKIP"))
    self.assertLen(summary, 3)
    # Said before the run too, not only at its end.
    self.assertIn("[run_tests] " + self._skip_line("SKIP"), err)

  def test_environment_named_with_env_fails_instead(self):
    rc, out, err = self._run(["--env", "other,host"])
    self.assertEqual(rc, 1, msg=out + err)
    self.assertEqual(self._nox_calls(), ["host"])
    self.assertIn(self._skip_line("FAIL"), out.splitlines())

  def test_ci_skips_nothing(self):
    rc, out, err = self._run([], CI="true")
    self.assertEqual(rc, 1, msg=out + err)
    self.assertEqual(self._nox_calls(), ["host"])
    lines = out.splitlines()
    self.assertIn(self._skip_line("FAIL"), lines)
    self.assertTrue([l for l in lines if l.startswith(
        self._bazel_line("FAIL"))], msg=out)
    self.assertNotIn("SKIP", out)

  def test_plan_installs_nothing_and_says_what_would_run(self):
    shutil.rmtree(os.path.join(self.cache, "venvs"))
    rc, out, err = self._run(["--plan"])
    self.assertEqual(rc, 0, msg=out + err)
    lines = out.splitlines()
    self.assertEqual(lines[0], "host (TF 2.21.0, core suite): run")
    self.assertEqual(lines[1], self._skip_line("SKIP"))
    self.assertStartsWith(lines[2], self._bazel_line("SKIP"))
    self.assertFalse(os.path.exists(os.path.join(self.cache, "venvs")))
    rc, out, _ = self._run(["--plan", "--env", "other"])
    self.assertEqual((rc, out.splitlines()), (1, [self._skip_line("FAIL")]))

  def test_quick_runs_the_newest_release_alone(self):
    rc, out, err = self._run(["--quick"])
    self.assertEqual(rc, 0, msg=out + err)
    with open(self.record) as f:
      calls = [json.loads(line) for line in f]
    self.assertEqual([(c["CMP_ENVS"], c["CMP_QUICK"]) for c in calls],
                     [("host", "1")])
    self.assertNotIn("other", out)  # Nothing else is run, or skipped.
    rc, out, _ = self._run(["--quick", "--plan"])
    self.assertEqual((rc, out), (0, "host (TF 2.21.0, core suite: --quick): "
                                    "run\n"))
    rc, _, err = self._run(["--quick", "--env", "other"])
    self.assertEqual(rc, 2)
    self.assertIn("leave out --env", err)

  def test_unknown_environment_is_a_usage_error(self):
    rc, _, err = self._run(["--env", "host,tf299"])
    self.assertEqual(rc, 2)
    self.assertIn("unknown environment(s) tf299; choose from host, other, "
                  "bazel", err)
    self.assertEqual(self._nox_calls(), [])

  def test_ctrl_c_prints_the_summary_so_far_and_cleans_up(self):
    started = os.path.join(self.tmp, "started")
    proc = self._start([], FAKE_NOX_STARTED=started)
    _wait_for(started, proc)
    # As a terminal's Ctrl-C: to the whole foreground process group.
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    self.assertEqual(proc.returncode, 130, msg=out + err)
    summary = out.split("==== contrib_mixed_precision test summary ====\n",
                        1)[1].splitlines()
    self.assertEqual(summary[0],
                     "host (fake): INTERRUPTED (pytest did not finish) [0s]")
    self.assertEqual(summary[1], self._skip_line("SKIP"))
    self.assertEqual(summary[-1], "==== interrupted (Ctrl-C) ====")
    # Its temporary directory (the summary file) is gone.
    self.assertEqual(os.listdir(self.scratch), [])


class ExtraSetupInterruptTest(absltest.TestCase):
  """scripts/extra_setup_tf215.sh, stopped while Horovod builds."""

  def test_ctrl_c_removes_the_build_tree(self):
    tmp = tempfile.mkdtemp(prefix="extra-setup-test-")
    self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
    venv = os.path.join(tmp, "venv")
    site = os.path.join(venv, "lib", "python3.11", "site-packages")
    os.makedirs(os.path.join(site, "tensorflow_cpu-2.15.1.dist-info"))
    os.makedirs(os.path.join(venv, "bin"))
    started = os.path.join(tmp, "started")
    # pip's wheel build: a build tree under TMPDIR, then minutes of work.
    with open(os.path.join(venv, "bin", "python"), "w") as f:
      f.write(textwrap.dedent("""\
          #!/bin/bash
          if [[ "$*" == *" wheel "* ]]; then
            build="$(mktemp -d "${{TMPDIR:-/tmp}}/pip-wheel-XXXX")"
            head -c 100000 /dev/zero > "$build/horovod.o"
            touch "{}"
            sleep 120
          fi
          """).format(started))
    os.chmod(os.path.join(venv, "bin", "python"), 0o755)
    scratch = os.path.join(tmp, "scratch")
    os.makedirs(scratch)
    # cmake, g++ and make, so that it does not install them.
    tools = os.path.join(tmp, "tools")
    os.makedirs(tools)
    for tool in ("cmake", "g++", "make"):
      with open(os.path.join(tools, tool), "w") as f:
        f.write("#!/bin/sh\nexit 0\n")
      os.chmod(os.path.join(tools, tool), 0o755)
    env = dict(os.environ, TMPDIR=scratch,
               CMP_CACHE_DIR=os.path.join(tmp, "cache"),
               PATH=tools + os.pathsep + os.environ["PATH"])
    env.pop("CMP_SKIP_HOROVOD", None)
    proc = subprocess.Popen(
        ["bash", os.path.join(_REPO, "scripts", "extra_setup_tf215.sh"),
         venv], env=env, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=_ctrl_c_reaches_it)
    _wait_for(started, proc)
    os.killpg(proc.pid, signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    self.assertNotEqual(proc.returncode, 0, msg=out + err)
    self.assertEqual(os.listdir(scratch), [], msg=err)


class ExtraSetupWithoutRootTest(absltest.TestCase):
  """scripts/extra_setup_tf215.sh for a user without root or build tools."""

  def _run(self, ci):
    tmp = tempfile.mkdtemp(prefix="extra-setup-noroot-")
    self.addCleanup(shutil.rmtree, tmp, ignore_errors=True)
    venv = os.path.join(tmp, "venv")
    site = os.path.join(venv, "lib", "python3.11", "site-packages")
    os.makedirs(os.path.join(site, "tensorflow_cpu-2.15.1.dist-info"))
    os.makedirs(os.path.join(venv, "bin"))
    with open(os.path.join(venv, "bin", "python"), "w") as f:
      f.write("#!/bin/sh\nexit 0\n")
    os.chmod(os.path.join(venv, "bin", "python"), 0o755)
    # A PATH with what the script needs and no cmake, g++ or make; no
    # install_system_deps.sh run can succeed without root either.
    tools = os.path.join(tmp, "tools")
    os.makedirs(tools)
    for tool in ("ls", "basename", "dirname", "uname", "mkdir", "flock",
                 "id", "rm", "tr", "head", "cat", "mktemp", "bash"):
      found = shutil.which(tool)
      if found:
        os.symlink(found, os.path.join(tools, tool))
    # The scripts run from a copy: the user may not be able to read the
    # tree they came from (Bazel's runfiles live under root's home).
    scripts = os.path.join(tmp, "repo", "scripts")
    os.makedirs(scripts)
    for name in ("extra_setup_tf215.sh", "install_system_deps.sh"):
      shutil.copy(os.path.join(_REPO, "scripts", name), scripts)
      os.chmod(os.path.join(scripts, name), 0o755)
    for root, dirs, _ in os.walk(tmp):
      for d in dirs:
        os.chmod(os.path.join(root, d), 0o777)
    os.chmod(tmp, 0o777)
    env = dict(os.environ, PATH=tools, CMP_CACHE_DIR=os.path.join(tmp, "c"),
               CI=ci, HOME=tmp)
    env.pop("CMP_SKIP_HOROVOD", None)
    drop = _as_unprivileged()
    if drop:  # Found on this PATH; the script's has no setpriv.
      drop[0] = shutil.which(drop[0])
    proc = subprocess.run(
        drop + [shutil.which("bash"),
                os.path.join(scripts, "extra_setup_tf215.sh"), venv],
        env=env, stdin=subprocess.DEVNULL, capture_output=True, text=True,
        check=False, timeout=120, cwd="/")
    marker = os.path.join(venv, ".horovod-unavailable")
    reason = open(marker).read() if os.path.exists(marker) else None
    return proc, reason

  def test_skips_with_the_reason_and_the_command(self):
    proc, reason = self._run(ci="")
    self.assertEqual(proc.returncode, 0, msg=proc.stderr)
    self.assertIn("SKIP", proc.stderr)
    self.assertIsNotNone(reason, msg=proc.stderr)
    self.assertIn("cmake g++ make not found", reason)
    self.assertIn("sudo scripts/install_system_deps.sh", reason)

  def test_under_ci_it_does_not_skip(self):
    proc, reason = self._run(ci="true")
    self.assertNotEqual(proc.returncode, 0, msg=proc.stderr)
    self.assertIsNone(reason)
    # It failed where it should: installing the build tools, which needs
    # root (here, apt-get is not even on PATH).
    self.assertIn("running scripts/install_system_deps.sh", proc.stderr)
    self.assertRegex(proc.stderr, r"install these by hand: .*cmake g\+\+ make")


def _wheel(directory, name, version, value):
  """Writes a one-module wheel; returns its file name."""
  filename = "{}-{}-py3-none-any.whl".format(name, version)
  info = "{}-{}.dist-info".format(name, version)
  files = {
      "{}.py".format(name): "VALUE = {!r}\n".format(value),
      info + "/METADATA": "Metadata-Version: 2.1\nName: {}\nVersion: {}\n"
                          .format(name, version),
      info + "/WHEEL": "Wheel-Version: 1.0\nGenerator: test\n"
                       "Root-Is-Purelib: true\nTag: py3-none-any\n",
  }
  files[info + "/RECORD"] = "".join(
      "{},,\n".format(p) for p in list(files) + [info + "/RECORD"])
  with zipfile.ZipFile(os.path.join(directory, filename), "w") as z:
    for path, text in files.items():
      z.writestr(path, text)
  return filename


def _openssl(*args, cwd):
  subprocess.run(["openssl"] + list(args), cwd=cwd, check=True,
                 capture_output=True)


class UvBehindCustomCaTest(absltest.TestCase):
  """uv with pip's index and certificate: a private index behind a CA."""

  @classmethod
  def setUpClass(cls):
    super().setUpClass()
    cls.tmp = tempfile.mkdtemp(prefix="uv-ca-test-")
    tmp = cls.tmp
    # A CA of our own, and the server's certificate signed by it.
    # A configuration of its own: with the system's, OpenSSL 1.1 (Debian
    # bullseye, the Python 3.9 chroot) adds its v3_ca basicConstraints
    # beside an `-addext` one, and uv rejects a certificate with the
    # extension twice ("No valid certificates found").
    with open(os.path.join(tmp, "ca.cnf"), "w") as f:
      f.write("[req]\ndistinguished_name = dn\nx509_extensions = v3_ca\n"
              "prompt = no\n[dn]\nCN = test private CA\n[v3_ca]\n"
              "basicConstraints = critical,CA:TRUE\n"
              "keyUsage = critical,keyCertSign,cRLSign\n"
              "subjectKeyIdentifier = hash\n")
    _openssl("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2",
             "-config", "ca.cnf", "-keyout", "ca.key", "-out", "ca.pem",
             cwd=tmp)
    _openssl("req", "-newkey", "rsa:2048", "-nodes", "-subj",
             "/CN=localhost", "-keyout", "server.key", "-out", "server.csr",
             cwd=tmp)
    with open(os.path.join(tmp, "ext.cnf"), "w") as f:
      f.write("subjectAltName=DNS:localhost,IP:127.0.0.1\n"
              "extendedKeyUsage=serverAuth\n")
    _openssl("x509", "-req", "-in", "server.csr", "-CA", "ca.pem",
             "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
             "-extfile", "ext.cnf", "-out", "server.pem", cwd=tmp)
    # A PEP 503 index with one package.
    root = os.path.join(tmp, "www")
    os.makedirs(os.path.join(root, "simple", "cmp-tiny"))
    os.makedirs(os.path.join(root, "files"))
    wheel = _wheel(os.path.join(root, "files"), "cmp_tiny", "1.0", 42)
    with open(os.path.join(root, "files", wheel), "rb") as f:
      digest = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(root, "simple", "index.html"), "w") as f:
      f.write('<html><body><a href="cmp-tiny/">cmp-tiny</a></body></html>')
    with open(os.path.join(root, "simple", "cmp-tiny", "index.html"),
              "w") as f:
      f.write('<html><body><a href="../../files/{0}#sha256={1}">{0}</a>'
              '</body></html>'.format(wheel, digest))

    class Handler(http.server.SimpleHTTPRequestHandler):

      def __init__(self, *args, **kwargs):
        super().__init__(*args, directory=root, **kwargs)

      def log_message(self, *args):
        pass

    cls.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(os.path.join(tmp, "server.pem"),
                            os.path.join(tmp, "server.key"))
    cls.server.socket = context.wrap_socket(cls.server.socket,
                                            server_side=True)
    cls.thread = threading.Thread(target=cls.server.serve_forever,
                                  daemon=True)
    cls.thread.start()
    cls.index = "https://localhost:{}/simple".format(
        cls.server.server_address[1])

  @classmethod
  def tearDownClass(cls):
    cls.server.shutdown()
    cls.server.server_close()
    shutil.rmtree(cls.tmp, ignore_errors=True)
    super().tearDownClass()

  def _base_env(self, work):
    """This machine's environment less every certificate and index hint."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PIP_", "UV_", "SSL_", "REQUESTS_CA",
                                "CURL_CA", "HTTP", "NO_PROXY", "no_proxy",
                                "http"))}
    with open(os.path.join(work, "pip.conf"), "w") as f:
      f.write("[global]\nindex-url = {}\ncert = {}\n".format(
          self.index, os.path.join(self.tmp, "ca.pem")))
    env["PIP_CONFIG_FILE"] = os.path.join(work, "pip.conf")
    env["UV_CACHE_DIR"] = os.path.join(work, "uv-cache")
    return env

  def _uv_install(self, env, work):
    import uv  # pylint: disable=g-import-not-at-top
    target = os.path.join(work, "target")
    with open(os.path.join(work, "lock.txt"), "w") as f:
      f.write("cmp-tiny==1.0\n")
    proc = subprocess.run(
        [uv.find_uv_bin(), "pip", "install", "--no-deps", "--target", target,
         "-r", os.path.join(work, "lock.txt")],
        env=env, capture_output=True, text=True, timeout=120, check=False)
    return proc, os.path.join(target, "cmp_tiny.py")

  def test_uv_installs_from_pips_index_with_pips_certificate(self):
    work = tempfile.mkdtemp(dir=self.tmp)
    env = self._base_env(work)
    uv_env = runpy.run_path(os.path.join(_REPO, "scripts", "uv_env.py"))
    # As noxfile.py does: pip's own view of its configuration.
    config = uv_env["pip_config"](sys.executable, env)
    self.assertEqual(config["index-url"], self.index)
    added = uv_env["uv_environment"](config, env)
    self.assertEqual(added["UV_DEFAULT_INDEX"], self.index)
    self.assertEqual(added["SSL_CERT_FILE"],
                     os.path.join(self.tmp, "ca.pem"))
    proc, module = self._uv_install(dict(env, **added), work)
    self.assertEqual(proc.returncode, 0, msg=proc.stderr)
    self.assertEqual(pathlib.Path(module).read_text(), "VALUE = 42\n")

  def test_uv_alone_does_not_see_pips_configuration(self):
    # What the issue saw: uv ignores pip.conf, so this test is needed.
    work = tempfile.mkdtemp(dir=self.tmp)
    env = self._base_env(work)
    proc, module = self._uv_install(
        dict(env, UV_DEFAULT_INDEX=self.index), work)
    self.assertNotEqual(proc.returncode, 0)
    self.assertFalse(os.path.exists(module))


class UvEnvTest(absltest.TestCase):
  """scripts/uv_env.py's reading of pip's settings."""

  def setUp(self):
    super().setUp()
    self.uv_env = runpy.run_path(os.path.join(_REPO, "scripts", "uv_env.py"))

  def test_later_sections_win_as_for_pip_install(self):
    config = self.uv_env["parse_pip_config"](textwrap.dedent("""\
        global.index-url='https://a.example/simple'
        install.index-url='https://b.example/simple'
        global.trusted-host='a.example'
        :env:.cert='/etc/env.pem'
        global.cert='/etc/file.pem'
        global.extra-index-url='https://c.example/simple file:///nonexistent/simple'
        """))
    self.assertEqual(config["index-url"], "https://b.example/simple")
    self.assertEqual(config["cert"], "/etc/env.pem")
    env = self.uv_env["uv_environment"](
        config, {"UV_INSECURE_HOST": "mine", "SSL_CERT_FILE": "/etc/x.pem"})
    self.assertEqual(env, {
        "UV_SYSTEM_CERTS": "1",
        "UV_DEFAULT_INDEX": "https://b.example/simple",
        # The missing local index is dropped, as pip ignores it.
        "UV_INDEX": "https://c.example/simple",
        "UV_INDEX_STRATEGY": "unsafe-best-match",
        # pip's certificate wins over the machine's: it is what works.
        "SSL_CERT_FILE": "/etc/env.pem",
    })

  def test_testing_page_names_the_variables(self):
    with open(os.path.join(_REPO, "docs", "testing.md"),
              encoding="utf-8") as f:
      page = f.read()
    for name in ("uv", "UV_DEFAULT_INDEX", "UV_INDEX", "SSL_CERT_FILE",
                 "UV_SYSTEM_CERTS", "scripts/uv_env.py", "CMP_SKIP_HOROVOD"):
      self.assertTrue(name in page, msg="docs/testing.md does not name " + name)


if __name__ == "__main__":
  absltest.main()
